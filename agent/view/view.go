// Package view draws what the ai> loop tells of a question (agent/event)
// on a terminal, or as plain text for a pipe: the answer laid out from its
// Markdown (agent/markdown), thinking and notices on dim lines, the status
// line while nothing else is shown, the lines around the question under
// share = "ask", the end of the line Ctrl-C echoed ^C on, and the summary
// line. It is the only drawer of a question; the loop only emits events.
// Everything a model or a server sent is made visible (agent/termsafe)
// before pyaichat adds its own styling.
package view

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/markdown"
	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// Options say how questions look.
type Options struct {
	// Color says out is a terminal that shows colour: the summary line,
	// notices and thinking are dim, thinking is shown at all (elsewhere
	// it is not the answer, only noise), and the line of Ctrl-C's echoed
	// ^C is ended.
	Color bool
	// Terminal says out is a terminal, whether it shows colour or not:
	// answers are laid out from their Markdown to Width columns (nil:
	// 80), instead of written as the model sent them. Colors256 picks
	// the palette of highlighted code. StatusLine adds a redrawn line
	// with a spinner while the model thinks and while a tool runs (a
	// terminal that can erase a line: not TERM=dumb).
	Terminal   bool
	Width      func() int
	Colors256  bool
	StatusLine bool
}

// For is the agent's Config.View: each question gets a fresh view, shown
// as opts say.
func For(opts Options) event.NewView {
	return func(ctx context.Context, out, notices io.Writer) event.View {
		return newQuestion(ctx, opts, out, notices)
	}
}

// question is the view of one question.
type question struct {
	opts    Options
	ctx     context.Context // cancelled by Ctrl-C only
	out     *lineWriter
	notices *lineWriter // out itself unless notices go elsewhere (-p)
	status  *statusLine // nil unless Options.StatusLine
	// thinking is set while reasoning text is being shown.
	thinking bool
	// cancelled: the question ended by Ctrl-C; askCancelled: Ctrl-C came
	// while the user was being asked under share = "ask".
	cancelled, askCancelled bool
}

func newQuestion(ctx context.Context, opts Options, out, notices io.Writer) *question {
	q := &question{opts: opts, ctx: ctx}
	if notices == out {
		notices = nil
	}
	if opts.StatusLine {
		q.status = newStatusLine(out, opts.Color, opts.Width)
		out = statusGuard{q.status, out}
		if notices != nil {
			notices = statusGuard{q.status, notices}
		}
	}
	q.out = &lineWriter{w: out, color: opts.Color}
	if opts.Terminal {
		width := 80
		if opts.Width != nil {
			width = opts.Width()
		}
		q.out.md = markdown.New(out, markdown.Options{Width: width, Color: opts.Color, Colors256: opts.Colors256})
	}
	q.notices = q.out
	if notices != nil {
		q.notices = &lineWriter{w: notices, color: opts.Color}
	}
	return q
}

// Event shows one event of the question.
func (q *question) Event(ev event.Event) {
	if ev.Kind != event.Thinking {
		q.endThinking()
	}
	switch ev.Kind {
	case event.Busy:
		if ev.Tool == "" {
			// The next response's text starts on a line of its own, not
			// after whatever the last one said before its calls.
			q.out.endLine()
		}
		q.status.show(q.ctx, termsafe.Visible(ev.Text))
	case event.Text:
		q.out.answer(ev.Text)
	case event.Thinking:
		q.think(ev.Text)
	case event.Notice:
		if q.notices == q.out {
			q.out.endLine()
		}
		q.notices.put(ev.Text+"\n", true)
	case event.Cancelled:
		q.cancelled = true
	case event.Summary:
		q.end(ev.Summary)
	}
}

// think shows a piece of a reasoning model's thinking, dimmed, on a
// terminal only. Each piece is dimmed on its own (see dimLines).
func (q *question) think(text string) {
	if !q.opts.Color {
		return
	}
	if !q.thinking && q.notices == q.out {
		q.out.endLine()
	}
	q.thinking = true
	q.notices.put(text, true)
}

// endThinking ends the thinking's last line before anything else.
func (q *question) endThinking() {
	if q.thinking {
		q.notices.endLine()
		q.thinking = false
	}
}

// Confirm draws around the question under share = "ask", which ask puts
// on the terminal itself: the status line comes down for good (it would
// redraw over the question), and the question starts on a line of its
// own. If the question's deadline passes while the key is awaited, the
// question's line (where the hook writes: the notices') is ended here;
// a Ctrl-C's is ended with the question (end).
func (q *question) Confirm(ctx context.Context, o event.Outgoing, ask event.Confirm) (bool, error) {
	q.status.clear()
	q.endThinking()
	q.out.endLine()
	q.notices.endLine()
	ok, err := ask(ctx, o)
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		q.askCancelled = true
	case ctx.Err() != nil:
		q.notices.newLine()
	}
	return ok, err
}

// end is the end of the question: the status line comes down, the
// answer's line ends, and so does the line of the ^C that Ctrl-C echoed,
// then the summary line.
func (q *question) end(t *event.Totals) {
	q.status.clear()
	atLineStart := !q.out.midLine && !q.notices.midLine
	q.out.endLine()
	if q.cancelled && (q.opts.Color || q.askCancelled) && atLineStart {
		// On a terminal, Ctrl-C echoed "^C" at the start of a line (or
		// after a question to the user, which is asked on one): end
		// that line, so the summary and the REPL's next words do not
		// follow it on the same line.
		q.notices.newLine()
	}
	q.summary(t)
}

// summary is the dim line that ends a question: the calls made, what the
// user chose to send, what was redacted, the tokens used.
func (q *question) summary(t *event.Totals) {
	if t == nil || len(t.Calls) == 0 && t.Usage == nil {
		return
	}
	var parts []string
	if n := len(t.Calls); n > 0 {
		word := "calls"
		if n == 1 {
			word = "call"
		}
		parts = append(parts, fmt.Sprintf("%d %s: %s", n, word, strings.Join(t.Calls, ", ")))
	}
	if t.Sent+t.Declined > 0 {
		parts = append(parts, fmt.Sprintf("%d sent, %d declined", t.Sent, t.Declined))
	}
	if t.Redacted > 0 {
		parts = append(parts, fmt.Sprintf("%d redacted", t.Redacted))
	}
	if u := t.Usage; u != nil {
		parts = append(parts, fmt.Sprintf("tokens: %d in, %d out", u.PromptTokens, u.CompletionTokens))
	}
	q.notices.put("["+strings.Join(parts, " · ")+"]\n", true)
}

// CodeBlocks are the fenced code blocks of the answer as laid out on a
// terminal, in the order of their [N] labels.
func (q *question) CodeBlocks() []markdown.CodeBlock { return q.out.codeBlocks() }
