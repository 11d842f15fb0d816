package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// askMarker is a value only the session holds: whether it reaches the
// provider shows whether the tool result did.
const askMarker = "plum-orchard-" + "7731"

const askQuestion = "send this to the model? [y/N] "

// writeConfig writes pyaichat's config file under home.
func writeConfig(t *testing.T, home, text string) {
	t.Helper()
	dir := filepath.Join(home, ".config", "pyaichat")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// toolMessages is the content of every tool message the fake server
// received, in order.
func toolMessages(fake *fakeOpenAI) []string {
	var out []string
	for _, req := range fake.requests() {
		msgs, _ := req["messages"].([]any)
		for _, m := range msgs {
			if m, _ := m.(map[string]any); m["role"] == "tool" {
				s, _ := m["content"].(string)
				out = append(out, s)
			}
		}
	}
	return out
}

// askAtPrompt starts pyaichat with share = "ask", sets a variable holding
// askMarker at py>, asks at ai> a question whose scripted model calls
// get_repr on it, and waits for pyaichat to show the result and ask
// whether to send it.
func askAtPrompt(t *testing.T) (*ptytest.Proc, *fakeOpenAI) {
	t.Helper()
	fake := newFakeOpenAI(t, "get_repr", `{"expr":"note"}`)
	home := t.TempDir()
	writeConfig(t, home, "share = \"ask\"\n")
	s := startREPLNoWait(t, home, []string{
		"OPENAI_BASE_URL=" + fake.URL,
		"OPENAI_API_KEY=sk-e2e-secret-key",
		"PYAICHAT_MODEL=fake-model",
	})
	s.ExpectString("py> ")
	typeLine(t, s, "note = '"+askMarker+"'", "")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "what is in note?")
	s.ExpectString(`tool result of get_repr {"expr":"note"}:`)
	s.ExpectString(askMarker)
	s.ExpectString(askQuestion)
	if n := len(fake.requests()); n != 1 {
		t.Fatalf("%d requests before the user answered, want 1", n)
	}
	return s, fake
}

// y sends the result: the next request carries it, and the answer (which
// quotes it) follows; the summary line counts it as sent.
func TestPTYAskSendsWhatTheUserAccepts(t *testing.T) {
	t.Parallel()
	s, fake := askAtPrompt(t)
	s.Send("y")
	s.ExpectString("y\r\n")
	s.ExpectString("The tool said: ")
	s.ExpectString(askMarker)
	s.ExpectString("1 sent, 0 declined")
	s.ExpectString("ai> ")
	tools := toolMessages(fake)
	if len(tools) != 1 || !strings.Contains(tools[0], askMarker) {
		t.Errorf("the tool result sent is %q, want the repr of note", tools)
	}
	// The automatic py> context, where the line that set note is, is not
	// sent under ask: the marker is in the tool message only.
	if sent := sentText(t, fake); strings.Count(sent, askMarker) != 1 {
		t.Errorf("the marker was sent %d times, want once (the tool result):\n%s", strings.Count(sent, askMarker), sent)
	}
	enter(s, "/privacy")
	s.ExpectString(`share = "ask"`)
	s.ExpectString("last question: nothing was redacted; of its tool results you sent 1 and declined 0")
	s.ExpectString("ai> ")
	s.Send("\x04")
	assertExit(t, s, 0)
}

// n (or any key but y) declines: the next request carries the Declined
// error instead, the model still answers, and the value never leaves.
func TestPTYAskDeclines(t *testing.T) {
	t.Parallel()
	s, fake := askAtPrompt(t)
	s.Send("n")
	s.ExpectString("n\r\n")
	s.ExpectString("The tool said: ")
	s.ExpectString("Declined")
	s.ExpectString("0 sent, 1 declined")
	s.ExpectString("ai> ")
	tools := toolMessages(fake)
	if len(tools) != 1 || !strings.Contains(tools[0], `"type":"Declined"`) {
		t.Errorf("the tool result sent is %q, want the Declined error", tools)
	}
	if sent := sentText(t, fake); strings.Contains(sent, askMarker) {
		t.Errorf("a declined value reached the provider:\n%s", sent)
	}
	s.Send("\x04")
	assertExit(t, s, 0)
}

