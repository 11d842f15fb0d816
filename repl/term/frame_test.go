package term

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hinshun/vt10x"
)

// writeLog records each write the terminal would receive.
type writeLog struct {
	mu     sync.Mutex
	writes []string
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func (w *writeLog) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

func TestFrameWriterOneWritePerBatchOfKeys(t *testing.T) {
	var log writeLog
	f := newFrameWriter(&log)

	f.Write([]byte("py> ")) // the prompt: no key is being handled
	if got := log.get(); len(got) != 1 || got[0] != "py> " {
		t.Fatalf("prompt: writes %q, want it written through at once", got)
	}

	// Three keys typed ahead: the reader has more to give, so it does
	// not wait between them.
	for _, k := range []string{"1", "+", "1"} {
		f.hold()
		f.Write([]byte("\r\x1b[J"))
		f.Write([]byte("py> ..." + k))
	}
	if got := log.get(); len(got) != 1 {
		t.Fatalf("while keys are pending: writes %q, want nothing more yet", got[1:])
	}
	f.readerWaits(true) // all keys handled, the editor waits for more
	got := log.get()
	if len(got) != 2 {
		t.Fatalf("after the reader waits: %d writes %q, want the three redraws as one", len(got)-1, got[1:])
	}
	// Erase, draw, erase, draw...: what the screen ends with is the first
	// erase and the last drawing (see redrawShortener).
	if want := "\r\x1b[Jpy> ...1"; got[1] != want {
		t.Errorf("frame = %q, want %q (the first erase, the last drawing)", got[1], want)
	}
	f.readerWaits(false)
}

func TestFrameWriterFlushesOnReturn(t *testing.T) {
	var log writeLog
	f := newFrameWriter(&log)
	f.hold()
	f.Write([]byte("py> 1+1\n"))
	f.flush() // the editor returned the line
	if got := strings.Join(log.get(), ""); got != "py> 1+1\n" {
		t.Fatalf("after flush: %q", got)
	}
	// Later writes are not held once flushed.
	f.Write([]byte("2"))
	if got := log.get(); len(got) != 2 {
		t.Fatalf("write after flush was held: %q", got)
	}
}

func TestFrameWriterPromptIsOneFrame(t *testing.T) {
	var log writeLog
	f := newFrameWriter(&log)
	f.hold()
	f.Write([]byte("\x1b[?2004h"))
	f.Write([]byte("\r\x1b[J"))
	f.Write([]byte("py> "))
	if got := log.get(); len(got) != 0 {
		t.Fatalf("prompt sent before the reader waits: %q", got)
	}
	f.readerWaits(true)
	if got := log.get(); len(got) != 1 || got[0] != "\x1b[?2004h\r\x1b[Jpy> " {
		t.Fatalf("prompt frame: writes %q, want one", got)
	}
}

// A prompt's frame starts with its lead-in (the end of the last output's
// row, bracketed paste on) before the prompt's drawing: it goes out as it
// is, and the next key's frame still comes to the key alone.
func TestRedrawShortenerAfterALeadIn(t *testing.T) {
	var s redrawShortener
	prompt := "\x1b[?2004h\r\x1b[Jpy> "
	if got := string(s.frame([]byte(prompt))); got != prompt {
		t.Fatalf("prompt frame written as %q, want it as it is", got)
	}
	if got := string(s.frame([]byte("\r\x1b[Jpy> a"))); got != "a" {
		t.Errorf("first key's frame written as %q, want %q", got, "a")
	}
	// Output that is not a redraw forgets the drawing.
	if got := string(s.frame([]byte("2\r\n"))); got != "2\r\n" {
		t.Fatalf("output written as %q", got)
	}
	if got := string(s.frame([]byte("\r\x1b[Jpy> ab"))); got != "\r\x1b[Jpy> ab" {
		t.Errorf("a redraw after output written as %q, want it whole", got)
	}
}

// testBuffer is a line being edited, drawn through a lineView at every
// change as the editor draws it.
type testBuffer struct {
	line []rune
	pos  int
	v    *lineView
	out  io.Writer
}

func (b *testBuffer) draw() { b.out.Write(b.v.redrawAt(b.line, b.pos)) }

func (b *testBuffer) WriteRune(r rune) {
	b.line = slices.Insert(b.line, b.pos, r)
	b.pos++
	b.draw()
}

func (b *testBuffer) MoveBackward()  { b.pos = max(b.pos-1, 0); b.draw() }
func (b *testBuffer) MoveForward()   { b.pos = min(b.pos+1, len(b.line)); b.draw() }
func (b *testBuffer) MoveToLineEnd() { b.pos = len(b.line); b.draw() }
func (b *testBuffer) IsCursorInEnd() bool {
	return b.pos == len(b.line)
}

func (b *testBuffer) Backspace() {
	if b.pos > 0 {
		b.line = slices.Delete(b.line, b.pos-1, b.pos)
		b.pos--
	}
	b.draw()
}

// The shortened frames leave the same screen, cursor included, as whole
// redraws: typing at the end of a line across the right margin, moving off
// and back onto the margin, keys typed ahead (several redraws in one
// frame), an insertion in the middle, moves and deletions. They are
// written to two emulated terminals, at widths that put the margin at
// different places, also at the screen's top, after Ctrl-L, where the view
// erases in another way (eraseFromTop).
func TestRedrawShortenerKeepsTheScreen(t *testing.T) {
	for _, cols := range []int{13, 20, 80} {
		t.Run(fmt.Sprintf("%d columns", cols), func(t *testing.T) { checkShortenedRedraws(t, cols, false) })
		t.Run(fmt.Sprintf("%d columns at the top", cols), func(t *testing.T) { checkShortenedRedraws(t, cols, true) })
	}
}

// checkShortenedRedraws drives a line buffer drawn through a lineView, at
// the screen's top (after Ctrl-L) when top is set.
func checkShortenedRedraws(t *testing.T, cols int, top bool) {
	const rows = 16
	const prompt = "py> "
	var whole, short bytes.Buffer
	screen := max(cols, 120) // a terminal that reports no width still has one
	full := vt10x.New(vt10x.WithSize(screen, rows))
	shortened := vt10x.New(vt10x.WithSize(screen, rows))
	var frame bytes.Buffer
	v := newLineView(&frame, func() int { return cols })
	v.setPrompt(prompt)
	if top {
		v.atTop()
	}
	rb := &testBuffer{v: v, out: &frame}
	var s redrawShortener
	full.Write([]byte(prompt))
	shortened.Write([]byte(prompt))
	s.forget()

	step := 0
	flush := func(what string) {
		t.Helper()
		step++
		whole.Write(frame.Bytes())
		full.Write(frame.Bytes())
		out := s.frame(frame.Bytes())
		short.Write(out)
		shortened.Write(out)
		frame.Reset()
		if a, b := full.String(), shortened.String(); a != b {
			t.Fatalf("step %d (%s): screens differ\nwhole redraws:\n%s\nshortened:\n%s", step, what, a, b)
		}
		if a, b := full.Cursor(), shortened.Cursor(); a.X != b.X || a.Y != b.Y {
			t.Fatalf("step %d (%s): cursor at %d,%d after whole redraws, %d,%d shortened", step, what, a.X, a.Y, b.X, b.Y)
		}
	}
	for i := 0; i < 45; i++ {
		rb.WriteRune(rune('a' + i%26))
		flush("typing at the end")
		if cols > 0 && (len(prompt)+i+1)%cols == 0 {
			rb.MoveBackward()
			flush("left from the margin")
			rb.MoveForward()
			flush("right onto the margin")
		}
	}
	for i := 0; i < 3; i++ {
		for j := 0; j < 10; j++ {
			rb.WriteRune(rune('0' + j))
		}
		flush("ten keys typed ahead")
	}
	for i := 0; i < 5; i++ {
		rb.MoveBackward()
		flush("left")
	}
	rb.WriteRune('X')
	flush("insert in the middle")
	rb.WriteRune('Y')
	flush("insert in the middle")
	rb.MoveToLineEnd()
	flush("end")
	for i := 0; i < 3; i++ {
		rb.Backspace()
		flush("backspace")
	}
	for i := 0; i < 12; i++ {
		rb.WriteRune('z')
		flush("typing at the end again")
	}
	if top != bytes.Contains(whole.Bytes(), eraseFromTop) {
		t.Errorf("at the top %v, yet the redraws' erasing is %q", top, whole.Bytes()[:min(whole.Len(), 40)])
	}
	if short.Len()*4 > whole.Len() {
		t.Errorf("shortened frames wrote %d bytes against %d for whole redraws: want far fewer", short.Len(), whole.Len())
	}
}

// vtWriter writes to an emulated terminal.
type vtWriter struct{ vt vt10x.Terminal }

func (w vtWriter) Write(p []byte) (int, error) { return w.vt.Write(p) }

// A key typed at the end of the line is echoed ahead of the editor's
// redraw (echoAhead), and the redraw then writes nothing but the
// suggestion for the new line, if there is one: the screen, cursor
// included, is the one whole redraws leave, for keys that fit on the row, keys that
// reach the right margin or start a row, wide characters, keys after
// which a suggestion shows, keys typed over a suggestion and keys typed
// after moving back. Most keys at the end are echoed ahead.
func TestEchoAheadKeepsTheScreen(t *testing.T) {
	for _, cols := range []int{13, 20, 80} {
		t.Run(fmt.Sprintf("%d columns", cols), func(t *testing.T) { checkEchoAhead(t, cols) })
	}
}

func checkEchoAhead(t *testing.T, cols int) {
	const prompt = "py> "
	full := vt10x.New(vt10x.WithSize(120, 16))
	shown := vt10x.New(vt10x.WithSize(120, 16))
	var sent writeLog
	// Frames end where the test says, however slow the machine.
	f := newFrameWriter(io.MultiWriter(vtWriter{shown}, &sent))
	v := newLineView(io.MultiWriter(vtWriter{full}, f), func() int { return cols })
	v.suggest = func(line string) string {
		if strings.HasSuffix(line, "pri") {
			return "nt"
		}
		return ""
	}
	v.setPrompt(prompt)
	rb := &testBuffer{v: v, out: io.MultiWriter(vtWriter{full}, f)}
	full.Write([]byte(prompt))
	shown.Write([]byte(prompt))

	echoed, atEnd := 0, 0
	step := 0
	key := func(what string, handle func()) {
		t.Helper()
		step++
		f.hold()
		handle()
		f.readerWaits(true)
		f.readerWaits(false)
		if a, b := full.String(), shown.String(); a != b {
			t.Fatalf("step %d (%s): screens differ\nwhole redraws:\n%s\nechoed ahead:\n%s", step, what, a, b)
		}
		if a, b := full.Cursor(), shown.Cursor(); a.X != b.X || a.Y != b.Y {
			t.Fatalf("step %d (%s): cursor at %d,%d after whole redraws, %d,%d echoed ahead", step, what, a.X, a.Y, b.X, b.Y)
		}
	}
	typeRune := func(r rune) {
		t.Helper()
		if rb.IsCursorInEnd() {
			atEnd++
		}
		// As the editor does: the echo before the key's drawing is
		// held.
		ahead, ok := v.echoAhead(r)
		ok = ok && f.echo(ahead, 0)
		key(fmt.Sprintf("typing %q", r), func() {
			if ok {
				echoed++
				before := len(sent.get())
				rb.WriteRune(r)
				f.flush()
				for _, w := range sent.get()[before:] {
					if !strings.HasPrefix(w, dimOn) {
						t.Errorf("typing %q: the redraw after the echo wrote %q, not just a suggestion", r, w)
					}
				}
				return
			}
			rb.WriteRune(r)
		})
	}
	key("the first drawing", rb.draw)
	// The suggestion comes before the wide characters: vt10x gives them
	// one column, where terminals (and the view) give them two, so after
	// them its cursor is not where the view moves it back to before a
	// suggestion.
	for _, r := range "pri" {
		typeRune(r)
	}
	for _, r := range "nt(x = 12345678901234567890界abcdefghij😀klmnopqrstuvwxyz) and more text to wrap past the margin again" {
		typeRune(r)
	}
	for range 3 {
		key("left", rb.MoveBackward)
	}
	for _, r := range "XY" {
		typeRune(r)
	}
	key("end", rb.MoveToLineEnd)
	for _, r := range "tail of the line" {
		typeRune(r)
	}
	key("backspace", rb.Backspace)
	for _, r := range "z" {
		typeRune(r)
	}
	if echoed*2 < atEnd {
		t.Errorf("%d of %d keys typed at the end were echoed ahead: want most", echoed, atEnd)
	}
}
