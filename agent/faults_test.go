package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/view"
)

func TestRetriesTransientFailures(t *testing.T) {
	cases := []struct {
		name   string
		step   fakemodel.Reply
		notice string
	}{
		{"408", raw(408, "application/json", `{"error":{"message":"request timeout"}}`), "request timeout (HTTP 408"},
		{"409", raw(409, "application/json", `{"error":{"message":"conflict"}}`), "conflict (HTTP 409"},
		{"429", raw(429, "application/json", `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`), "Rate limit reached (HTTP 429"},
		{"500", raw(500, "text/plain", "internal error"), "internal error (HTTP 500"},
		{"502 html", raw(502, "text/html", "<html>bad gateway</html>"), "(HTTP 502"},
		{"503 error string", raw(503, "application/json", `{"error":"overloaded"}`), "overloaded (HTTP 503"},
		{"529 anthropic", raw(529, "application/json", `{"error":{"code":"overloaded_error","message":"Overloaded"}}`), "Overloaded (HTTP 529"},
		{"openrouter 429 fixture", fixtureStep(t, "openrouter-error-429-upstream-rate-limited.json", 429),
			"Provider returned error: google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, c.step, c.step, textReply("recovered"))
			s := NewConversation(f.config(), &fakeTools{}, nil)
			out := newSyncBuffer()
			if err := s.Handle(context.Background(), "q", out); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			got := out.String()
			if n := len(f.requests()); n != 3 {
				t.Errorf("%d attempts, want 3", n)
			}
			if !strings.Contains(got, c.notice) || strings.Count(got, "retrying in") != 2 || !strings.Contains(got, "attempt 3 of 3") {
				t.Errorf("the waits are not shown: %q", got)
			}
			if !strings.Contains(got, "recovered") {
				t.Errorf("answer missing: %q", got)
			}
		})
	}
}

// fixtureDir holds the responses captured from real providers, kept with
// the provider package that parses them.
const fixtureDir = "llm/testdata/openai-wire"

func fixtureStep(t *testing.T, name string, status int) fakemodel.Reply {
	body, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return raw(status, "application/json", string(body))
}

func TestGivesUpAfterRetries(t *testing.T) {
	step := raw(503, "application/json", `{"error":{"message":"The server is overloaded"}}`)
	f := newFake(t, step, step, step)
	s := NewConversation(f.config(), &fakeTools{}, nil)
	err := s.Handle(context.Background(), "q", newSyncBuffer())
	if err == nil || err.Error() != "The server is overloaded (HTTP 503 from "+f.url()+")" {
		t.Fatalf("err = %v", err)
	}
	if len(f.requests()) != 3 {
		t.Errorf("%d attempts, want 3", len(f.requests()))
	}
}

func TestRetryAfterIsHonouredUpToACap(t *testing.T) {
	// Retry-After: 1 (a second) is above the 30 ms cap, so the wait shown
	// is the cap, not the 1-5 ms backoff: the header was read and bounded.
	f := newFake(t,
		raw(429, "application/json", `{"error":{"message":"slow down"}}`, "Retry-After", "1"),
		raw(429, "application/json", `{"error":{"message":"slow down"}}`, "Retry-After-Ms", "20"),
		textReply("ok"))
	s := NewConversation(f.config(), &fakeTools{}, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "q", out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "retrying in 30ms") || !strings.Contains(got, "retrying in 20ms") {
		t.Errorf("waits shown: %q", got)
	}
}

