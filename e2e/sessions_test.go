package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
)

// chatFake answers every question with one tool call, get_repr of the
// expression named by the question's last word, and every request that
// carries the tool's result with "Answer N" (N counting answers), and
// usage; so each question makes exactly one call.
type chatFake struct{ *fakemodel.Server }

func newChatFake(t *testing.T) *chatFake {
	var mu sync.Mutex
	reqs, n := 0, 0
	return &chatFake{fakemodel.NewFunc(t, func(r fakemodel.Request) fakemodel.Reply {
		mu.Lock()
		defer mu.Unlock()
		reqs++
		last := r.Last()
		if last.Role == "user" {
			words := strings.Fields(strings.TrimSuffix(last.Content, "?"))
			call := fakemodel.Call{ID: fmt.Sprintf("call_%d", reqs), Name: "get_repr", Args: fmt.Sprintf(`{"expr":%q}`, words[len(words)-1])}
			return fakemodel.Reply{Calls: []fakemodel.Call{call}, Usage: fakeUsage}
		}
		n++
		return fakemodel.Reply{Pieces: []string{fmt.Sprintf("Answer %d", n)}, Usage: fakeUsage}
	})}
}

func (f *chatFake) requests() []map[string]any { return bodies(f.Server) }

func (f *chatFake) env() []string {
	return []string{"OPENAI_BASE_URL=" + f.URL, "OPENAI_API_KEY=" + sessionKey, "PYAICHAT_MODEL=fake-model"}
}

const sessionKey = "sk-e2e-session-key-0123456789"

func sessionsDirOf(home string) string {
	return filepath.Join(home, ".local", "state", "pyaichat", "sessions")
}

// logsOf reads every session log under home, oldest first.
func logsOf(t *testing.T, home string) [][]map[string]any {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(sessionsDirOf(home), "*.jsonl"))
	var out [][]map[string]any
	for _, p := range paths {
		var recs []map[string]any
		for _, line := range strings.Split(strings.TrimSuffix(readFile(t, p), "\n"), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%s: a line that is not JSON: %q", p, line)
			}
			recs = append(recs, m)
		}
		out = append(out, recs)
	}
	return out
}

// pyaichatCmd runs the binary with home's environment and returns its
// stdout, stderr and exit status.
func pyaichatCmd(t *testing.T, home string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(testEnv(home, ""), env...)
	cmd.Dir = home
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	status := 0
	if errors.As(err, &ee) {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), status
}

// mustOK runs pyaichat and fails the test unless it exits 0.
func mustOK(t *testing.T, home string, args ...string) string {
	t.Helper()
	out, errOut, status := pyaichatCmd(t, home, nil, args...)
	if status != 0 {
		t.Fatalf("pyaichat %s: status %d\n%s%s", strings.Join(args, " "), status, out, errOut)
	}
	return out
}

