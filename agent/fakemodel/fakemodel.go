// Package fakemodel is a scripted model for tests: a real HTTP server
// (net/http/httptest) speaking OpenAI's chat-completions wire format, as
// streamed server-sent events or, when a request asks for no stream, one
// JSON completion. Each request gets the next Reply of a script (New), or
// whatever a function of the request says (NewFunc); every request is
// recorded, body and headers, for the test to assert on.
//
// A Reply is a model's answer (text, thinking, tool calls, finish reason,
// usage), a failure (an HTTP error, an error inside the stream), or, for
// faults of the wire itself, a raw body or a handler of its own. Pacing
// (Before, Pause, Resume, Drop) lets a test act while an answer is under
// way: type keys, press Ctrl-C, cut the connection.
//
// It needs no cgo and knows nothing of pyaichat; the agent's tests, the
// end-to-end tests and their transcripts share it.
package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Call is one tool call in a Reply.
type Call struct {
	ID   string // "" gives call_1, call_2... in the order of the reply
	Name string
	Args string // the arguments' JSON text
}

// Usage is the token usage a Reply reports in a last chunk of its own
// (choices: []), as OpenAI sends it when asked with stream_options.
type Usage struct {
	Prompt, Completion int
}

// Reply is one response of the model.
type Reply struct {
	// Text is the answer, sent word by word (each delta a word and the
	// space after it) unless Pieces gives the deltas.
	Text   string
	Pieces []string
	// Thinking is sent as reasoning_content before the answer.
	Thinking string
	// Calls are streamed as OpenAI streams them: a head with id and name,
	// then the arguments in two fragments, keyed by index.
	Calls []Call
	// Finish is the finish_reason: "" gives "tool_calls" with Calls and
	// "stop" without; NoFinish sends none (the stream ends without one).
	Finish   string
	NoFinish bool
	// NoDone leaves out the final data: [DONE].
	NoDone bool
	// Usage, when set, is reported after the answer.
	Usage *Usage

	// Status, when 300 or more, answers with that HTTP status and an
	// OpenAI error body carrying Error (its message), ErrorType and
	// ErrorCode. With Status 0, a non-empty Error is sent inside the
	// stream after the answer, as data: {"error":{...}}.
	Status    int
	Error     string
	ErrorType string
	ErrorCode string

	// Body or ContentType, when set, answer with Body as it is, Status
	// (200 if 0), that Content-Type and Header (name, value, name,
	// value...): for bodies a test writes by hand or a captured response.
	Body        string
	ContentType string
	Header      []string

	// Before, when set, is waited for before anything is sent; a client
	// that leaves meanwhile gets nothing.
	Before <-chan struct{}
	// Pause > 0 stops the stream after that many pieces of text (thinking
	// and answer), flushed; then Drop cuts the connection, or the server
	// waits for Resume to be closed (with Resume nil, until the client
	// leaves, and nothing more is sent).
	Pause  int
	Resume <-chan struct{}
	Drop   bool

	// Handler, when set, answers the request instead: wire faults that no
	// model makes (keep-alive comments, a hijacked connection...). The
	// request is recorded first, its body already read (r.Body is empty).
	Handler http.HandlerFunc
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string // the URL's path; the query is in Query
	Query  string
	Header http.Header
	Body   []byte
}

// JSON is the body decoded, nil when it is not a JSON object.
func (r Request) JSON() map[string]any {
	var m map[string]any
	if json.Unmarshal(r.Body, &m) != nil {
		return nil
	}
	return m
}

// Message is one message of a request's conversation.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCallID string     `json:"tool_call_id"`
	ToolCalls  []ToolCall `json:"tool_calls"`
}

// ToolCall is one tool call of an assistant message, as the client sent
// it back.
type ToolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is the tool a ToolCall names and its arguments' JSON text.
type Function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Messages is the request's conversation (nil when the body has none).
func (r Request) Messages() []Message {
	var body struct {
		Messages []Message `json:"messages"`
	}
	json.Unmarshal(r.Body, &body)
	return body.Messages
}

// Last is the request's last message, the one the reply answers.
func (r Request) Last() Message {
	if m := r.Messages(); len(m) > 0 {
		return m[len(m)-1]
	}
	return Message{}
}

// Server is the fake model. URL is its base URL, the value of
// OPENAI_BASE_URL: it answers POST URL/chat/completions and GET URL/models
// (what SetModels gave; none at first), and 404 to any other path unless
// AllowAnyPath was called.
type Server struct {
	URL string

	t       testing.TB
	srv     *httptest.Server
	respond func(Request) (Reply, bool)
	add     func([]Reply) // New's: appends to the script

	mu      sync.Mutex
	reqs    []Request
	models  []string
	failing *Reply // what GET /models answers instead of the list
	// modelsJSON, when set, is GET /models' whole answer.
	modelsJSON string
	anyPath    bool
}

// New starts a server that answers the n-th chat request with the n-th
// reply; a request past the end of the script fails the test and gets
// HTTP 500. More replies can be added with Add.
func New(t testing.TB, script ...Reply) *Server { return newScript(t, false, script) }

// NewTLS is New over HTTPS, with httptest's own certificate (clients must
// not verify it), for base URLs that must be https://.
func NewTLS(t testing.TB, script ...Reply) *Server { return newScript(t, true, script) }

