package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/llm"
)

// Error kinds of an event.Error event, by what the user can do about them.
const (
	ErrorNotConfigured = "not_configured" // no key for OpenAI's API
	ErrorBound         = "bound"          // a bound of the loop stopped it
	ErrorFailed        = "failed"         // the server, the network, the model
)

// emit hands ev to Config.Events, if set.
func (s *Conversation) emit(ev event.Event) {
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
		t.event(event.Event{Kind: event.Answer, Text: a})
	}
	ev := event.Event{Kind: event.Usage, Calls: len(t.calls)}
	if t.hasUse {
		u := t.usage
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
		u.Raw = nil
		ev.Usage = &u
		t.spent = s.spend(u, t.lastPrompt)
		ev.Spend = t.spent
		s.used.add(u, t.spent)
	}
	t.event(ev)
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		t.event(event.Event{Kind: event.Cancelled, Text: "question cancelled"})
	default:
		t.event(event.Event{Kind: event.Error, Text: s.clean(err).Error(), ErrorKind: ErrorKindOf(err)})
	}
	t.event(event.Event{Kind: event.Summary, Summary: t.totals()})
}

// shown is answer text, made safe to show (the key filtered out across
// deltas), as it goes to the view and to Config.Events.
func (t *turn) shown(text string) {
	if text == "" {
		return
	}
	t.answered.WriteString(text)
	t.event(event.Event{Kind: event.Text, Text: text})
}

// event hands one of a question's events to Config.Events and to the
// question's view.
func (t *turn) event(ev event.Event) {
	t.s.emit(ev)
	t.view.Event(ev)
}

// unconfigured emits a question that cannot be sent.
func (s *Conversation) unconfigured(q string) {
	q, _ = s.filter.Text(q)
	s.emit(event.Event{Kind: event.Question, Model: s.cfg.Model, Text: s.keyless(q)})
	s.emit(event.Event{Kind: event.Error, Text: NotConfigured, ErrorKind: ErrorNotConfigured})
}

// keyless redacts the API key from text the model wrote (arguments).
func (s *Conversation) keyless(text string) string {
	return llm.RedactKey(strings.ToValidUTF8(text, "\uFFFD"), s.cfg.APIKey)
}
