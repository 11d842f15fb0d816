package fakemodel

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/llm"
)

// open sends one request through the real provider client.
func open(t *testing.T, s *Server, msgs ...llm.Message) (*llm.Stream, error) {
	t.Helper()
	c := llm.New(llm.Options{BaseURL: s.URL, APIKey: "sk-fake-0123456789abcdef", Limits: llm.Limits{MaxRetries: -1}})
	return c.Open(context.Background(), "m", msgs, llm.EncodeTools([]llm.Tool{{Name: "get_repr", Schema: json.RawMessage(`{"type":"object"}`)}}), func(string) {})
}

// read drains a stream: its answer as streamed, and its result.
func read(t *testing.T, st *llm.Stream) (string, *llm.Completion) {
	t.Helper()
	defer st.Close()
	var b strings.Builder
	for st.Next() {
		if kind, _, text := st.Current(); kind == llm.DeltaContent {
			b.WriteString(text)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatalf("stream error: %v", err)
	}
	return b.String(), st.Result()
}

func TestScriptedRepliesAndRecordedRequests(t *testing.T) {
	s := New(t,
		Reply{Thinking: "let me look", Calls: []Call{{Name: "get_repr", Args: `{"expr":"x"}`}, {ID: "c9", Name: "get_type", Args: `{}`}}},
		Reply{Text: "x is 1.", Usage: &Usage{Prompt: 120, Completion: 5}},
	)
	st, err := open(t, s, llm.Message{Role: "user", Content: "what is x?"})
	if err != nil {
		t.Fatal(err)
	}
	text, res := read(t, st)
	ch := res.Choice0()
	if text != "" || ch.Reasoning != "let me look" || ch.FinishReason != "tool_calls" || res.Usage != nil {
		t.Errorf("first reply: text %q reasoning %q finish %q usage %v", text, ch.Reasoning, ch.FinishReason, res.Usage)
	}
	if len(ch.ToolCalls) != 2 || ch.ToolCalls[0].ID != "call_1" || ch.ToolCalls[0].Arguments != `{"expr":"x"}` ||
		ch.ToolCalls[1].ID != "c9" || ch.ToolCalls[1].Name != "get_type" || ch.ToolCalls[1].Arguments != `{}` {
		t.Errorf("calls %+v", ch.ToolCalls)
	}
	st, err = open(t, s, llm.Message{Role: "user", Content: "what is x?"}, llm.Message{Role: "tool", ToolCallID: "call_1", Content: "1"})
	if err != nil {
		t.Fatal(err)
	}
	text, res = read(t, st)
	if text != "x is 1." || res.Choice0().FinishReason != "stop" || res.Usage == nil || res.Usage.PromptTokens != 120 || res.Usage.TotalTokens != 125 {
		t.Errorf("second reply: %q %+v %+v", text, res.Choice0(), res.Usage)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1/chat/completions" || reqs[0].Header.Get("Authorization") != "Bearer sk-fake-0123456789abcdef" {
		t.Fatalf("requests %+v", reqs)
	}
	if q := reqs[0].Last(); q.Role != "user" || q.Content != "what is x?" {
		t.Errorf("first request's last message %+v", q)
	}
	if last := reqs[1].Last(); last.Role != "tool" || last.ToolCallID != "call_1" || last.Content != "1" {
		t.Errorf("second request's last message %+v", last)
	}
	if reqs[0].JSON()["model"] != "m" || reqs[0].JSON()["stream"] != true {
		t.Errorf("body %s", reqs[0].Body)
	}
}

func TestFailures(t *testing.T) {
	s := New(t,
		Reply{Status: 401, Error: "Incorrect API key provided", ErrorType: "invalid_request_error", ErrorCode: "invalid_api_key"},
		Reply{Text: "half an", Error: "upstream died"},
	)
	_, err := open(t, s)
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 401 || ae.Message != "Incorrect API key provided" || ae.Code != "invalid_api_key" {
		t.Errorf("HTTP error: %v %+v", err, ae)
	}
	st, err := open(t, s)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for st.Next() {
	}
	if err := st.Err(); err == nil || !strings.Contains(err.Error(), "upstream died") || st.Result().Choice0().Content != "half an" {
		t.Errorf("mid-stream error: %v, content %q", err, st.Result().Choice0().Content)
	}
}

// A request with stream:false gets one chat.completion.
func TestNonStreaming(t *testing.T) {
	s := New(t, Reply{Text: "plain answer", Calls: []Call{{Name: "get_repr", Args: `{"expr":"y"}`}}, Usage: &Usage{Prompt: 3, Completion: 4}})
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Object  string
		Choices []struct {
			Message struct {
				Content   string
				ToolCalls []struct {
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			Total int `json:"total_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Type") != "application/json" || body.Object != "chat.completion" || len(body.Choices) != 1 {
		t.Fatalf("%s %+v", resp.Header.Get("Content-Type"), body)
	}
	m := body.Choices[0]
	if m.Message.Content != "plain answer" || m.FinishReason != "tool_calls" || len(m.Message.ToolCalls) != 1 ||
		m.Message.ToolCalls[0].Function.Arguments != `{"expr":"y"}` || body.Usage.Total != 7 {
		t.Errorf("%+v", body)
	}
}

// Pause holds the stream after its first pieces until Resume; Drop cuts it.
func TestPacing(t *testing.T) {
	resume := make(chan struct{})
	s := New(t,
		Reply{Pieces: []string{"first ", "second"}, Pause: 1, Resume: resume},
		Reply{Pieces: []string{"cut ", "never"}, Pause: 1, Drop: true},
	)
	st, err := open(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Next() {
		t.Fatal(st.Err())
	}
	if _, _, text := st.Current(); text != "first " {
		t.Errorf("first piece %q", text)
	}
	close(resume)
	if text, _ := read(t, st); text != "second" {
		t.Errorf("after resume %q", text)
	}
	st, err = open(t, s)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got strings.Builder
	for st.Next() {
		_, _, text := st.Current()
		got.WriteString(text)
	}
	if got.String() != "cut " || st.Err() == nil {
		t.Errorf("dropped stream: %q, err %v", got.String(), st.Err())
	}
}

func TestPathsAndModels(t *testing.T) {
	s := New(t)
	s.SetModels("a", "b")
	ids, err := llm.New(llm.Options{BaseURL: s.URL}).Models(context.Background())
	if err != nil || strings.Join(ids, ",") != "a,b" {
		t.Errorf("models %v %v", ids, err)
	}
	s.FailModels(Reply{Status: 401, Error: "Incorrect API key provided"})
	if ids, err := llm.New(llm.Options{BaseURL: s.URL}).Models(context.Background()); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("models with FailModels(401): %v %v, want an error naming 401", ids, err)
	}
	resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || len(s.Requests()) != 0 {
		t.Errorf("a wrong path got %d %s, recorded %d", resp.StatusCode, body, len(s.Requests()))
	}
}
