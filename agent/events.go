package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/pyaichat/pyaichat/agent/event"
)

// The events of a question are agent/event's, named again here so that
// whoever runs the loop reads them as the agent's.
type (
	// EventKind names what happened in a question.
	EventKind = event.Kind
	// Event is one thing that happened while a question was answered.
	Event = event.Event
	// View shows one question (agent/view on a terminal).
	View = event.View
)

// The kinds of event, in the order they can happen (see agent/event).
const (
	EventQuestion   = event.Question
	EventBusy       = event.Busy
	EventThinking   = event.Thinking
	EventText       = event.Text
	EventToolCall   = event.ToolCall
	EventToolResult = event.ToolResult
	EventNotice     = event.Notice
	EventAnswer     = event.Answer
	EventUsage      = event.Usage
	EventError      = event.Error
	EventCancelled  = event.Cancelled
	EventSummary    = event.Summary
	EventOutput     = event.Output
	EventListing    = event.Listing
)

// Error kinds of an EventError, by what the user can do about them.
const (
	ErrorNotConfigured = "not_configured" // no key for OpenAI's API
	ErrorBound         = "bound"          // a bound of the loop stopped it
	ErrorFailed        = "failed"         // the server, the network, the model
)

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

// ended emits how a question ended: its whole answer, its usage, its
// error or cancellation, and last the summary of what it did.
func (t *turn) ended(err error) {
	s := t.s
	if a := t.answered.String(); a != "" {
		t.event(Event{Kind: EventAnswer, Text: a})
	}
	ev := Event{Kind: EventUsage, Calls: len(t.calls)}
	if t.hasUse {
		u := t.usage
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
		u.Raw = nil
		ev.Usage = &u
	}
	t.event(ev)
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		t.event(Event{Kind: EventCancelled, Text: "question cancelled"})
	default:
		t.event(Event{Kind: EventError, Text: s.clean(err).Error(), ErrorKind: ErrorKindOf(err)})
	}
	t.event(Event{Kind: EventSummary, Summary: t.totals()})
}

// shown is answer text, made safe to show (the key filtered out across
// deltas), as it goes to the view and to Config.Events.
func (t *turn) shown(text string) {
	if text == "" {
		return
	}
	t.answered.WriteString(text)
	t.event(Event{Kind: EventText, Text: text})
}

// event hands one of a question's events to Config.Events and to the
// question's view.
func (t *turn) event(ev Event) {
	t.s.emit(ev)
	t.view.Event(ev)
}

// unconfigured emits a question that cannot be sent.
func (s *Session) unconfigured(q string) {
	q, _ = s.filter.Text(q)
	s.emit(Event{Kind: EventQuestion, Model: s.cfg.Model, Text: s.keyless(q)})
	s.emit(Event{Kind: EventError, Text: NotConfigured, ErrorKind: ErrorNotConfigured})
}

// keyless redacts the API key from text the model wrote (arguments).
func (s *Session) keyless(text string) string {
	return redactKey(strings.ToValidUTF8(text, "\uFFFD"), s.cfg.APIKey)
}
