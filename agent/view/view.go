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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

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
	// Echo says Ctrl-C comes from a terminal that does not echo it while
	// a line is answered (the REPL's): the view shows ^C where the cursor
	// is when it comes, and ends its line with the answer. Cancelled,
	// when set, is the line that follows ("(cancelled)" at ai>; -p says
	// so on stderr instead).
	Echo      bool
	Cancelled string
}

// For is the agent's Config.View: each question gets a fresh view, shown
// as opts say.
func For(opts Options) event.NewView {
	return func(ctx context.Context, out, notices io.Writer) event.View {
		return newQuestion(ctx, opts, out, notices)
	}
}

// question is the view of one question (or command: see Session.Handle).
type question struct {
	opts    Options
	ctx     context.Context // cancelled by Ctrl-C only
	out     *lineWriter
	notices *lineWriter // out itself unless notices go elsewhere (-p)
	status  *statusLine // nil unless Options.StatusLine
	// thinking is set while reasoning text is being shown.
	thinking bool
	// width is the terminal's, in columns, when the question started.
	width int
	// cancelled: the question ended by Ctrl-C; askCancelled: Ctrl-C came
	// while the user was being asked under share = "ask".
	cancelled, askCancelled bool

	// mu owns the terminal: every write of the question's (guarded),
	// the status line's frames and Ctrl-C's echo (on its own goroutine)
	// hold it.
	mu       sync.Mutex
	terminal io.Writer // out itself, for the echo
	// echoed: ^C was shown; ctrlCLine: nothing has ended its line since
	// (both under mu).
	echoed, ctrlCLine bool
	stopEcho          func() bool // stops echoing Ctrl-C when it comes
}

func newQuestion(ctx context.Context, opts Options, out, notices io.Writer) *question {
	q := &question{opts: opts, ctx: ctx, terminal: out, stopEcho: func() bool { return false }}
	if notices == out {
		notices = nil
	}
	if opts.StatusLine {
		q.status = newStatusLine(out, &q.mu, opts)
	}
	out = guarded{q, out}
	if notices != nil {
		notices = guarded{q, notices}
	}
	q.out = &lineWriter{w: out, color: opts.Color}
	if opts.Terminal {
		q.width = 80
		if opts.Width != nil {
			q.width = opts.Width()
		}
		q.out.md = markdown.New(out, markdown.Options{Width: q.width, Color: opts.Color, Colors256: opts.Colors256})
	}
	q.notices = q.out
	if notices != nil {
		q.notices = &lineWriter{w: notices, color: opts.Color}
	}
	if opts.Echo {
		q.stopEcho = context.AfterFunc(ctx, q.echo)
	}
	return q
}

// echo shows Ctrl-C's ^C where the cursor is, as the terminal would have
// had it echoed, as soon as it comes (it runs on a goroutine of its own
// then), and in any case before whatever the question shows after it.
func (q *question) echo() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.echoLocked()
}

// echoLocked shows the ^C once Ctrl-C came, once, the status line taken
// down first (a frame would erase it).
func (q *question) echoLocked() {
	if !q.opts.Echo || q.echoed || q.ctx.Err() == nil {
		return
	}
	if q.status != nil {
		q.status.clearLocked()
	}
	io.WriteString(q.terminal, "^C")
	q.echoed, q.ctrlCLine = true, true
}

// guarded is the writer of everything the question shows: each write
// holds the terminal, takes the status line down first, and notes whether
// it ended the line of an echoed ^C.
type guarded struct {
	q *question
	w io.Writer
}

func (g guarded) Write(p []byte) (int, error) {
	q := g.q
	q.mu.Lock()
	defer q.mu.Unlock()
	q.echoLocked()
	if s := q.status; s != nil && (s.label != "" || s.shown) {
		s.clearLocked()
	}
	if q.ctrlCLine && bytes.IndexByte(p, '\n') >= 0 {
		q.ctrlCLine = false
	}
	return g.w.Write(p)
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
	case event.Output:
		q.out.write(q.wrapped(ev.Text))
	case event.Listing:
		q.out.write(ev.Text)
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
// then the summary line, and the line that says it was cancelled.
func (q *question) end(t *event.Totals) {
	q.stopEcho()
	q.mu.Lock()
	q.echoLocked()
	q.mu.Unlock()
	q.status.clear()
	atLineStart := !q.out.midLine && !q.notices.midLine
	q.out.endLine()
	q.mu.Lock()
	echoed, ctrlCLine := q.echoed, q.ctrlCLine
	q.mu.Unlock()
	// End the line of the ^C, so that the summary and what follows are
	// not on it: the view's own when nothing ended it since, or, where
	// the terminal echoed it, at the start of a line (or after a question
	// to the user, which is asked on one) on a colour terminal, the sign
	// that it did.
	if ctrlCLine || !q.opts.Echo && atLineStart && q.cancelled && (q.opts.Color || q.askCancelled) {
		q.notices.newLine()
	}
	q.summary(t)
	if q.opts.Cancelled != "" && (q.cancelled || echoed) {
		q.notices.put(q.opts.Cancelled+"\n", false)
	}
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
		if sp := t.Spend; sp != nil {
			if sp.Window > 0 { // else it says no more than the tokens in
				parts = append(parts, "context "+sp.Share())
			}
			if sp.CostUSD != nil {
				parts = append(parts, event.FormatUSD(*sp.CostUSD))
			}
		}
	}
	q.notices.put("["+strings.Join(parts, " · ")+"]\n", true)
}

// wrapped is pyaichat's own prose broken at words to the terminal's width
// (a terminal breaks mid-word); elsewhere it is left as it is.
func (q *question) wrapped(text string) string {
	if !q.opts.Terminal {
		return text
	}
	return markdown.Wrap(text, q.width)
}