// A session with py> lines (a block, an error) and two questions with a
// tool call each is logged as exactly those events, the key nowhere;
// sessions, sessions show and sessions export read it back, and /save
// writes it from inside the session.
func TestPTYSessionLog(t *testing.T) {
	t.Parallel()
	fake := newChatFake(t)
	home := t.TempDir()
	s := startREPLNoWait(t, home, fake.env())
	s.ExpectString("py> ")
	typeLine(t, s, "x = [1, 2, 3]", "")
	enter(s, "1/0")
	s.ExpectString("ZeroDivisionError: division by zero")
	s.ExpectString("py> ")
	enter(s, "def f():")
	s.ExpectString("... ")
	enter(s, "    return 42")
	s.ExpectString("... ")
	typeLine(t, s, "", "")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "what is x?")
	s.ExpectString("Answer 1")
	s.ExpectString("ai> ")
	enter(s, "and what is f?")
	s.ExpectString("Answer 2")
	s.ExpectString("ai> ")
	enter(s, "/help")
	s.ExpectString("/save FILE")
	s.ExpectString("ai> ")
	saved := filepath.Join(home, "saved.md")
	enter(s, "/save "+saved)
	s.ExpectString("saved this session to " + saved)
	s.ExpectString("ai> ")
	s.Send("\x04")
	assertExit(t, s, 0)

	logs := logsOf(t, home)
	if len(logs) != 1 {
		t.Fatalf("%d session logs, want 1", len(logs))
	}
	var got []string
	for _, r := range logs[0] {
		e := r["ev"].(string)
		switch e {
		case "py":
			e += fmt.Sprintf("(%v %v %v)", r["src"], r["status"], r["exc"])
		case "question", "answer":
			e += fmt.Sprintf("(%v)", r["text"])
		case "tool_call":
			e += fmt.Sprintf("(%v %v)", r["tool"], r["args"])
		case "tool_result":
			e += fmt.Sprintf("(%v)", r["tool"])
		case "usage":
			e += fmt.Sprintf("(%v %v)", r["tokens_in"], r["tokens_out"])
		case "end":
			e += fmt.Sprintf("(%v)", r["code"])
		}
		got = append(got, e)
		if _, ok := r["t"].(string); !ok {
			t.Errorf("record without a time: %v", r)
		}
	}
	want := []string{
		"start",
		"py(x = [1, 2, 3] ok <nil>)",
		"py(1/0 error ZeroDivisionError)",
		"py(def f():\n    return 42 ok <nil>)",
		"question(what is x?)", `tool_call(get_repr {"expr":"x"})`, "tool_result(get_repr)", "answer(Answer 1)", "usage(200 14)",
		"question(and what is f?)", `tool_call(get_repr {"expr":"f"})`, "tool_result(get_repr)", "answer(Answer 2)", "usage(200 14)",
		"end(0)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	start := logs[0][0]
	if start["model"] != "fake-model" || start["cwd"] != home || !strings.HasPrefix(start["python"].(string), "3.") {
		t.Errorf("start record %v", start)
	}
	// The result logged is the one the model saw.
	if res := logs[0][6]["result"].(string); !strings.Contains(res, "[1, 2, 3]") || !strings.Contains(sentTextOf(fake), res) {
		t.Errorf("logged result %q is not what was sent", res)
	}
	paths, _ := filepath.Glob(filepath.Join(sessionsDirOf(home), "*.jsonl"))
	data := readFile(t, paths[0])
	if strings.Contains(data, sessionKey) {
		t.Errorf("the API key is in the log")
	}
	if st, _ := os.Stat(paths[0]); st.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", st.Mode().Perm())
	}
	if st, _ := os.Stat(sessionsDirOf(home)); st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", st.Mode().Perm())
	}

	id := start["id"].(string)
	list := mustOK(t, home, "sessions")
	if !strings.Contains(list, id) || !strings.Contains(list, "what is x?") || !strings.Contains(list, "fake-model") {
		t.Errorf("sessions:\n%s", list)
	}
	show := mustOK(t, home, "sessions", "show", id[:len(id)-2])
	for _, w := range []string{"py> x = [1, 2, 3]\n", "py> 1/0\n    [raised ZeroDivisionError]\n", "py> def f():\n...     return 42\n",
		"ai> what is x?\n    [call get_repr {\"expr\":\"x\"}]\n", "Answer 2\n", "[session ended with status 0"} {
		if !strings.Contains(show, w) {
			t.Errorf("sessions show lacks %q:\n%s", w, show)
		}
	}
	nb := filepath.Join(home, "s.ipynb")
	mustOK(t, home, "sessions", "export", id, nb)
	validateNotebook(t, nb, "code,code,code,markdown,markdown,markdown,markdown")
	if md := readFile(t, saved); !strings.Contains(md, "```python\nx = [1, 2, 3]\n```") || !strings.Contains(md, "> **ai>** and what is f?") {
		t.Errorf("/save wrote:\n%s", md)
	}
}

// validateNotebook checks a notebook with Debian's nbformat (a missing
// module fails: scripts/deps.sh installs python3-nbformat) and its cell
// types.
func validateNotebook(t *testing.T, path, cells string) {
	t.Helper()
	check := "import nbformat, sys; nb = nbformat.read(sys.argv[1], as_version=4); nbformat.validate(nb); print(','.join(c.cell_type for c in nb.cells))"
	out, err := exec.Command("/usr/bin/python3", "-c", check, path).CombinedOutput()
	if err != nil {
		t.Fatalf("nbformat: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) != cells {
		t.Errorf("cells %s, want %s", out, cells)
	}
}

// toolMessagesOf is the content of each tool message of a request.
func toolMessagesOf(req map[string]any) []string {
	var out []string
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		if m := m.(map[string]any); m["role"] == "tool" {
			out = append(out, m["content"].(string))
		}
	}
	return out
}

