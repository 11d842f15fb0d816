package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/view"
	"github.com/pyaichat/pyaichat/capabilities/spec"
)

// fakeServer is the shared fake model (agent/fakemodel) with the request
// bodies decoded as the tests read them.
type fakeServer struct {
	*fakemodel.Server
	t testing.TB
}

type wireReq struct {
	Model    string              `json:"model"`
	Messages []fakemodel.Message `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Stream bool `json:"stream"`
	raw    []byte
	auth   string // the Authorization header
}

// newFake starts a fake model that answers the n-th request with the n-th
// step and lists fakeModels at GET /v1/models.
func newFake(t testing.TB, steps ...fakemodel.Reply) *fakeServer {
	f := &fakeServer{fakemodel.New(t, steps...), t}
	f.SetModels(fakeModels...)
	return f
}

// fakeModels is what the fake server lists at GET /v1/models.
var fakeModels = []string{"fake-model", "other-model"}

func (f *fakeServer) add(steps ...fakemodel.Reply) { f.Add(steps...) }

// requests are the chat requests received, decoded; a body that is not
// JSON fails the test.
func (f *fakeServer) requests() []wireReq {
	var out []wireReq
	for _, r := range f.Requests() {
		var req wireReq
		if err := json.Unmarshal(r.Body, &req); err != nil {
			f.t.Errorf("request body is not JSON: %v", err)
		}
		req.raw, req.auth = r.Body, r.Header.Get("Authorization")
		out = append(out, req)
	}
	return out
}

func (f *fakeServer) url() string { return f.URL }

// testConfig has small bounds so faults resolve quickly; no assertion
// depends on how long anything takes.
func (f *fakeServer) config() Config {
	return Config{
		BaseURL: f.url(), APIKey: testKey, Model: "test-model",
		Limits: llm.Limits{RetryBaseDelay: time.Millisecond, RetryMaxDelay: 5 * time.Millisecond, RetryAfterCap: 30 * time.Millisecond},
		View:   view.For(view.Options{}),
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

// raw answers with exactly this status, Content-Type, body and headers.
func raw(status int, ctype, body string, header ...string) fakemodel.Reply {
	return fakemodel.Reply{Status: status, ContentType: ctype, Body: body, Header: header}
}

func sse(body string) fakemodel.Reply { return raw(200, "text/event-stream", body) }

// handler answers with h, for faults of the wire that are no model reply.
func handler(h http.HandlerFunc) fakemodel.Reply { return fakemodel.Reply{Handler: h} }

func chunk(delta string, finish string) string {
	fin := "null"
	if finish != "" {
		fin = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-1","model":"test-model","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fin + `}]}`
}

const usageChunk = `{"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":7,"total_tokens":107}}`

// usage is what textReply and toolReply report (usageChunk's).
var usage = &fakemodel.Usage{Prompt: 100, Completion: 7}

// textReply streams text word by word, then stop and a usage chunk.
func textReply(text string) fakemodel.Reply {
	return fakemodel.Reply{Text: text, Usage: usage}
}

type fcall struct{ id, name, args string }

// toolReply streams tool calls the way OpenAI does: a head with id and name,
// then the arguments in two fragments, keyed by index.
func toolReply(finish string, calls ...fcall) fakemodel.Reply {
	r := fakemodel.Reply{Finish: finish, Usage: usage}
	for _, c := range calls {
		r.Calls = append(r.Calls, fakemodel.Call{ID: c.id, Name: c.name, Args: c.args})
	}
	return r
}

// hangBeforeHeaders never answers while the test runs: it waits for
// release (closed when the test ends) or for the client to go away.
func hangBeforeHeaders(release <-chan struct{}) fakemodel.Reply {
	return fakemodel.Reply{Before: release, ContentType: "text/event-stream"}
}

// textThen streams some text, then either hangs (abort=false) until the
// client goes away (or release is closed) or drops the connection
// (abort=true).
func textThen(text string, abort bool, release <-chan struct{}) fakemodel.Reply {
	return fakemodel.Reply{Pieces: []string{text}, Pause: 1, Drop: abort, Resume: release}
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
var realisticTools = func() []llm.Tool {
	var out []llm.Tool
	for _, s := range spec.List() {
		out = append(out, llm.Tool{Name: s.Name, Description: s.Description, Schema: s.Schema})
	}
	return out
}()

func (f *fakeTools) Tools() []llm.Tool { return realisticTools }

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