func TestNeverRetried(t *testing.T) {
	cases := []struct {
		name string
		step fakemodel.Reply
		want string
	}{
		{"400 fixture", fixtureStep(t, "openai-error-400-unsupported-value.json", 400),
			"Unsupported value: 'messages[0].role' does not support 'system' with this model. (HTTP 400 from {url})"},
		{"401", raw(401, "application/json", `{"error":{"message":"Incorrect API key provided: sk-test-S3****6789.","type":"invalid_request_error","code":"invalid_api_key"}}`),
			"API key rejected by {url} (HTTP 401); check OPENAI_API_KEY"},
		{"403", raw(403, "application/json", `{"error":{"message":"Project does not have access to model","code":"model_not_found"}}`),
			"access denied by {url} (HTTP 403): Project does not have access to model"},
		{"404 fixture", fixtureStep(t, "openai-error-404-model-not-found.json", 404),
			`model "test-model" not found at {url} (set PYAICHAT_MODEL or use /model NAME)`},
		{"404 ollama", raw(404, "application/json", `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error"}}`),
			`model "test-model" not found at {url}`},
		{"404 wrong path", raw(404, "text/plain", "404 page not found"),
			"{url} has no chat completions endpoint (HTTP 404: 404 page not found); check OPENAI_BASE_URL"},
		{"429 insufficient_quota", raw(429, "application/json", `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}`),
			"You exceeded your current quota. (HTTP 429 from {url})"},
		{"400 gemini array", raw(400, "application/json", `[{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}]`),
			"Invalid JSON payload received. (HTTP 400 from {url})"},
		{"400 vllm unwrapped", raw(400, "application/json", `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`),
			"This model's maximum context length is 4096 tokens. (HTTP 400 from {url})"},
		{"422 fastapi", raw(422, "application/json", `{"detail":"messages: field required"}`),
			"messages: field required (HTTP 422 from {url})"},
		{"groq 400 fixture", fixtureStep(t, "groq-error-400-tool-use-failed.json", 400),
			"Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := askFailing(t, c.want, c.step)
			if strings.Contains(a.err.Error(), "\n") {
				t.Errorf("not one line: %q", a.err)
			}
			if len(a.server.requests()) != 1 {
				t.Errorf("retried: %d attempts", len(a.server.requests()))
			}
			if strings.Contains(a.notices, "retrying") {
				t.Errorf("announced a retry: %q", a.notices)
			}
			if len(a.session.History()) != 0 {
				t.Errorf("a failed question stays in the conversation: %+v", a.session.History())
			}
		})
	}
}

func TestStreamOptionsRejectedOnce(t *testing.T) {
	f := newFake(t,
		raw(400, "application/json", `{"error":{"message":"property 'stream_options' is unsupported"}}`),
		textReply("ok"), textReply("ok"))
	s := NewConversation(f.config(), &fakeTools{}, nil)
	for i := 0; i < 2; i++ {
		if err := s.Handle(context.Background(), "q", newSyncBuffer()); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.requests()
	if !strings.Contains(string(reqs[0].raw), "stream_options") || strings.Contains(string(reqs[1].raw), "stream_options") || strings.Contains(string(reqs[2].raw), "stream_options") {
		t.Errorf("stream_options not dropped after the server rejected it")
	}
}

// refusedURL is an address where nothing listens: a port just released.
func refusedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

func TestConnectionRefusedIsRetriedThenReported(t *testing.T) {
	cfg := Config{BaseURL: refusedURL(t), Model: "m", Limits: llm.Limits{RetryBaseDelay: time.Millisecond, RetryMaxDelay: 2 * time.Millisecond}, View: view.For(view.Options{})}
	s := NewConversation(cfg, &fakeTools{}, nil)
	out := newSyncBuffer()
	err := s.Handle(context.Background(), "q", out)
	want := "nothing listening at " + cfg.BaseURL
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if got := out.String(); strings.Count(got, "("+want+"; retrying in") != 2 {
		t.Errorf("retries not shown: %q", got)
	}
}

func TestFirstByteTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, hangBeforeHeaders(release))
	cfg := f.config()
	cfg.FirstByteTimeout = 30 * time.Millisecond
	s := NewConversation(cfg, &fakeTools{}, nil)
	var err error
	within(t, "first-byte timeout", func() { err = s.Handle(context.Background(), "q", newSyncBuffer()) })
	if err == nil || err.Error() != "no response from "+f.url()+" within 30ms" {
		t.Fatalf("err = %v", err)
	}
	if len(f.requests()) != 1 {
		t.Errorf("a request that may be running was sent again")
	}
}

func TestIdleStreamTimeoutKeepsShownText(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, textThen("Half an ans", false, release))
	cfg := f.config()
	cfg.IdleTimeout = 40 * time.Millisecond
	s := NewConversation(cfg, &fakeTools{}, nil)
	out := newSyncBuffer()
	var err error
	within(t, "idle timeout", func() { err = s.Handle(context.Background(), "q", out) })
	want := "answer incomplete: the stream from " + f.url() + " stalled (no data for 40ms)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant   %s", err, want)
	}
	if !strings.HasPrefix(out.String(), "Half an ans\n") {
		t.Errorf("out %q", out.String())
	}
}

func TestKeepAliveCommentsAreNotIdle(t *testing.T) {
	// 1,000 comment frames at once (go-openai gives up after 150), then
	// pings at a fiftieth of the idle timeout for three idle periods (so
	// far apart that a loaded machine does not stretch one gap past it).
	f := newFake(t, handler(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, strings.Repeat(": keep-alive\n\n", 1000))
		w.(http.Flusher).Flush()
		for i := 0; i < 150; i++ {
			time.Sleep(10 * time.Millisecond)
			io.WriteString(w, ":\n\n")
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, sseBody(chunk(`{"content":"alive"}`, "stop")))
	}))
	cfg := f.config()
	cfg.IdleTimeout = 500 * time.Millisecond
	s := NewConversation(cfg, &fakeTools{}, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "q", out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "alive\n" {
		t.Errorf("out %q", out.String())
	}
}