func sentTextOf(f *chatFake) string {
	b, _ := json.Marshal(f.requests())
	var s string
	for _, r := range f.requests() {
		msgs, _ := r["messages"].([]any)
		for _, m := range msgs {
			m, _ := m.(map[string]any)
			c, _ := m["content"].(string)
			s += c + "\n"
		}
	}
	return s + string(b)
}

// kill -9 in the middle of a session leaves a log that sessions and
// sessions show read, up to the last whole line.
func TestPTYSessionLogSurvivesKill(t *testing.T) {
	t.Parallel()
	fake := newChatFake(t)
	home := t.TempDir()
	s := startREPLNoWait(t, home, fake.env())
	s.ExpectString("py> ")
	typeLine(t, s, "k = 'kept'", "")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "what is k?")
	s.ExpectString("Answer 1")
	s.ExpectString("ai> ")
	syscall.Kill(s.Pid(), syscall.SIGKILL)
	s.ExpectSignaled()

	paths, _ := filepath.Glob(filepath.Join(sessionsDirOf(home), "*.jsonl"))
	if len(paths) != 1 {
		t.Fatalf("%d logs", len(paths))
	}
	// What a kill during a write leaves: half a line.
	f, _ := os.OpenFile(paths[0], os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"t":"2026-11-25T16:00:00Z","ev":"py","src":"hal`)
	f.Close()
	list := mustOK(t, home, "sessions")
	if !strings.Contains(list, "what is k?") || !strings.Contains(list, "*") {
		t.Errorf("sessions after kill -9:\n%s", list)
	}
	show := mustOK(t, home, "sessions", "show", strings.TrimSuffix(filepath.Base(paths[0]), ".jsonl"))
	if !strings.Contains(show, "py> k = 'kept'") || !strings.Contains(show, "Answer 1") || strings.Contains(show, "hal") {
		t.Errorf("sessions show after kill -9:\n%s", show)
	}
}

// --no-log and log = false write no session log.
func TestPTYNoLog(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		config string
		args   []string
	}{{"", []string{"--no-log"}}, {"log = false\n", nil}} {
		home := t.TempDir()
		if c.config != "" {
			writeConfig(t, home, c.config)
		}
		s := startREPLNoWait(t, home, nil, c.args...)
		s.ExpectString("py> ")
		typeLine(t, s, "1 + 1", "2")
		s.Send("\x04")
		assertExit(t, s, 0)
		if paths, _ := filepath.Glob(filepath.Join(sessionsDirOf(home), "*.jsonl")); len(paths) != 0 {
			t.Errorf("%q %v: logs %v", c.config, c.args, paths)
		}
	}
}

// -p --json prints one object: the answer, the tool call with its
// arguments and result, usage and model.
func TestOneShotJSON(t *testing.T) {
	t.Parallel()
	fake := newChatFake(t)
	home := t.TempDir()
	out, errOut, status := pyaichatCmd(t, home, fake.env(), "-p", "what is n?", "--json", "-c", "n = 12345")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	var r struct {
		Model, Question, Answer string
		ToolCalls               []struct{ ID, Name, Arguments, Result string } `json:"tool_calls"`
		Usage                   *struct{ PromptTokens, CompletionTokens int }
		Error                   *struct{ Kind, Message string }
		Status                  int
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("stdout is not one JSON object (%v):\n%s", err, out)
	}
	if r.Model != "fake-model" || r.Question != "what is n?" || r.Answer != "Answer 1" || r.Error != nil || r.Status != 0 {
		t.Errorf("result %+v", r)
	}
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "get_repr" || r.ToolCalls[0].Arguments != `{"expr":"n"}` || !strings.Contains(r.ToolCalls[0].Result, "12345") {
		t.Errorf("tool calls %+v", r.ToolCalls)
	}
	var usage map[string]any
	json.Unmarshal([]byte(out), &usage)
	if u, _ := usage["usage"].(map[string]any); u["prompt_tokens"] != 200.0 || u["completion_tokens"] != 14.0 {
		t.Errorf("usage %v", usage["usage"])
	}
	if paths, _ := filepath.Glob(filepath.Join(sessionsDirOf(home), "*.jsonl")); len(paths) != 0 {
		t.Errorf("-p wrote a session log: %v", paths)
	}
}

