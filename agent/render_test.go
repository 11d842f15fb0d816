package agent

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/agent/view"
)

// splitAll feeds text to a thinkSplit in the given pieces and returns the
// thinking and the answer it separated.
func splitAll(pieces []string) (think, answer string) {
	var s thinkSplit
	emit := func(th bool, text string) {
		if th {
			think += text
		} else {
			answer += text
		}
	}
	for _, p := range pieces {
		s.push(p, emit)
	}
	s.flush(emit)
	return think, answer
}

func TestThinkBlocksSplitAnywhere(t *testing.T) {
	cases := []struct{ in, think, answer string }{
		{"<think>\nplan: look at x\n</think>\n\nThe answer is **42**.\n", "plan: look at x\n", "The answer is **42**.\n"},
		{"Intro.\n<think>hmm</think>After.", "hmm", "Intro.\nAfter."},
		{"  <think>indented</think>ok", "indented", "  ok"},
		// Not at the start of a line: text about the tag.
		{"Use the `<think>` tag, and a < b </think>", "", "Use the `<think>` tag, and a < b </think>"},
		{"no tags at all <thin", "", "no tags at all <thin"},
		// Cut off inside a block: what came is thinking.
		{"<think>unfinished", "unfinished", ""},
		{"<thinking>not ours</thinking>", "", "<thinking>not ours</thinking>"},
	}
	for _, c := range cases {
		// Whole, every cut into two pieces, and a byte at a time.
		splits := [][]string{{c.in}}
		for i := 1; i < len(c.in); i++ {
			splits = append(splits, []string{c.in[:i], c.in[i:]})
		}
		splits = append(splits, strings.Split(c.in, ""))
		for _, pieces := range splits {
			think, answer := splitAll(pieces)
			if think != c.think || answer != c.answer {
				t.Fatalf("%q in pieces %q: thinking %q, answer %q; want %q, %q", c.in, pieces, think, answer, c.think, c.answer)
			}
		}
	}
}

const mdAnswer = "<think>\nthe user wants a table\n</think>\n\n# Result\n\nThe **total** is `42`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint(42)\n```\n"

// Not on a terminal (-p into a pipe) the answer is the model's Markdown as
// it came, without its <think> block.
func TestAskPrintsMarkdownWithoutThinking(t *testing.T) {
	f := newFake(t, textReply(mdAnswer))
	s := NewConversation(f.config(), &fakeTools{}, nil)
	var out strings.Builder
	if err := s.Ask(context.Background(), "q", &out); err != nil {
		t.Fatal(err)
	}
	want := strings.TrimPrefix(mdAnswer, "<think>\nthe user wants a table\n</think>\n\n")
	if got := out.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// Nor is the thinking kept in the conversation sent back next time.
	if h := s.History(); len(h) != 2 || h[1].Content != want {
		t.Errorf("history %+v", h)
	}
}

var sgrRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

// On a terminal the answer is laid out: no Markdown markers, styling with
// colour, the thinking dim and apart from the answer.
func TestTerminalAnswerIsRendered(t *testing.T) {
	for _, color := range []bool{true, false} {
		f := newFake(t, textReply(mdAnswer))
		cfg := f.config()
		cfg.View = view.For(view.Options{Terminal: true, Color: color, Width: func() int { return 40 }})
		s := NewConversation(cfg, &fakeTools{}, nil)
		out := newSyncBuffer()
		if err := s.Handle(context.Background(), "q", out); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		text := sgrRE.ReplaceAllString(got, "")
		for _, marker := range []string{"**", "# Result", "```", "|---"} {
			if strings.Contains(text, marker) {
				t.Errorf("color %v: marker %q shown: %q", color, marker, got)
			}
		}
		for _, want := range []string{"Result\n", "The total is 42.", "│ 1 │ 2 │", "[1] python\nprint(42)\n"} {
			if !strings.Contains(text, want) {
				t.Errorf("color %v: %q not shown: %q", color, want, text)
			}
		}
		if color != strings.Contains(got, "\x1b[") {
			t.Errorf("color %v, escapes: %q", color, got)
		}
		if color && !strings.Contains(got, "\x1b[2mthe ") || !strings.HasPrefix(text, "the user wants a table\n") && color {
			t.Errorf("thinking not shown dim: %q", got)
		}
		if strings.Index(text, "the user wants") > strings.Index(text, "Result") {
			t.Errorf("thinking shown after the answer: %q", text)
		}
		if b := s.CodeBlocks(); len(b) != 1 || b[0].Lang != "python" || b[0].Text != "print(42)\n" {
			t.Errorf("code blocks %+v", b)
		}
	}
}

