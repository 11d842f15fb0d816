package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/llm"
)

// A resumed conversation goes out as it was sent: the question, the
// assistant message with its tool calls (and Gemini's extra_content), the
// tool results with the same ids, the answer; the system prompt says
// they are an ended session's, until /clear.
func TestResumeSendsToolCallsAsSent(t *testing.T) {
	f := newFake(t, textReply("now 7."), textReply("cleared."))
	s := NewConversation(f.config(), &fakeTools{}, nil)
	s.Resume("", []llm.Message{
		{Role: "user", Content: "what is x?"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{
			{ID: "call_a", Type: "function", Name: "get_repr", Arguments: `{"expr":"x"}`, Extra: json.RawMessage(`{"google":{"thought_signature":"c2ln"}}`)},
			{ID: "call_b", Type: "function", Name: "get_type", Arguments: `{"expr":"x"}`},
		}},
		{Role: "tool", ToolCallID: "call_a", Content: `{"repr":"6"}`},
		{Role: "tool", ToolCallID: "call_b", Content: `{"type":"int"}`},
		{Role: "assistant", Content: "x is 6."},
	})
	if err := s.Handle(context.Background(), "and now?", io.Discard); err != nil {
		t.Fatal(err)
	}
	req := f.requests()[0]
	checkValid(t, req)
	var got []string
	for _, m := range req.Messages[1:] {
		parts := []string{m.Role, m.Content, m.ToolCallID}
		for _, c := range m.ToolCalls {
			parts = append(parts, fmt.Sprintf("%s:%s%s", c.ID, c.Function.Name, c.Function.Arguments))
		}
		got = append(got, strings.Join(strings.Fields(strings.Join(parts, " ")), " "))
	}
	want := []string{
		"user what is x?",
		`assistant call_a:get_repr{"expr":"x"} call_b:get_type{"expr":"x"}`,
		`tool {"repr":"6"} call_a`,
		`tool {"type":"int"} call_b`,
		"assistant x is 6.",
		"user and now?",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(string(req.raw), `"extra_content":{"google":{"thought_signature":"c2ln"}}`) {
		t.Errorf("the thought signature was not sent back: %s", req.raw)
	}
	if !strings.Contains(req.Messages[0].Content, "restored from an earlier pyaichat session that has ended") {
		t.Errorf("the system prompt does not say the conversation was restored: %q", req.Messages[0].Content)
	}
	if err := s.Handle(context.Background(), "/clear", io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := s.Handle(context.Background(), "hello?", io.Discard); err != nil {
		t.Fatal(err)
	}
	if sys := f.requests()[1].Messages[0].Content; strings.Contains(sys, "restored") {
		t.Errorf("after /clear the system prompt still says restored: %q", sys)
	}
}

// Each tool call's event says which response of the question made it.
func TestToolCallEventsCarryTheirStep(t *testing.T) {
	f := newFake(t,
		toolReply("", fcall{"call_a", "get_type", `{"expr":"x"}`}, fcall{"call_b", "get_type", `{"expr":"y"}`}),
		toolReply("", fcall{"call_c", "get_type", `{"expr":"z"}`}),
		textReply("done."))
	cfg := f.config()
	var steps []string
	cfg.Events = func(ev event.Event) {
		if ev.Kind == event.ToolCall {
			steps = append(steps, fmt.Sprintf("%s:%d", ev.ID, ev.Step))
		}
	}
	s := NewConversation(cfg, &fakeTools{}, nil)
	if err := s.Handle(context.Background(), "what?", io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(steps, " "); got != "call_a:1 call_b:1 call_c:2" {
		t.Errorf("steps %s", got)
	}
}