// --json-stream prints each event as a JSON line as it happens, then the
// result.
func TestOneShotJSONStream(t *testing.T) {
	t.Parallel()
	fake := newChatFake(t)
	out, errOut, status := pyaichatCmd(t, t.TempDir(), fake.env(), "-p", "what is n?", "--json-stream", "-c", "n = 7")
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	var kinds []string
	var last map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a line that is not JSON: %q", sc.Text())
		}
		kinds = append(kinds, m["event"].(string))
		last = m
	}
	if got, want := strings.Join(kinds, ","), "question,tool_call,tool_result,text,answer,usage,result"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if last["answer"] != "Answer 1" || last["status"] != 0.0 {
		t.Errorf("result line %v", last)
	}
}

// Each failure of -p --json has its kind and exit status: no key (2), a
// server error (1), the loop's bound (1), a bad config file (2), Ctrl-C
// (130).
func TestOneShotJSONFailures(t *testing.T) {
	t.Parallel()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"the server broke"}}`, http.StatusInternalServerError)
	}))
	defer failing.Close()
	var step int
	var mu sync.Mutex
	looping := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		step++
		n := step
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		args, _ := json.Marshal(fmt.Sprintf(`{"expr":"%d"}`, n))
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"c%d\",\"type\":\"function\",\"function\":{\"name\":\"get_type\",\"arguments\":%s}}]},\"finish_reason\":null}]}\n\ndata: [DONE]\n\n", n, args)
	}))
	defer looping.Close()
	arrived := make(chan struct{}, 1)
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server sees the client leave
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer hanging.Close()

	home := t.TempDir()
	check := func(name, out string, status, wantStatus int, wantKind string) {
		t.Helper()
		var r struct {
			Error  *struct{ Kind, Message string }
			Status int
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Errorf("%s: stdout is not JSON: %q", name, out)
			return
		}
		if status != wantStatus || r.Status != wantStatus || r.Error == nil || r.Error.Kind != wantKind || r.Error.Message == "" {
			t.Errorf("%s: exit %d, result %+v; want %d and %s", name, status, r, wantStatus, wantKind)
		}
	}
	out, _, status := pyaichatCmd(t, t.TempDir(), nil, "-p", "q", "--json")
	check("no key", out, status, 2, "not_configured")
	out, _, status = pyaichatCmd(t, t.TempDir(), []string{"OPENAI_BASE_URL=" + failing.URL + "/v1", "OPENAI_API_KEY=k"}, "-p", "q", "--json")
	check("500", out, status, 1, "failed")
	out, _, status = pyaichatCmd(t, t.TempDir(), []string{"OPENAI_BASE_URL=" + looping.URL + "/v1", "OPENAI_API_KEY=k"}, "-p", "q", "--json")
	check("loop bound", out, status, 1, "bound")
	writeConfig(t, home, "shar = 1\n")
	out, _, status = pyaichatCmd(t, home, nil, "-p", "q", "--json")
	check("a bad config file", out, status, 2, "config")

	cmd := exec.Command(binary, "-p", "q", "--json")
	cmd.Env = append(testEnv(t.TempDir(), ""), "OPENAI_BASE_URL="+hanging.URL+"/v1", "OPENAI_API_KEY=k")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-arrived
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	errors.As(err, &ee)
	status = 0
	if ee != nil {
		status = ee.ExitCode()
	}
	check("Ctrl-C", stdout.String(), status, 130, "cancelled")
}

// --continue restores the latest session's conversation (the next
// request carries its question, the tool call the model made for it and
// the result it saw, in the wire form they were sent) and replays its
// inputs that ran, only after y; with n nothing runs.
func TestPTYContinue(t *testing.T) {
	t.Parallel()
	fake := newChatFake(t)
	home := t.TempDir()
	s := startREPLNoWait(t, home, fake.env())
	s.ExpectString("py> ")
	typeLine(t, s, "a = 41", "")
	enter(s, "1/0")
	s.ExpectString("ZeroDivisionError")
	s.ExpectString("py> ")
	typeLine(t, s, "b = a + 1", "")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "remember the plum orchard a?")
	s.ExpectString("Answer 1")
	s.ExpectString("ai> ")
	s.Send("\x04")
	assertExit(t, s, 0)

	// n: shown, not run.
	firstResult := toolMessagesOf(fake.requests()[1])
	s = startREPLNoWait(t, home, fake.env(), "--continue")
	// Wider than the terminal's 100 columns: broken at a space.
	s.ExpectString("1 question and its answer restored, with 1 tool call (results\r\nas they were then)")
	s.ExpectString("  a = 41\r\n  b = a + 1\r\n")
	s.ExpectString("run them again now? [y/N] ")
	s.Send("n")
	s.ExpectString("not run")
	s.ExpectString("py> ")
	enter(s, "b")
	s.ExpectString("NameError")
	s.ExpectString("py> ")
	s.Send("\x04")
	assertExit(t, s, 0)

	// y: run in order; the next question carries the earlier one. The
	// first session by id (a prefix of it): the latest, the one above,
	// has no inputs that ran.
	first := logsOf(t, home)[0][0]["id"].(string)
	s = startREPLNoWait(t, home, fake.env(), "--resume", first[:len(first)-1])
	s.ExpectString("run them again now? [y/N] ")
	s.Send("y")
	s.ExpectString("ran 2 inputs again")
	s.ExpectString("py> ")
	typeLine(t, s, "b", "42")
	before := len(fake.requests())
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "what is b?")
	s.ExpectString("Answer 2")
	s.ExpectString("ai> ")
	s.Send("\x04")
	assertExit(t, s, 0)
	req := fake.requests()[before]
	msgs, _ := req["messages"].([]any)
	var roles []string
	var texts []string
	for _, m := range msgs {
		m := m.(map[string]any)
		roles = append(roles, m["role"].(string))
		c, _ := m["content"].(string)
		texts = append(texts, c)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool,assistant,user" || texts[1] != "remember the plum orchard a?" || texts[4] != "Answer 1" {
		t.Fatalf("the request after resuming: roles %v, texts %q", roles, texts)
	}
	// The call as the model made it, and the result as it saw it.
	call, _ := json.Marshal(msgs[2].(map[string]any)["tool_calls"])
	if string(call) != `[{"function":{"arguments":"{\"expr\":\"a\"}","name":"get_repr"},"id":"call_1","type":"function"}]` {
		t.Errorf("the restored tool call: %s", call)
	}
	if tool := msgs[3].(map[string]any); tool["tool_call_id"] != "call_1" || len(firstResult) != 1 || tool["content"] != firstResult[0] || !strings.Contains(texts[3], "41") {
		t.Errorf("the restored tool result %v, the one sent then %q", tool, firstResult)
	}
	if !strings.Contains(texts[0], "restored from an earlier pyaichat session that has ended") {
		t.Errorf("the system prompt does not say so: %q", texts[0])
	}

	// --continue now resumes the session that resumed the first: both
	// conversations come back, and its own inputs are offered.
	s = startREPLNoWait(t, home, fake.env(), "--continue")
	s.ExpectString("2 questions and their answers restored")
	s.ExpectString("(3):")
	s.ExpectString("run them again now? [y/N] ")
	s.Send("n")
	s.ExpectString("py> ")
	before = len(fake.requests())
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "and a?")
	s.ExpectString("Answer 3")
	s.ExpectString("ai> ")
	s.Send("\x04")
	assertExit(t, s, 0)
	sent, _ := json.Marshal(fake.requests()[before]["messages"])
	if !strings.Contains(string(sent), "remember the plum orchard a?") || !strings.Contains(string(sent), "what is b?") {
		t.Errorf("the request after --continue lacks the earlier questions: %s", sent)
	}
}