// screen replays terminal output the way a terminal shows it, for what
// the status line writes: \r goes back to the start of the line, ESC[K
// erases to its end; SGR styling is dropped.
func screen(out string) string {
	out = sgrRE.ReplaceAllString(out, "")
	var lines []string
	var line []rune
	col := 0
	for i := 0; i < len(out); {
		switch {
		case strings.HasPrefix(out[i:], "\x1b[K"):
			line = line[:col]
			i += 3
			continue
		case out[i] == '\r':
			col = 0
		case out[i] == '\n':
			lines = append(lines, string(line))
			line, col = nil, 0
		default:
			r := []rune(out[i:])[0]
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
			i += len(string(r))
			continue
		}
		i++
	}
	return strings.Join(append(lines, string(line)), "\n")
}

// waitFor polls out until it holds want; a hang guard, not a timing test.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never shown: %q", want, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// spinnerFrames are the status line's (agent/view).
const spinnerFrames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

// The status line shows while the model has said nothing and while a tool
// runs, and is gone from the screen when the answer comes.
func TestStatusLineWhileWaiting(t *testing.T) {
	release, toolRelease := make(chan struct{}), make(chan struct{})
	call := toolReply("", fcall{"c1", "get_repr", `{"expr":"df"}`})
	call.Before = release
	f := newFake(t, call, textReply("The frame is empty."))
	tools := &fakeTools{fn: func(ctx context.Context, name string, _ json.RawMessage) (string, bool) {
		<-toolRelease
		return `{"repr":"df"}`, false
	}}
	cfg := f.config()
	cfg.View = view.For(view.Options{Terminal: true, Color: true, StatusLine: true, Width: func() int { return 60 }})
	s := NewConversation(cfg, tools, nil)
	out := newSyncBuffer()
	done := make(chan error, 1)
	go func() { done <- s.Handle(context.Background(), "q", out) }()
	waitFor(t, out, "thinking")
	close(release)
	waitFor(t, out, "get_repr(df)")
	close(toolRelease)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := out.String()
	final := screen(got)
	if strings.Contains(final, "thinking") || strings.ContainsAny(final, spinnerFrames) {
		t.Errorf("the status line is left on the screen:\n%s\n(raw %q)", final, got)
	}
	if !strings.HasPrefix(final, "The frame is empty.\n[1 call: get_repr(df)") {
		t.Errorf("screen:\n%s\n(raw %q)", final, got)
	}
	// Each frame is erased before the answer's first byte.
	if i, j := strings.LastIndex(got, "thinking"), strings.Index(got, "The frame"); i > j || !strings.Contains(got[i:j], "\r\x1b[K") {
		t.Errorf("answer written over the status line: %q", got)
	}
}

// Ctrl-C while the status line is up: it is erased, and the ^C the REPL
// echoed on its line stays.
func TestStatusLineCancelled(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, hangBeforeHeaders(release))
	cfg := f.config()
	cfg.View = view.For(view.Options{Terminal: true, Color: true, StatusLine: true})
	s := NewConversation(cfg, &fakeTools{}, nil)
	out := newSyncBuffer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Handle(ctx, "q", out) }()
	waitFor(t, out, "thinking")
	cancel()
	if err := <-done; err == nil {
		t.Fatal("no error after Ctrl-C")
	}
	if final := screen(out.String()); final != "^C\n" {
		t.Errorf("screen after Ctrl-C %q (raw %q)", final, out.String())
	}
}

// No status line is drawn where it is not asked for (a pipe, TERM=dumb).
func TestNoStatusLineOffTerminal(t *testing.T) {
	f := newFake(t, toolReply("", fcall{"c1", "get_type", `{"expr":"x"}`}), textReply("done"))
	cfg := f.config()
	s := NewConversation(cfg, &fakeTools{fn: func(ctx context.Context, _ string, _ json.RawMessage) (string, bool) {
		time.Sleep(300 * time.Millisecond) // three frames of a status line, were there one
		return "{}", false
	}}, nil)
	var out strings.Builder
	if err := s.Ask(context.Background(), "q", &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "done\n" {
		t.Errorf("got %q", out.String())
	}
}
