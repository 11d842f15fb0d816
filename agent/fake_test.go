package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/capabilities/spec"
)

// fakeServer is a scripted OpenAI-compatible server: each request gets the
// next step of the script, and every request body is recorded.
type fakeServer struct {
	t     testing.TB
	srv   *httptest.Server
	mu    sync.Mutex
	steps []http.HandlerFunc
	reqs  []wireReq
	auth  []string
}

type wireReq struct {
	Model    string `json:"model"`
	Messages []struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Stream bool `json:"stream"`
	raw    []byte
}

func newFake(t testing.TB, steps ...http.HandlerFunc) *fakeServer {
	f := &fakeServer{t: t, steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// fakeModels is what the fake server lists at GET /v1/models.
var fakeModels = []string{"fake-model", "other-model"}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		var data []map[string]string
		for _, id := range fakeModels {
			data = append(data, map[string]string{"id": id, "object": "model"})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var req wireReq
	if err := json.Unmarshal(raw, &req); err != nil {
		f.t.Errorf("request body is not JSON: %v", err)
	}
	req.raw = raw
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	var step http.HandlerFunc
	if len(f.steps) > 0 {
		step, f.steps = f.steps[0], f.steps[1:]
	}
	f.mu.Unlock()
	if step == nil {
		f.t.Errorf("unexpected request #%d: the script is exhausted", len(f.reqs))
		http.Error(w, `{"error":{"message":"script exhausted"}}`, 500)
		return
	}
	step(w, r)
}

func (f *fakeServer) add(steps ...http.HandlerFunc) {
	f.mu.Lock()
	f.steps = append(f.steps, steps...)
	f.mu.Unlock()
}

func (f *fakeServer) requests() []wireReq {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wireReq(nil), f.reqs...)
}

func (f *fakeServer) url() string { return f.srv.URL + "/v1" }

// testConfig has small bounds so faults resolve quickly; no assertion
// depends on how long anything takes.
func (f *fakeServer) config() Config {
	return Config{
		BaseURL: f.url(), APIKey: testKey, Model: "test-model",
		RetryBaseDelay: time.Millisecond, RetryMaxDelay: 5 * time.Millisecond, RetryAfterCap: 30 * time.Millisecond,
	}
}

const testKey = "sk-test-S3CRET-never-print-me-0123456789"

// sseBody frames chunks as SSE events and ends with [DONE].
func sseBody(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func raw(status int, ctype, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func sse(body string) http.HandlerFunc { return raw(200, "text/event-stream", body) }

func chunk(delta string, finish string) string {
	fin := "null"
	if finish != "" {
		fin = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-1","model":"test-model","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fin + `}]}`
}

const usageChunk = `{"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":7,"total_tokens":107}}`

// textReply streams text word by word, then stop and a usage chunk.
func textReply(text string) http.HandlerFunc {
	chunks := []string{chunk(`{"role":"assistant","content":""}`, "")}
	for _, w := range strings.SplitAfter(text, " ") {
		b, _ := json.Marshal(w)
		chunks = append(chunks, chunk(`{"content":`+string(b)+`}`, ""))
	}
	chunks = append(chunks, chunk(`{}`, "stop"), usageChunk)
	return sse(sseBody(chunks...))
}

type fcall struct{ id, name, args string }

// toolReply streams tool calls the way OpenAI does: a head with id and name,
// then the arguments in two fragments, keyed by index.
func toolReply(finish string, calls ...fcall) http.HandlerFunc {
	chunks := []string{chunk(`{"role":"assistant","content":null}`, "")}
	for i, c := range calls {
		name, _ := json.Marshal(c.name)
		half := len(c.args) / 2
		a1, _ := json.Marshal(c.args[:half])
		a2, _ := json.Marshal(c.args[half:])
		chunks = append(chunks,
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%s,"arguments":""}}]}`, i, c.id, name), ""),
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, a1), ""),
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, a2), ""))
	}
	if finish == "" {
		finish = "tool_calls"
	}
	chunks = append(chunks, chunk(`{}`, finish), usageChunk)
	return sse(sseBody(chunks...))
}

// hangBeforeHeaders never answers; it returns when the client goes away.
func hangBeforeHeaders(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

// textThen streams some text, then either hangs (abort=false) until the
// client goes away or drops the connection (abort=true).
func textThen(text string, abort bool, release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		b, _ := json.Marshal(text)
		io.WriteString(w, "data: "+chunk(`{"role":"assistant","content":`+string(b)+`}`, "")+"\n\n")
		w.(http.Flusher).Flush()
		if abort {
			panic(http.ErrAbortHandler)
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

// fakeTools is a Toolset with the seven capabilities' names and realistic
// schemas; results come from fn and every call is recorded.
type fakeTools struct {
	mu    sync.Mutex
	calls []string // name + " " + args
	fn    func(ctx context.Context, name string, args json.RawMessage) (string, bool)
}

// realisticTools are the seven capabilities as the model is told of them:
// their real names, descriptions and schemas (capabilities/spec, which
// needs no interpreter).
var realisticTools = func() []Tool {
	var out []Tool
	for _, s := range spec.List() {
		out = append(out, Tool{Name: s.Name, Description: s.Description, Schema: s.Schema})
	}
	return out
}()

func (f *fakeTools) Tools() []Tool { return realisticTools }

func (f *fakeTools) Call(ctx context.Context, name string, args json.RawMessage) (string, bool) {
	f.mu.Lock()
	f.calls = append(f.calls, name+" "+string(args))
	f.mu.Unlock()
	if f.fn != nil {
		return f.fn(ctx, name, args)
	}
	return `{"ok":true}`, false
}

func (f *fakeTools) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// checkValid asserts the conversation in a request is one a strict server
// accepts: every tool-call id answered right after its call, no stray tool
// messages, no two user messages in a row.
func checkValid(t *testing.T, req wireReq) {
	t.Helper()
	msgs := req.Messages
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if i > 0 && m.Role == "user" && msgs[i-1].Role == "user" {
			t.Errorf("message %d: two user messages in a row", i)
		}
		if m.Role == "tool" {
			t.Errorf("message %d: tool result %q without a call before it", i, m.ToolCallID)
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		want := map[string]bool{}
		for _, c := range m.ToolCalls {
			if c.ID == "" {
				t.Errorf("message %d: tool call with an empty id", i)
			}
			want[c.ID] = true
		}
		for i+1 < len(msgs) && msgs[i+1].Role == "tool" {
			i++
			if !want[msgs[i].ToolCallID] {
				t.Errorf("message %d: answers unknown id %q", i, msgs[i].ToolCallID)
			}
			delete(want, msgs[i].ToolCallID)
		}
		if len(want) > 0 {
			t.Errorf("tool-call ids never answered: %v", want)
		}
	}
}

// toolResults maps tool_call_id to the result sent back in a request.
func toolResults(req wireReq) map[string]string {
	out := map[string]string{}
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// syncBuffer is an output sink that tests can read while Handle writes.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	wrote  chan struct{}
	signal sync.Once
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{wrote: make(chan struct{})} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signal.Do(func() { close(s.wrote) })
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// within fails the test if fn has not returned after a generous guard; it is
// a hang detector, not a timing assertion (speed is measured by benchmarks).
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return (hang)", what)
	}
}
