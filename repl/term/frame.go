package term

import (
	"io"
	"slices"
	"sync"
)

// frameWriter sends the line editor's output to the terminal one frame at a
// time: the drawings made while the editor handles keys are gathered
// (hold), and they go out together when it waits for more or returns a
// line, shortened to what changed on the screen (redrawShortener). The prompt's lead-in,
// the bracketed paste switch and the prompt are one frame in the same way.
// A key typed at the end of the line may be echoed ahead of the frame
// (echo), straight to the terminal.
type frameWriter struct {
	dst io.Writer
	// echoDst is where keys echoed ahead (echo) go: dst, or the
	// terminal's echoWriter.
	echoDst io.Writer
	// redraws makes each frame of redraws as short as the screen allows.
	redraws redrawShortener

	mu      sync.Mutex
	buf     []byte
	holding bool // writes are gathered, not sent
}

func newFrameWriter(dst io.Writer) *frameWriter {
	return &frameWriter{dst: dst, echoDst: dst}
}

// Write holds p while a frame is being gathered (hold), and writes it
// straight through otherwise (what the editor writes around its
// drawings: a clear screen, a line before $EDITOR runs).
func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.holding {
		f.redraws.forget()
		return f.dst.Write(p)
	}
	f.buf = append(f.buf, p...)
	return len(p), nil
}

// echo writes e, the drawing of a key at the end of the line, straight to
// the terminal, ahead of the editor's redraw for it, if the screen holds
// the last frame's drawing and nothing is held; the redraw, which draws
// the same and perhaps a suggestion after it, then comes to that
// suggestion at most (see redrawShortener.extends). written is how much
// of it the wait that read the key wrote already (ReadAhead), and only
// the rest is written here. It reports whether the screen shows the key;
// where it does not and the wait wrote some of it, the next drawing is
// whole.
func (f *frameWriter) echo(e aheadEcho, written int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	before, ok := f.echoPrefixLocked(e)
	if !ok {
		if written > 0 {
			f.redraws.forget()
		}
		return false
	}
	if written < len(before)+len(e.key) {
		if _, err := f.echoDst.Write(slices.Concat(before, e.key)[written:]); err != nil {
			f.redraws.forget()
			return false
		}
	}
	f.redraws.drawn = append(f.redraws.drawn[:e.keep], e.key...)
	return true
}

// echoPrefix is what echo would write before the key of e (a plan
// without the key: lineView.echoPlan), and the descriptor the key's echo
// goes to; ok is false where echo would write nothing.
func (f *frameWriter) echoPrefix(e aheadEcho) (before []byte, fd int, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w, isEcho := f.echoDst.(*echoWriter)
	if !isEcho || w.fd < 0 {
		return nil, -1, false
	}
	before, ok = f.echoPrefixLocked(e)
	return before, w.fd, ok
}

func (f *frameWriter) echoPrefixLocked(e aheadEcho) ([]byte, bool) {
	if len(f.buf) > 0 || f.redraws.drawn == nil || len(f.redraws.drawn) != e.drawnLen {
		return nil, false
	}
	if e.erase == nil {
		return []byte{}, true
	}
	return slices.Concat(e.erase, f.redraws.drawn[:e.keep]), true
}

// forget makes the next drawing whole: the screen may not show the last.
func (f *frameWriter) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.redraws.forget()
}

// hold starts gathering a frame: the prompt's, or a key's drawing. It
// goes out when the editor waits for keys (readerWaits) or returns
// (flush); keys typed ahead are all handled before that, and drawn once.
func (f *frameWriter) hold() {
	f.mu.Lock()
	f.holding = true
	f.mu.Unlock()
}

// readerWaits is told when the editor blocks for input (true) and when
// input arrives (false): the frame is complete once it waits.
func (f *frameWriter) readerWaits(w bool) {
	if w {
		f.flush()
	}
}

// flush writes out whatever is held: the editor waits or returned.
func (f *frameWriter) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushLocked()
}

func (f *frameWriter) flushLocked() {
	f.holding = false
	if len(f.buf) == 0 {
		return
	}
	// A terminal that went away is the REPL's to notice, on its next
	// read; the editor has no use for the error.
	if out := f.redraws.frame(f.buf); len(out) > 0 {
		_, _ = f.dst.Write(out)
	}
	f.buf = f.buf[:0]
}