// Ctrl-C at the question cancels the question as during an answer:
// (cancelled), nothing more is sent, the prompt comes back, and the next
// line works.
func TestPTYAskCtrlC(t *testing.T) {
	t.Parallel()
	s, fake := askAtPrompt(t)
	s.Send(ptytest.CtrlC)
	s.ExpectString("(cancelled)\r\n")
	s.ExpectString("ai> ")
	if out := s.Output(); !strings.Contains(out, askQuestion+"^C\r\n\x1b[2m[1 call: get_repr(note)") {
		t.Errorf("want the question, ^C, then the summary on a line of its own:\n%s", s.Dump())
	}
	if n := len(fake.requests()); n != 1 {
		t.Errorf("%d requests after Ctrl-C at the question, want 1", n)
	}
	s.Send("\t")
	s.ExpectString("py> ")
	typeLine(t, s, "note.upper()", "'"+strings.ToUpper(askMarker)+"'")
	if sent := sentText(t, fake); strings.Contains(sent, askMarker) {
		t.Errorf("the value reached the provider after Ctrl-C:\n%s", sent)
	}
	s.Send("\x04")
	assertExit(t, s, 0)
}

// pyaichat -p with standard input not a terminal has no one to ask: it
// does not wait, sends no tool result, says so once on stderr, and the
// model still answers.
func TestOneShotAskWithoutTerminal(t *testing.T) {
	t.Parallel()
	// Two calls, so that "once" is tested.
	fake := newFakeOpenAICalls(t, [2]string{"get_repr", `{"expr":"note"}`}, [2]string{"eval_expr", `{"expr":"note * 2"}`})
	home := t.TempDir()
	writeConfig(t, home, "share = \"ask\"\n")
	// A hang detector, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "-p", "what is in note?", "-c", "note = '"+askMarker+"'")
	cmd.Env = append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=k")
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat -p: %v (context: %v)\nstderr: %s", err, ctx.Err(), stderr.String())
	}
	const line = `pyaichat: share = "ask" needs a terminal to ask on; tool results were not sent`
	if n := strings.Count(stderr.String(), line); n != 1 {
		t.Errorf("stderr has the line %d times, want once:\n%s", n, stderr.String())
	}
	if strings.Contains(stderr.String(), askQuestion) {
		t.Errorf("pyaichat asked with no terminal to answer on:\n%s", stderr.String())
	}
	if sent := sentText(t, fake); strings.Contains(sent, askMarker) {
		t.Errorf("a tool result value reached the provider:\n%s", sent)
	}
	tools := toolMessages(fake)
	if len(tools) != 2 || !strings.Contains(tools[0], `"type":"Declined"`) || !strings.Contains(tools[1], `"type":"Declined"`) {
		t.Errorf("the tool results sent are %q, want two Declined errors", tools)
	}
	if !strings.Contains(stderr.String(), "0 sent, 2 declined") {
		t.Errorf("the summary line does not count the declined results:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "The tool said: ") {
		t.Errorf("no answer on stdout: %q", stdout.String())
	}
}

// pyaichat -p on a terminal asks there (on stderr: stdout is the
// answer's), and sends what the user accepts.
func TestPTYOneShotAsks(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "get_repr", `{"expr":"note"}`)
	home := t.TempDir()
	writeConfig(t, home, "share = \"ask\"\n")
	s := startREPLNoWait(t, home, []string{"OPENAI_BASE_URL=" + fake.URL, "OPENAI_API_KEY=k"},
		"-p", "what is in note?", "-c", "note = '"+askMarker+"'")
	s.ExpectString(`tool result of get_repr {"expr":"note"}:`)
	s.ExpectString(askQuestion)
	s.Send("Y")
	s.ExpectString("y\r\n")
	s.ExpectString("The tool said: ")
	s.ExpectString(askMarker)
	assertExit(t, s, 0)
	if tools := toolMessages(fake); len(tools) != 1 || !strings.Contains(tools[0], askMarker) {
		t.Errorf("the tool result sent is %q, want the repr of note", tools)
	}
}
