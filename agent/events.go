package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// EventKind names what happened in a question.
type EventKind string

// The events of one question, in the order they can happen. Text and
// Thinking come as the stream delivers them; Answer once, with the whole
// answer, before Usage; then Error or Cancelled when the question did not
// end with an answer.
const (
	EventQuestion   EventKind = "question"    // Text: the question
	EventThinking   EventKind = "thinking"    // Text: a piece of reasoning
	EventText       EventKind = "text"        // Text: a piece of the answer
	EventToolCall   EventKind = "tool_call"   // ID, Tool, Args, Step, Extra
	EventToolResult EventKind = "tool_result" // ID, Tool, Result (as sent), Size
	EventNotice     EventKind = "notice"      // Text: a retry, a cut response...
	EventAnswer     EventKind = "answer"      // Text: the whole answer shown
	EventUsage      EventKind = "usage"       // Usage (when the server told), Calls
	EventError      EventKind = "error"       // Text: one line; ErrorKind
	EventCancelled  EventKind = "cancelled"   // Ctrl-C
)

// Error kinds of an EventError, by what the user can do about them.
const (
	ErrorNotConfigured = "not_configured" // no key for OpenAI's API
	ErrorBound         = "bound"          // a bound of the loop stopped it
	ErrorFailed        = "failed"         // the server, the network, the model
)

// Event is one thing that happened while a question was answered. Every
// text in it has had the API key redacted, and a tool result is exactly
// what was sent to the model (filtered and capped).
type Event struct {
	Kind      EventKind
	Model     string // EventQuestion
	Text      string
	ID        string // the tool call's id
	Tool      string
	Args      string
	Result    string
	Size      int // bytes of Result
	Usage     *Usage
	Calls     int // EventUsage: the tool calls the question made
	ErrorKind string
	// Step is an EventToolCall's response in its question, from 1: the
	// calls of one assistant message share it. Extra is the call's
	// extra_content as the server sent it (Gemini's thought signature),
	// which a resumed conversation must send back.
	Step  int
	Extra json.RawMessage
}

// emit hands ev to Config.Events, if set.
func (s *Session) emit(ev Event) {
	if s.cfg.Events != nil {
		s.cfg.Events(ev)
	}
}

// ErrorKindOf classifies an error Handle or Ask returned.
func ErrorKindOf(err error) string {
	switch {
	case err == nil:
		return ""
	case err.Error() == NotConfigured:
		return ErrorNotConfigured
	case isBound(err):
		return ErrorBound
	}
	return ErrorFailed
}

// ended emits how a question ended: its whole answer, its usage, and its
// error or cancellation.
func (t *turn) ended(err error) {
	s := t.s
	if a := t.answered.String(); a != "" {
		s.emit(Event{Kind: EventAnswer, Text: a})
	}
	ev := Event{Kind: EventUsage, Calls: len(t.calls)}
	if t.hasUse {
		u := t.usage
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
		u.Raw = nil
		ev.Usage = &u
	}
	s.emit(ev)
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		s.emit(Event{Kind: EventCancelled, Text: "question cancelled"})
	default:
		s.emit(Event{Kind: EventError, Text: s.clean(err).Error(), ErrorKind: ErrorKindOf(err)})
	}
}

// shown is answer text, made safe to show (the key filtered out across
// deltas), as it goes to the terminal and to Config.Events.
func (t *turn) shown(text string) {
	if text == "" {
		return
	}
	t.answered.WriteString(text)
	t.event(Event{Kind: EventText, Text: text})
}

// event hands one of a question's events to Config.Events and to the
// terminal's view of it.
func (t *turn) event(ev Event) {
	t.s.emit(ev)
	t.view(ev)
}

// view is what the streamed events show: answer text (laid out from its
// Markdown on a terminal), thinking dimmed on a terminal only (elsewhere
// it is not the answer, only noise), and notices on a dim line of their
// own. The status line, the question under share = "ask" and the summary
// line are drawn by the loop itself.
func (t *turn) view(ev Event) {
	switch ev.Kind {
	case EventText:
		t.out.answer(ev.Text)
	case EventThinking:
		if !t.s.cfg.Color {
			return
		}
		if !t.thinking && t.notices == t.out {
			t.out.endLine()
		}
		t.thinking = true
		t.notices.put(ev.Text, true)
	case EventNotice:
		if t.notices == t.out {
			t.out.endLine()
		}
		t.notices.put(ev.Text+"\n", true)
	}
}

// unconfigured emits a question that cannot be sent.
func (s *Session) unconfigured(q string) {
	s.emit(Event{Kind: EventQuestion, Model: s.cfg.Model, Text: s.keyless(q)})
	s.emit(Event{Kind: EventError, Text: NotConfigured, ErrorKind: ErrorNotConfigured})
}

// keyless redacts the API key from text the model wrote (arguments).
func (s *Session) keyless(text string) string {
	return redactKey(strings.ToValidUTF8(text, "\uFFFD"), s.cfg.APIKey)
}
