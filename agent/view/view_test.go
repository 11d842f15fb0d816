package view

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/llm"
)

// show feeds evs to a question's view over out and notices (nil: out).
func show(ctx context.Context, opts Options, out, notices *bytes.Buffer, evs ...event.Event) event.View {
	n := out
	if notices != nil {
		n = notices
	}
	v := For(opts)(ctx, out, n)
	for _, ev := range evs {
		v.Event(ev)
	}
	return v
}

func summary(calls ...string) event.Event {
	return event.Event{Kind: event.Summary, Summary: &event.Totals{Calls: calls, Usage: &llm.Usage{PromptTokens: 7, CompletionTokens: 3}}}
}

// In a pipe the answer is the model's text as it came, and the summary a
// plain line of its own after it; what only records the question draws
// nothing.
func TestPlainQuestion(t *testing.T) {
	var out bytes.Buffer
	show(context.Background(), Options{}, &out, nil,
		event.Event{Kind: event.Question, Text: "q"},
		event.Event{Kind: event.Busy, Text: "thinking"},
		event.Event{Kind: event.Text, Text: "x is "},
		event.Event{Kind: event.Text, Text: "**1**"},
		event.Event{Kind: event.ToolCall, ID: "c1", Tool: "get_type", Args: "{}"},
		event.Event{Kind: event.ToolResult, ID: "c1", Result: "{}"},
		event.Event{Kind: event.Thinking, Text: "not shown off a colour terminal"},
		event.Event{Kind: event.Answer, Text: "x is **1**"},
		event.Event{Kind: event.Usage},
		summary("get_type(x)", "get_repr(y)"),
	)
	if got, want := out.String(), "x is **1**\n[2 calls: get_type(x), get_repr(y) · tokens: 7 in, 3 out]\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// On a colour terminal thinking, notices and the summary are dim, each on
// lines of their own; the newlines stay outside the colour.
func TestColourQuestion(t *testing.T) {
	var out bytes.Buffer
	show(context.Background(), Options{Color: true}, &out, nil,
		event.Event{Kind: event.Thinking, Text: "hmm\nso"},
		event.Event{Kind: event.Text, Text: "Yes"},
		event.Event{Kind: event.Notice, Text: "(retrying)"},
		event.Event{Kind: event.Summary, Summary: &event.Totals{Calls: []string{"f()"}, Sent: 1, Declined: 2, Redacted: 3}},
	)
	want := "\x1b[2mhmm\x1b[0m\n\x1b[2mso\x1b[0m\nYes\n\x1b[2m(retrying)\x1b[0m\n\x1b[2m[1 call: f() · 1 sent, 2 declined · 3 redacted]\x1b[0m\n"
	if got := out.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// What a model or server sent cannot drive the terminal: its controls
// are spelled out, in the answer, notices and summary alike.
func TestControlsAreMadeVisible(t *testing.T) {
	var out bytes.Buffer
	show(context.Background(), Options{Color: true}, &out, nil,
		event.Event{Kind: event.Text, Text: "a\x1b]0;pwned\x07b"},
		event.Event{Kind: event.Notice, Text: "\x1b[2J"},
		summary("f(\x1b[31m)"),
	)
	got := strings.ReplaceAll(strings.ReplaceAll(out.String(), "\x1b[2m", ""), "\x1b[0m", "")
	if strings.ContainsRune(got, '\x1b') || !strings.Contains(got, `a\x1b]0;pwned\x07b`) || !strings.Contains(got, `f(\x1b[31m)`) {
		t.Errorf("got %q", out.String())
	}
}

// -p: the answer alone on out, notices and the summary on their own
// writer.
func TestNoticesElsewhere(t *testing.T) {
	var out, notices bytes.Buffer
	show(context.Background(), Options{}, &out, &notices,
		event.Event{Kind: event.Notice, Text: "(retrying)"},
		event.Event{Kind: event.Text, Text: "answer"},
		summary(),
	)
	if out.String() != "answer\n" || notices.String() != "(retrying)\n[tokens: 7 in, 3 out]\n" {
		t.Errorf("out %q, notices %q", out.String(), notices.String())
	}
}

// Ctrl-C: the ^C the REPL echoed at the start of a line has its line
// ended, once; after an answer's text, ending the answer's line is enough.
func TestCancelledLine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cancelled := event.Event{Kind: event.Cancelled, Text: "question cancelled"}
	end := event.Event{Kind: event.Summary, Summary: &event.Totals{}}
	for _, c := range []struct {
		name string
		opts Options
		evs  []event.Event
		want string
	}{
		{"colour, nothing shown", Options{Color: true}, []event.Event{cancelled, end}, "\n"},
		{"colour, after text", Options{Color: true}, []event.Event{{Kind: event.Text, Text: "par"}, cancelled, end}, "par\n"},
		{"pipe", Options{}, []event.Event{cancelled, end}, ""},
		{"status line up", Options{Color: true, StatusLine: true}, []event.Event{{Kind: event.Busy, Text: "thinking"}, cancelled, end}, "\n"},
	} {
		var out bytes.Buffer
		show(ctx, c.opts, &out, nil, c.evs...)
		if out.String() != c.want {
			t.Errorf("%s: got %q, want %q", c.name, out.String(), c.want)
		}
	}
}

// Under share = "ask" the question starts on a line of its own; a
// deadline while it waits ends its line at once, a Ctrl-C with the
// question, even off a colour terminal.
func TestConfirmLines(t *testing.T) {
	ask := func(ctx context.Context, o event.Outgoing) (bool, error) {
		return false, ctx.Err()
	}
	o := event.Outgoing{Tool: "get_repr"}

	var out bytes.Buffer
	v := show(context.Background(), Options{}, &out, nil, event.Event{Kind: event.Text, Text: "let me look"})
	deadline, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-deadline.Done()
	if ok, _ := v.Confirm(deadline, o, ask); ok {
		t.Fatal("confirmed")
	}
	if out.String() != "let me look\n\n" {
		t.Errorf("deadline: %q", out.String())
	}

	out.Reset()
	ctx, stop := context.WithCancel(context.Background())
	v = show(ctx, Options{}, &out, nil)
	stop()
	v.Confirm(ctx, o, ask)
	v.Event(event.Event{Kind: event.Cancelled})
	v.Event(event.Event{Kind: event.Summary, Summary: &event.Totals{}})
	if out.String() != "\n" {
		t.Errorf("Ctrl-C: %q", out.String())
	}
}

// syncBuffer is written by the status line's goroutine and read by the
// test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The status line is drawn while nothing else is shown and erased before
// the answer; it never wraps, so one erase-line takes it down.
func TestStatusLineIsErasedBeforeTheAnswer(t *testing.T) {
	var out syncBuffer
	v := For(Options{StatusLine: true, Width: func() int { return 20 }})(context.Background(), &out, &out)
	v.Event(event.Event{Kind: event.Busy, Tool: "get_repr", Text: "get_repr(a_rather_long_expression)"})
	for !strings.Contains(out.String(), "get_repr") {
		// The first frame comes after one tick.
		<-tickOnce()
	}
	v.Event(event.Event{Kind: event.Text, Text: "done"})
	v.Event(event.Event{Kind: event.Summary})
	got := out.String()
	parts := strings.Split(got, "\r\x1b[K")
	if parts[0] != "" || parts[len(parts)-1] != "done\n" || len(parts) < 3 {
		t.Fatalf("want frames, each erased, then the answer: %q", got)
	}
	for _, frame := range parts[1 : len(parts)-1] {
		if frame != "" && (len([]rune(frame)) > 19 || !strings.HasSuffix(frame, "…")) {
			t.Errorf("frame %q is not cut to the width", frame)
		}
	}
}

func tickOnce() <-chan time.Time { return time.After(statusTick) }

// Where the terminal does not echo Ctrl-C (the REPL's, while a line is
// answered), the view shows ^C at once where the cursor is, the status
// line taken down first, and ends the question with its line, then the
// line that says it was cancelled: in that order, whatever the colour.
func TestCtrlCLine(t *testing.T) {
	for _, c := range []struct {
		name   string
		opts   Options
		before []event.Event
		want   string
	}{
		{"after a line of answer", Options{Echo: true, Cancelled: "(cancelled)"},
			[]event.Event{{Kind: event.Text, Text: "first line\n"}}, "first line\n^C\n(cancelled)\n"},
		{"mid-line", Options{Echo: true, Cancelled: "(cancelled)"},
			[]event.Event{{Kind: event.Text, Text: "first"}}, "first^C\n(cancelled)\n"},
		{"-p: no cancelled line", Options{Echo: true, Color: true},
			nil, "^C\n"},
		{"status line up", Options{Echo: true, StatusLine: true, Cancelled: "(cancelled)"},
			[]event.Event{{Kind: event.Busy, Text: "thinking"}}, "^C\n(cancelled)\n"},
	} {
		var out syncBuffer
		ctx, cancel := context.WithCancel(context.Background())
		v := For(c.opts)(ctx, &out, &out)
		for _, ev := range c.before {
			v.Event(ev)
		}
		cancel()
		for !strings.Contains(out.String(), "^C") {
			<-tickOnce() // the echo comes on a goroutine of its own
		}
		v.Event(event.Event{Kind: event.Cancelled})
		v.Event(event.Event{Kind: event.Summary, Summary: &event.Totals{}})
		if got := out.String(); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
