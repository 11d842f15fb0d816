package e2e

import (
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// fakeOpenAI is the shared fake model (agent/fakemodel) as these tests
// script it: the first request gets a streamed tool call, every later one
// a streamed answer that quotes the tool result the client sent back, so
// the test sees that the real capability ran on the live session.
type fakeOpenAI struct{ *fakemodel.Server }

func newFakeOpenAI(t *testing.T, toolName, toolArgs string) *fakeOpenAI {
	return newFakeOpenAICalls(t, [2]string{toolName, toolArgs})
}

// newFakeOpenAICalls is newFakeOpenAI whose first response makes several
// tool calls (name, arguments) at once.
func newFakeOpenAICalls(t *testing.T, calls ...[2]string) *fakeOpenAI {
	first := fakemodel.Reply{Usage: fakeUsage}
	for _, c := range calls {
		first.Calls = append(first.Calls, fakemodel.Call{Name: c[0], Args: c[1]})
	}
	var answered atomic.Bool
	return &fakeOpenAI{fakemodel.NewFunc(t, func(r fakemodel.Request) fakemodel.Reply {
		if !answered.Swap(true) {
			return first
		}
		return fakemodel.Reply{Pieces: []string{"The tool said: " + r.Last().Content}, Usage: fakeUsage}
	})}
}

// fakeUsage is the usage the fake models report.
var fakeUsage = &fakemodel.Usage{Prompt: 100, Completion: 7}

// requests are the bodies of the chat requests received, decoded.
func (f *fakeOpenAI) requests() []map[string]any { return bodies(f.Server) }

func bodies(s *fakemodel.Server) []map[string]any {
	var out []map[string]any
	for _, r := range s.Requests() {
		out = append(out, r.JSON())
	}
	return out
}

func TestPTYAskAboutLiveSession(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "get_repr", `{"expr":"prices"}`)
	home := t.TempDir()
	s := startREPLNoWait(t, home, []string{
		"OPENAI_BASE_URL=" + fake.URL,
		"OPENAI_API_KEY=sk-e2e-secret-key",
		"PYAICHAT_MODEL=fake-model",
	})
	s.ExpectString("py> ")
	typeLine(t, s, "prices = {'apple': 1.25, 'pear': 2.5}", "")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "what is in prices?")
	s.ExpectString("The tool said: ")
	s.ExpectString("'apple': 1.25")
	// The summary line names the call made and the tokens used.
	s.ExpectString("get_repr")
	s.ExpectString("ai> ")

	reqs := fake.requests()
	if len(reqs) != 2 {
		t.Fatalf("the fake server saw %d requests, want 2", len(reqs))
	}
	if reqs[0]["model"] != "fake-model" {
		t.Errorf("model %v, want fake-model", reqs[0]["model"])
	}
	tools, _ := reqs[0]["tools"].([]any)
	if len(tools) != 7 {
		t.Errorf("first request offers %d tools, want the 7 capabilities", len(tools))
	}
	if out := s.Output(); strings.Contains(out, "sk-e2e-secret-key") {
		t.Errorf("the API key reached the terminal")
	}

	// The session is untouched and py> still works after the question.
	s.Send("\t")
	s.ExpectString("py> ")
	typeLine(t, s, "sorted(prices)", "['apple', 'pear']")
	s.Send("\x04")
	assertExit(t, s, 0)
}

func TestOneShotQuestion(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "eval_expr", `{"expr":"len(words)"}`)
	home := t.TempDir()
	cmd := exec.Command(binary, "-p", "how many words?", "-c", "words = 'a b c'.split()")
	cmd.Env = append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=k")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat -p: %v\nstderr: %s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "The tool said: ") || !strings.Contains(stdout.String(), `"repr": "3"`) &&
		!strings.Contains(stdout.String(), `"repr":"3"`) {
		t.Errorf("stdout %q does not carry the tool's real result (3)", stdout.String())
	}
}

func TestOneShotUnconfigured(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "-p", "hello?")
	cmd.Env = testEnv(t.TempDir(), "")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("pyaichat -p with nothing configured exited 0: %s", out)
	}
	if !strings.Contains(string(out), "OPENAI_API_KEY") {
		t.Errorf("message %q does not say what to set", out)
	}
}

// Keys typed while an answer streams wait for the next prompt instead of
// being echoed into the answer.
func TestPTYTypingWhileAnswerStreams(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := fakemodel.New(t, fakemodel.Reply{Pieces: []string{"first half, ", "second half."}, Pause: 1, Resume: release})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	s := startREPLNoWait(t, t.TempDir(), []string{
		"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=sk-x", "PYAICHAT_MODEL=fake",
	})
	s.ExpectString("py> ")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "a question")
	s.ExpectString("first half, ")
	s.Send("typed ahead")
	s.Settle(200 * time.Millisecond) // the keys are in the terminal by now
	close(release)
	s.ExpectString("second half.")
	s.ExpectCursorLine("ai> typed ahead")
	if !strings.Contains(s.Output(), "first half, second half.") {
		t.Errorf("the answer was interrupted by the keys typed meanwhile:\n%s", s.Dump())
	}
}

// Ctrl-C while an answer streams: the key shows as ^C on a line of its own
// (the terminal does not echo during the answer; pyaichat shows it), then
// one line says the question was cancelled. It does so too when the user's
// code ignores SIGINT: at ai> the signal is pyaichat's.
func TestPTYCancelWhileAnswerStreams(t *testing.T) {
	t.Parallel()
	for name, setup := range map[string]string{
		"default":        "",
		"SIGINT ignored": "import signal; _ = signal.signal(signal.SIGINT, signal.SIG_IGN)",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The rest never comes: the answer stops after its first piece.
			srv := fakemodel.New(t, fakemodel.Reply{Pieces: []string{"first line\n", "never"}, Pause: 1})
			s := startREPLNoWait(t, t.TempDir(), []string{
				"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=sk-x", "PYAICHAT_MODEL=fake",
			})
			s.ExpectString("py> ")
			if setup != "" {
				typeLine(t, s, setup, "")
			}
			s.Send("\t")
			s.ExpectString("ai> ")
			enter(s, "a question")
			s.ExpectString("first line\r\n")
			s.Send(ptytest.CtrlC)
			s.ExpectString("(cancelled)\r\n")
			s.ExpectString("ai> ")
			if out := s.Output(); !strings.Contains(out, "first line\r\n^C\r\n(cancelled)\r\n") {
				t.Errorf("want the answer, ^C, then (cancelled), each on its own line:\n%s", s.Dump())
			}
		})
	}
}