func TestMidStreamErrorLines(t *testing.T) {
	cases := []struct {
		name, body, want, shown string
	}{
		{"groq event: error fixture", readFixture(t, "groq-stream-midstream-error-event.sse"),
			"Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema: errors: [missing properties: 'name', additionalProperties 'invalid_param' not allowed] (reported by {url} mid-answer)", ""},
		{"openrouter error in chunk fixture", readFixture(t, "openrouter-stream-comments-midstream-error.sse"),
			"Token limit reached (reported by {url} mid-answer)", ""},
		{"llama.cpp error: line", "data: " + chunk(`{"content":"Hel"}`, "") + "\n\nerror: {\"code\":400,\"message\":\"the request exceeds the available context size, try increasing it\",\"type\":\"exceed_context_size_error\"}\n\ndata: [DONE]\n\n",
			"answer incomplete: the request exceeds the available context size, try increasing it (reported by {url} mid-answer)", "Hel"},
		{"vllm unwrapped error", "data: " + chunk(`{"content":"Hi"}`, "") + "\n\ndata: {\"object\":\"error\",\"message\":\"engine died\",\"type\":\"InternalServerError\",\"code\":500}\n\n",
			"answer incomplete: engine died (reported by {url} mid-answer)", "Hi"},
		{"anthropic error after comments", ": ping\n\ndata: {\"type\":\"ping\"}\n\ndata: " + chunk(`{"content":"Hi"}`, "") + "\n\ndata: {\"error\":{\"code\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
			"answer incomplete: Overloaded (reported by {url} mid-answer)", "Hi"},
		{"200 with a JSON error body, no newline", `{"error":{"message":"Invalid model","type":"invalid_request_error"}}`,
			"Invalid model (reported by {url} mid-answer)", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, sse(c.body))
			tools := &fakeTools{}
			s := NewConversation(f.config(), tools, nil)
			out := newSyncBuffer()
			err := s.Handle(context.Background(), "q", out)
			want := strings.ReplaceAll(c.want, "{url}", f.url())
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant   %s", err, want)
			}
			if c.shown != "" && !strings.HasPrefix(out.String(), c.shown+"\n") {
				t.Errorf("shown text lost: %q", out.String())
			}
			if len(f.requests()) != 1 || len(tools.called()) != 0 {
				t.Errorf("retried or ran tools after a stream error")
			}
		})
	}
}

func readFixture(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStreamQuirks feeds the loop the synthetic quirks of
// provider-quirks.md that have no captured fixture.
func TestStreamQuirks(t *testing.T) {
	call := func(extra string) string {
		return `{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[` + extra + `]},"finish_reason":null}]}`
	}
	cases := []struct {
		name, body string
		want       []string // tool calls run, as "name args"
		text       string
	}{
		{"object arguments (llama.cpp)", sseBody(call(`{"index":0,"id":"c1","type":"function","function":{"name":"get_type","arguments":{"expr":"x"}}}`)),
			[]string{`get_type {"expr":"x"}`}, ""},
		{"string index, no type", sseBody(call(`{"index":"0","id":"c1","function":{"name":"get_type","arguments":"{\"expr\":"}}`), call(`{"index":"0","function":{"arguments":"\"y\"}"}}`)),
			[]string{`get_type {"expr":"y"}`}, ""},
		{"ollama: index 0 for every call", sseBody(call(`{"index":0,"id":"c1","type":"function","function":{"name":"get_type","arguments":"{\"expr\":\"a\"}"}}`), call(`{"index":0,"id":"c2","type":"function","function":{"name":"get_repr","arguments":"{\"expr\":\"b\"}"}}`)),
			[]string{`get_type {"expr":"a"}`, `get_repr {"expr":"b"}`}, ""},
		{"no index, id-less continuation, empty-name fragments (LM Studio)", sseBody(call(`{"id":"c1","function":{"name":"get_doc","arguments":"{\"ex"}}`), call(`{"id":"","function":{"name":"","arguments":"pr\":\"len\"}"}}`)),
			[]string{`get_doc {"expr":"len"}`}, ""},
		{"no [DONE], no trailing newline", "data: " + chunk(`{"content":"last words"}`, "stop"),
			nil, "last words"},
		{"CRLF and lone CR line endings", "data: " + chunk(`{"content":"a"}`, "") + "\r\n\r\ndata: " + chunk(`{"content":"b"}`, "stop") + "\r\rdata: [DONE]\r\r",
			nil, "ab"},
		{"one event over two data lines", "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\n" + "data: \"delta\":{\"content\":\"joined\"},\"finish_reason\":\"stop\"}]}\n\n",
			nil, "joined"},
		{"data without a space, event/id/retry lines", "retry: 100\nid: 7\nevent: message\ndata:" + chunk(`{"content":"ok"}`, "stop") + "\n\n",
			nil, "ok"},
		{"non-stream body for a stream request", `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"whole answer"},"finish_reason":"stop"}]}`,
			nil, "whole answer"},
		{"choices null and a ping", sseBody(`{"choices":null}`, `{"type":"ping"}`, chunk(`{"content":"fine"}`, "stop")),
			nil, "fine"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			steps := []fakemodel.Reply{sse(c.body)}
			if len(c.want) > 0 {
				steps = append(steps, textReply("done"))
			}
			f := newFake(t, steps...)
			tools := &fakeTools{}
			s := NewConversation(f.config(), tools, nil)
			out := newSyncBuffer()
			if err := s.Handle(context.Background(), "q", out); err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if fmt.Sprint(tools.called()) != fmt.Sprint(c.want) && !(len(c.want) == 0 && len(tools.called()) == 0) {
				t.Errorf("calls %q, want %q", tools.called(), c.want)
			}
			if c.text != "" && out.String() != c.text+"\n" {
				t.Errorf("out %q, want %q", out.String(), c.text)
			}
			for _, r := range f.requests() {
				checkValid(t, r)
			}
		})
	}
}

