package term

import (
	"io"
	"slices"
	"sync"
	"time"

	"github.com/pyaichat/pyaichat/repl/quiet"
)

// frameWriter sends the line editor's output to the terminal one frame at a
// time: the writes made while the editor handles keys are gathered, and
// they go out together when it waits for more or returns a line, shortened
// to what changed on the screen (redrawShortener). The prompt's lead-in,
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
	inKey   bool // the editor is handling a key
	waiting bool // the editor's reader is blocked waiting for keys
	// expiry flushes a frame held maxHold (longer in tests that check
	// frames) since it began.
	expiry *quiet.Timer
}

// maxHold bounds how long output may be held should the editor not say
// that it waits (a frame begun with expiry).
const maxHold = 2 * time.Millisecond

func newFrameWriter(dst io.Writer) *frameWriter {
	return newFrameWriterHolding(dst, maxHold)
}

func newFrameWriterHolding(dst io.Writer, hold time.Duration) *frameWriter {
	f := &frameWriter{dst: dst, echoDst: dst}
	f.expiry = quiet.After(hold, f.expire)
	return f
}

// Write holds p while a key is being handled or earlier output is held,
// and writes it straight through otherwise (the prompt, a resize redraw).
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
	if f.inKey || len(f.buf) > 0 || f.redraws.drawn == nil || len(f.redraws.drawn) != e.drawnLen {
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

// promptStart is called before the editor draws a prompt: the drawing is
// sent when the editor's reader waits for the first key. A reader that is
// waiting already will not say so again, so then nothing is held. lane
// says the typing lane reads the keys, which always waits or returns
// soon after it draws: then the frame is not held for at most maxHold,
// whose timer, armed anew after each pause, woke the runtime's thread
// that sleeps in the network poller at every key and every prompt.
func (f *frameWriter) promptStart(lane bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.waiting {
		f.holdLocked(!lane)
	}
}

// keyStart is called before the editor handles a key: by the input filter
// (lane false), or by the typing lane.
func (f *frameWriter) keyStart(lane bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holdLocked(!lane)
	f.inKey = true
}

// holdLocked starts holding the writes, for at most maxHold if expire.
func (f *frameWriter) holdLocked(expire bool) {
	if !f.holding {
		f.holding = true
		if expire {
			f.expiry.Poke()
		}
	}
}

// keyDone is called by the editor's listener after it handled a key; the
// frame is complete if no more keys are waiting to be handled.
func (f *frameWriter) keyDone() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inKey = false
	if f.waiting {
		f.flushLocked()
	}
}

// readerWaits is called by the editor's reader when it blocks for input
// (true) and when input arrives (false).
func (f *frameWriter) readerWaits(w bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waiting = w
	if w && !f.inKey {
		f.flushLocked()
	}
}

// flush writes out whatever is held: the editor returned.
func (f *frameWriter) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inKey = false
	f.flushLocked()
}

func (f *frameWriter) expire() { f.flush() }

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
