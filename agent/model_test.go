package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/view"
)

// scriptedModel is the model interface without any wire: each Open returns
// the next completion, its content streamed as one piece, and records the
// conversation it was given.
type scriptedModel struct {
	replies []llm.Completion
	asked   [][]llm.Message
	ids     int
}

func (m *scriptedModel) Open(_ context.Context, _ string, msgs []llm.Message, _ llm.Tools, _ func(string)) (response, error) {
	m.asked = append(m.asked, append([]llm.Message(nil), msgs...))
	c := m.replies[0]
	m.replies = m.replies[1:]
	return &scriptedResponse{c: c}, nil
}

func (m *scriptedModel) Models(context.Context) ([]string, error) { return nil, nil }
func (m *scriptedModel) ModelInfos(context.Context) ([]llm.ModelInfo, error) {
	return nil, nil
}
func (m *scriptedModel) Where() string { return "scripted" }
func (m *scriptedModel) NewCallID() string {
	m.ids++
	return fmt.Sprintf("scripted_%d", m.ids)
}

type scriptedResponse struct {
	c    llm.Completion
	sent bool
}

func (r *scriptedResponse) Next() bool {
	if r.sent || r.c.Choice0().Content == "" {
		return false
	}
	r.sent = true
	return true
}
func (r *scriptedResponse) Current() (llm.DeltaKind, int, string) {
	return llm.DeltaContent, 0, r.c.Choice0().Content
}
func (r *scriptedResponse) Err() error              { return nil }
func (r *scriptedResponse) Capped() bool            { return false }
func (r *scriptedResponse) Unfinished() bool        { return false }
func (r *scriptedResponse) Result() *llm.Completion { return &r.c }
func (r *scriptedResponse) Close() error            { return nil }

// The loop needs nothing of the provider but the model interface: a tool
// call the model wrote as text gets the model's own id, runs, and its
// result goes back in the next request's conversation, answered by id.
func TestLoopOverAModelWithoutWire(t *testing.T) {
	m := &scriptedModel{replies: []llm.Completion{
		{Choices: []llm.Choice{{Content: `{"name": "get_type", "arguments": {"expr": "x"}}`, FinishReason: "stop"}}},
		{Choices: []llm.Choice{{Content: "x is an int.", FinishReason: "stop"}}, Usage: &llm.Usage{PromptTokens: 10, CompletionTokens: 4}},
	}}
	tools := &fakeTools{fn: func(context.Context, string, json.RawMessage) (string, bool) { return `{"type":"int"}`, false }}
	s := NewConversation(Config{APIKey: testKey, View: view.For(view.Options{})}, tools, nil)
	s.model = m
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "what is x?", out); err != nil {
		t.Fatal(err)
	}
	if got := tools.called(); len(got) != 1 || got[0] != `get_type {"expr": "x"}` {
		t.Errorf("tools called %q", got)
	}
	if len(m.asked) != 2 {
		t.Fatalf("%d requests, want 2", len(m.asked))
	}
	second := m.asked[1]
	call, result := second[len(second)-2], second[len(second)-1]
	if len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != "scripted_1" || result.Role != "tool" ||
		result.ToolCallID != "scripted_1" || result.Content != `{"type":"int"}` {
		t.Errorf("the second request ends with %+v then %+v", call, result)
	}
	if !strings.Contains(out.String(), "x is an int.") || !strings.Contains(out.String(), "tokens: 10 in, 4 out") {
		t.Errorf("out %q", out.String())
	}
}