// TestKeyNeverShown runs the failure paths with a server that echoes the
// key everywhere it can and checks no output or error carries it.
func TestKeyNeverShown(t *testing.T) {
	echo := func(w http.ResponseWriter, r *http.Request) string { return r.Header.Get("Authorization") }
	steps := []fakemodel.Reply{
		handler(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, echo(w, r))
		}),
		handler(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"bad request from %s"}}`, echo(w, r))
		}),
		handler(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			fmt.Fprintf(w, `{"error":{"message":"%s"}}`, echo(w, r))
		}),
		handler(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, sseBody(chunk(`{"content":"your key is `+testKey+`"}`, "stop")))
		}),
		handler(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"error\":{\"message\":\"stream died for %s\"}}\n\n", echo(w, r))
		}),
	}
	for i, step := range steps {
		f := newFake(t, step, step, step)
		cfg := f.config() // retries on: the notices quote the server too
		s := NewConversation(cfg, &fakeTools{}, nil)
		out := newSyncBuffer()
		err := s.Handle(context.Background(), "q", out)
		errText := ""
		if err != nil {
			errText = err.Error()
		}
		for _, text := range []string{out.String(), errText, fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprint(s.History())} {
			if strings.Contains(text, testKey) || strings.Contains(text, "S3CRET") {
				t.Errorf("step %d: the key is shown: %q", i, text)
			}
		}
		if f.requests()[0].auth != "Bearer "+testKey {
			t.Errorf("step %d: the key was not sent", i)
		}
	}
	// The config line never shows it either.
	if s := fmt.Sprint(Config{APIKey: testKey, BaseURL: "https://user:" + testKey + "@example.invalid/v1?api-key=" + testKey}); strings.Contains(s, "S3CRET") {
		t.Errorf("Config prints the key: %s", s)
	}
}

func TestCancelDuringRetryWait(t *testing.T) {
	f := newFake(t, raw(429, "application/json", `{"error":{"message":"wait"}}`, "Retry-After", "30"))
	cfg := f.config()
	cfg.RetryAfterCap = time.Hour // the wait would be 30 s
	s := NewConversation(cfg, &fakeTools{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	out := newSyncBuffer()
	go func() { <-out.wrote; cancel() }()
	var err error
	within(t, "Handle cancelled while waiting to retry", func() { err = s.Handle(ctx, "q", out) })
	if !errors.Is(err, context.Canceled) || !strings.Contains(out.String(), "retrying in 30s") {
		t.Fatalf("err = %v, out %q", err, out.String())
	}
}

// failedAsk is one question that a fake server made fail.
type failedAsk struct {
	server  *fakeServer
	session *Conversation
	err     error
	notices string // what was shown on the way (retry notices)
}

// askFailing asks one question of a fake server answering with steps and
// checks that the error names want ({url} standing for the server's URL).
func askFailing(t *testing.T, want string, steps ...fakemodel.Reply) failedAsk {
	t.Helper()
	f := newFake(t, steps...)
	s := NewConversation(f.config(), &fakeTools{}, nil)
	out := newSyncBuffer()
	err := s.Handle(context.Background(), "q", out)
	want = strings.ReplaceAll(want, "{url}", f.url())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant   %s", err, want)
	}
	return failedAsk{server: f, session: s, err: err, notices: out.String()}
}
