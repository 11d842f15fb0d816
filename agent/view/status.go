package view

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pyaichat/pyaichat/termwidth"
)

// statusLine is the one line that shows the assistant at work while
// nothing else is shown: "⠋ thinking 2.1s" from the question until the
// first text, "⠋ get_repr(df) 0.3s" while a tool runs. It is redrawn in
// place ten times a second and erased, with \r and erase-line, before
// anything else is written (guarded), so it never mixes with the
// answer and is never left on the screen.
//
// Its mutex, the question's, owns the terminal while the line is up: the
// redrawing goroutine draws only while holding it with a label set, and
// every other write goes through guarded, which clears the label and
// erases the line under the same mutex first. So no frame can follow, or
// interleave with, the answer.
type statusLine struct {
	w     io.Writer // the terminal itself
	color bool
	width func() int
	// redrawCtrlC: someone else (the terminal) echoes Ctrl-C's ^C, which
	// the line's erasing must put back.
	redrawCtrlC bool

	mu    *sync.Mutex
	ctx   context.Context
	label string
	start time.Time
	frame int
	shown bool
	stop  chan struct{} // closed to end the redrawing goroutine
}

const statusTick = 100 * time.Millisecond

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func newStatusLine(w io.Writer, mu *sync.Mutex, o Options) *statusLine {
	return &statusLine{w: w, mu: mu, color: o.Color, width: o.Width, redrawCtrlC: !o.Echo}
}

// show puts up the line with label (already visible text), its clock from
// zero; the first frame comes after one tick, so that a quick answer
// never flickers.
func (s *statusLine) show(ctx context.Context, label string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctx, s.label, s.start = ctx, label, time.Now()
	if s.stop == nil {
		s.stop = make(chan struct{})
		go s.run(ctx, s.stop)
	}
}

func (s *statusLine) run(ctx context.Context, stop chan struct{}) {
	t := time.NewTicker(statusTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			// Ctrl-C: erase at once rather than at the next write.
			s.clear()
			return
		case <-t.C:
			s.mu.Lock()
			if s.label != "" {
				s.draw()
			}
			s.mu.Unlock()
		}
	}
}

func (s *statusLine) draw() {
	text := fmt.Sprintf("%s %s %.1fs", spinner[s.frame%len(spinner)], s.label, time.Since(s.start).Seconds())
	s.frame++
	width := 80
	if s.width != nil {
		width = s.width()
	}
	// One column short of the width: a line that wrapped could not be
	// erased with one erase-line.
	text = termwidth.Truncate(text, max(width-1, 10), "…")
	if s.color {
		text = "\x1b[2m" + text + "\x1b[0m"
	}
	io.WriteString(s.w, "\r\x1b[K"+text)
	s.shown = true
}

// clear takes the line down and stops redrawing it.
func (s *statusLine) clear() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
}

func (s *statusLine) clearLocked() {
	s.label = ""
	if s.stop != nil {
		close(s.stop)
		s.stop = nil
	}
	if !s.shown {
		return
	}
	s.shown = false
	msg := "\r\x1b[K"
	if s.redrawCtrlC && s.ctx != nil && s.ctx.Err() != nil {
		// Ctrl-C (the view's context ends by nothing else), which the
		// terminal echoed where the cursor was, on this line: a frame
		// may have overwritten it and erasing it would lose it for good,
		// so it is shown again where it would have been.
		msg += "^C"
	}
	io.WriteString(s.w, msg)
}