func newScript(t testing.TB, tls bool, script []Reply) *Server {
	var mu sync.Mutex
	s := &Server{}
	s.start(t, tls, func(Request) (Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(script) == 0 {
			return Reply{}, false
		}
		r := script[0]
		script = script[1:]
		return r, true
	})
	s.add = func(more []Reply) {
		mu.Lock()
		script = append(script, more...)
		mu.Unlock()
	}
	return s
}

// NewFunc starts a server whose replies respond computes from each
// request (it is called on the server's goroutines, one per request).
func NewFunc(t testing.TB, respond func(Request) Reply) *Server {
	s := &Server{}
	s.start(t, false, func(r Request) (Reply, bool) { return respond(r), true })
	return s
}

func (s *Server) start(t testing.TB, tls bool, respond func(Request) (Reply, bool)) {
	s.t, s.respond = t, respond
	if tls {
		s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	} else {
		s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	}
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
}

// Add appends replies to a script (New only).
func (s *Server) Add(replies ...Reply) {
	if s.add == nil {
		s.t.Fatal("fakemodel: Add on a server made by NewFunc")
	}
	s.add(replies)
}

// SetModels sets what GET /models lists.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	s.models = ids
	s.mu.Unlock()
}

// SetModelsJSON makes GET /models answer with body as it is: a list
// whose entries carry what some servers add (context lengths, prices).
func (s *Server) SetModelsJSON(body string) {
	s.mu.Lock()
	s.modelsJSON = body
	s.mu.Unlock()
}

// FailModels makes GET /models answer with reply's Status and its OpenAI
// error body (Error, ErrorType, ErrorCode), as a server that refuses the
// key answers 401.
func (s *Server) FailModels(reply Reply) {
	s.mu.Lock()
	s.failing = &reply
	s.mu.Unlock()
}

// AllowAnyPath makes the server answer chat requests at any path that ends
// in /chat/completions (Azure's deployments, a test's own base URL).
func (s *Server) AllowAnyPath() {
	s.mu.Lock()
	s.anyPath = true
	s.mu.Unlock()
}

// Close shuts the server down (it is also closed when the test ends).
func (s *Server) Close() { s.srv.Close() }

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.srv.Listener.Addr().String() }

// Requests are the chat requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	anyPath, models, failing, modelsJSON := s.anyPath, s.models, s.failing, s.modelsJSON
	s.mu.Unlock()
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models" && failing != nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(failing.Status)
		io.WriteString(w, errorBody(*failing))
		return
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models" && modelsJSON != "":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, modelsJSON)
		return
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		writeModels(w, models)
		return
	case r.Method != http.MethodPost:
	case r.URL.Path == "/v1/chat/completions", anyPath && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.chat(w, r)
		return
	}
	http.Error(w, `{"error":{"message":"fakemodel: no such path"}}`, http.StatusNotFound)
}

func writeModels(w http.ResponseWriter, ids []string) {
	data := []map[string]string{}
	for _, id := range ids {
		data = append(data, map[string]string{"id": id, "object": "model"})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client left mid-request
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	s.mu.Unlock()
	reply, ok := s.respond(req)
	if !ok {
		s.t.Errorf("fakemodel: unexpected request #%d: the script is exhausted", n)
		http.Error(w, `{"error":{"message":"fakemodel: script exhausted"}}`, http.StatusInternalServerError)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(nil))
	if reply.Before != nil {
		select {
		case <-reply.Before:
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case reply.Handler != nil:
		reply.Handler(w, r)
	case reply.Body != "" || reply.ContentType != "":
		writeRaw(w, reply)
	case reply.Status >= 300:
		writeRaw(w, Reply{Status: reply.Status, ContentType: "application/json", Body: errorBody(reply)})
	case !wantsStream(body):
		writeRaw(w, Reply{ContentType: "application/json", Body: completion(reply)})
	default:
		stream(w, r, reply)
	}
}

func wantsStream(body []byte) bool {
	var req struct {
		Stream bool `json:"stream"`
	}
	json.Unmarshal(body, &req)
	return req.Stream
}

func writeRaw(w http.ResponseWriter, reply Reply) {
	for i := 0; i+1 < len(reply.Header); i += 2 {
		w.Header().Set(reply.Header[i], reply.Header[i+1])
	}
	if reply.ContentType != "" {
		w.Header().Set("Content-Type", reply.ContentType)
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	io.WriteString(w, reply.Body)
}

func errorBody(reply Reply) string {
	e := map[string]any{"message": reply.Error, "type": nil, "code": nil}
	if reply.ErrorType != "" {
		e["type"] = reply.ErrorType
	}
	if reply.ErrorCode != "" {
		e["code"] = reply.ErrorCode
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return string(b)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pieces are the answer's deltas.
func (reply Reply) pieces() []string {
	if reply.Pieces != nil {
		return reply.Pieces
	}
	if reply.Text == "" {
		return nil
	}
	return strings.SplitAfter(reply.Text, " ")
}

func (reply Reply) finish() string {
	switch {
	case reply.Finish != "":
		return reply.Finish
	case len(reply.Calls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (reply Reply) callID(i int) string {
	if id := reply.Calls[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("call_%d", i+1)
}

func (u *Usage) json() string {
	return fmt.Sprintf(`{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`, u.Prompt, u.Completion, u.Prompt+u.Completion)
}
