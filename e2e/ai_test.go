package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// fakeOpenAI is an OpenAI-compatible chat-completions server for the built
// binary: the first request gets a streamed tool call, the second a streamed
// answer that quotes the tool result the client sent back, so the test sees
// that the real capability ran on the live session.
type fakeOpenAI struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []map[string]any
	auth []string
}

func newFakeOpenAI(t *testing.T, toolName, toolArgs string) *fakeOpenAI {
	return newFakeOpenAICalls(t, [2]string{toolName, toolArgs})
}

// newFakeOpenAICalls is newFakeOpenAI whose first response makes several
// tool calls (name, arguments) at once.
func newFakeOpenAICalls(t *testing.T, calls ...[2]string) *fakeOpenAI {
	f := &fakeOpenAI{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"no such path"}}`, 404)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, 400)
			return
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		n := len(f.reqs)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta string) {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"fake\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n", delta)
			w.(http.Flusher).Flush()
		}
		if n == 1 {
			var list []string
			for i, c := range calls {
				args, _ := json.Marshal(c[1])
				list = append(list, fmt.Sprintf(`{"index":%d,"id":"call_%d","type":"function","function":{"name":%q,"arguments":%s}}`, i, i+1, c[0], args))
			}
			chunk(`{"role":"assistant","tool_calls":[` + strings.Join(list, ",") + `]}`)
		} else {
			// Quote the tool message the client sent back.
			msgs, _ := req["messages"].([]any)
			last, _ := msgs[len(msgs)-1].(map[string]any)
			content, _ := json.Marshal(fmt.Sprintf("The tool said: %v", last["content"]))
			chunk(fmt.Sprintf(`{"role":"assistant","content":%s}`, content))
		}
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"fake\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":7,\"total_tokens\":107}}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOpenAI) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.reqs...)
}

func TestPTYAskAboutLiveSession(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "get_repr", `{"expr":"prices"}`)
	home := t.TempDir()
	s := startREPLNoWait(t, home, []string{
		"OPENAI_BASE_URL=" + fake.srv.URL + "/v1",
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
	cmd.Env = append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.srv.URL+"/v1", "OPENAI_API_KEY=k")
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(text string) {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", text)
			w.(http.Flusher).Flush()
		}
		chunk("first half, ")
		<-release
		chunk("second half.")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	s := startREPLNoWait(t, t.TempDir(), []string{
		"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=sk-x", "PYAICHAT_MODEL=fake",
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
// one line says the question was cancelled.
func TestPTYCancelWhileAnswerStreams(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", "first line\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the rest never comes
	}))
	t.Cleanup(srv.Close)
	s := startREPLNoWait(t, t.TempDir(), []string{
		"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=sk-x", "PYAICHAT_MODEL=fake",
	})
	s.ExpectString("py> ")
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
}
