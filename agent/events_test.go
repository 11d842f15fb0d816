package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/event"
)

type eventLog struct{ evs []event.Event }

func (l *eventLog) add(ev event.Event) { l.evs = append(l.evs, ev) }

// records are the events a record of the question keeps: all but those
// that only serve to show it (the status line's, the summary).
func (l *eventLog) records() []event.Event {
	var r []event.Event
	for _, ev := range l.evs {
		if !ev.Kind.Shown() {
			r = append(r, ev)
		}
	}
	return r
}

// last is the last event kept for a record.
func (l *eventLog) last() event.Event {
	r := l.records()
	return r[len(r)-1]
}

func (l *eventLog) kinds() string {
	var k []string
	for _, ev := range l.records() {
		if ev.Kind != event.Text {
			k = append(k, string(ev.Kind))
		}
	}
	return strings.Join(k, ",")
}

// A question with a tool call emits, in order, the question, the call
// with its arguments, the result exactly as sent (key redacted by the
// filter), the answer text as pieces and whole, and the usage; the
// terminal output is what it was without events.
func TestEventsOfAQuestion(t *testing.T) {
	f := newFake(t,
		toolReply("", fcall{"call_a", "get_repr", `{"expr":"k"}`}),
		textReply("k holds a key."),
	)
	tools := &fakeTools{fn: func(context.Context, string, json.RawMessage) (string, bool) {
		return `{"repr":"'` + testKey + `'"}`, false
	}}
	var log eventLog
	cfg := f.config()
	cfg.Events = log.add
	s := NewConversation(cfg, tools, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "what is k?", out); err != nil {
		t.Fatal(err)
	}
	if got, want := log.kinds(), "question,tool_call,tool_result,answer,usage"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	ev := log.records()
	if ev[0].Text != "what is k?" || ev[0].Model != "test-model" {
		t.Errorf("question event %+v", ev[0])
	}
	if ev[1].ID != "call_a" || ev[1].Tool != "get_repr" || ev[1].Args != `{"expr":"k"}` {
		t.Errorf("tool call event %+v", ev[1])
	}
	sent := toolResults(f.requests()[1])["call_a"]
	if ev[2].Result != sent || ev[2].Size != len(sent) || strings.Contains(sent, testKey) {
		t.Errorf("tool result event %q (%d), sent %q", ev[2].Result, ev[2].Size, sent)
	}
	var text strings.Builder
	for _, e := range ev {
		if e.Kind == event.Text {
			text.WriteString(e.Text)
		}
	}
	answer := ev[len(ev)-2]
	if text.String() != "k holds a key." || answer.Text != text.String() {
		t.Errorf("text %q, answer %q", text.String(), answer.Text)
	}
	if u := ev[len(ev)-1]; u.Usage == nil || u.Usage.PromptTokens != 200 || u.Calls != 1 {
		t.Errorf("usage event %+v", u)
	}
	// What shows the question has two more: what it waits for, and last
	// the summary.
	if all := log.evs; all[1].Kind != event.Busy || all[1].Tool != "" || all[len(all)-1].Kind != event.Summary {
		t.Errorf("events %+v: want busy second, summary last", all)
	} else if sum := all[len(all)-1].Summary; len(sum.Calls) != 1 || sum.Calls[0] != "get_repr(k)" || sum.Usage == nil {
		t.Errorf("summary %+v", sum)
	}
	if !strings.HasPrefix(out.String(), "k holds a key.\n[1 call: get_repr(k)") {
		t.Errorf("terminal output changed: %q", out.String())
	}
}

// A failing server ends the question with an error event of kind
// "failed"; a step bound with kind "bound"; no key with "not_configured".
func TestEventsOfFailures(t *testing.T) {
	f := newFake(t, raw(400, "application/json", `{"error":{"message":"bad model"}}`))
	var log eventLog
	cfg := f.config()
	cfg.Events = log.add
	s := NewConversation(cfg, nil, nil)
	err := s.Ask(context.Background(), "q", newSyncBuffer())
	last := log.last()
	if err == nil || last.Kind != event.Error || last.ErrorKind != ErrorFailed || last.Text != err.Error() {
		t.Errorf("server failure: err %v, last event %+v", err, last)
	}

	f = newFake(t,
		toolReply("", fcall{"c1", "get_type", `{"expr":"a"}`}),
		toolReply("", fcall{"c2", "get_type", `{"expr":"b"}`}),
	)
	log = eventLog{}
	cfg = f.config()
	cfg.Events, cfg.MaxSteps = log.add, 1
	s = NewConversation(cfg, &fakeTools{}, nil)
	err = s.Ask(context.Background(), "q", newSyncBuffer())
	last = log.last()
	if !isBound(err) || last.Kind != event.Error || last.ErrorKind != ErrorBound {
		t.Errorf("bound: err %v, last event %+v", err, last)
	}

	log = eventLog{}
	s = NewConversation(Config{Events: log.add}, nil, nil)
	if err := s.Ask(context.Background(), "q", newSyncBuffer()); ErrorKindOf(err) != ErrorNotConfigured {
		t.Errorf("no key: %v", err)
	}
	if log.kinds() != "question,error" || log.evs[1].ErrorKind != ErrorNotConfigured {
		t.Errorf("no key: events %+v", log.evs)
	}
}

// Ctrl-C ends the question with a cancelled event.
func TestEventsOfCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, hangBeforeHeaders(release))
	var log eventLog
	cfg := f.config()
	cfg.Events = log.add
	s := NewConversation(cfg, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Ask(ctx, "q", newSyncBuffer())
	if last := log.last(); last.Kind != event.Cancelled {
		t.Errorf("events %+v, want cancelled last", log.evs)
	}
}
