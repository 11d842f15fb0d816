package term

import "bytes"

// The line editor's drawing of its line is a whole redraw: it erases what
// it drew (an erase sequence, below) and writes the prompt and the whole
// text again. On a long line that would be quadratic: typing 2,000
// characters wrote 6 MB to the terminal. A terminal shows the same if, of
// a frame's redraws, only the last is drawn, and only its new end when it
// extends the previous drawing, which is what typing at the end of a line
// does. GNU readline, python3's editor, writes just the key too.
//
// The erase sequence is lineView's: go to the line's first row's start,
// erase down.
//
// At the screen's top row lineView erases down from the second column and
// then the row's first (eraseFromTop): erasing down from the top left is
// what clearing the screen does, and tmux keeps a copy of the screen in
// its scrollback for each.
var (
	eraseBelow   = []byte("\x1b[J")
	eraseFromTop = []byte("\x1b[C\x1b[J\r\x1b[K")
)

// eraseLen is the length of the erase sequence at the start of p, or 0.
func eraseLen(p []byte) int {
	if len(p) == 0 || p[0] != '\r' {
		return 0
	}
	n := 1 + cursorUpLen(p[1:])
	if bytes.HasPrefix(p[n:], eraseBelow) {
		return n + len(eraseBelow)
	}
	if bytes.HasPrefix(p[n:], eraseFromTop) {
		return n + len(eraseFromTop)
	}
	return 0
}

// cursorUpLen is the length of a cursor-up sequence (ESC [ N A) at the
// start of p, or 0.
func cursorUpLen(p []byte) int {
	if !bytes.HasPrefix(p, []byte("\x1b[")) {
		return 0
	}
	n := 2
	for n < len(p) && p[n] >= '0' && p[n] <= '9' {
		n++
	}
	if n == 2 || n >= len(p) || p[n] != 'A' {
		return 0
	}
	return n + 1
}

// redrawShortener rewrites the line editor's frames (see frameWriter) into
// fewer bytes with the same result on screen.
type redrawShortener struct {
	// drawn is the last redraw's output, from the prompt's start; nil
	// when the terminal may have had other output since.
	drawn []byte
}

// frame returns what to write for frame, one flush of the editor's
// output. A frame is the editor's redraws, each an erase then a drawing;
// anything else is written as it is, and forgets the last drawing.
func (s *redrawShortener) frame(frame []byte) []byte {
	firstErase := eraseLen(frame)
	if firstErase == 0 {
		// Output before the first redraw (a prompt's lead-in) goes as it
		// is; redraws after it still leave their last drawing on screen.
		s.drawn = nil
		if i := nextErase(frame); i > 0 {
			if last, ok := lastDrawing(frame[i:]); ok {
				s.drawn = append(s.drawn, last...)
			}
		}
		return frame
	}
	last, ok := lastDrawing(frame)
	if !ok {
		s.drawn = nil
		return frame
	}
	out := frame
	if n, ok := s.extends(last); ok {
		// The screen holds s.drawn, just as erasing it and drawing it
		// again would leave it: only the new end is missing.
		out = last[n:]
	} else if len(last) < len(frame)-firstErase {
		// Erasing the first drawing and drawing the last is what the
		// whole frame comes to.
		out = append(frame[:firstErase:firstErase], last...)
	}
	s.drawn = append(s.drawn[:0], last...)
	return out
}

// extends reports whether drawing is the last drawing and more, and
// where the more starts. At the right margin lineView ends a drawing with
// " \b", which takes the cursor to the next row's start, where the next
// character would go anyway: a drawing that goes on from there with a
// printing character extends the one before it too.
func (s *redrawShortener) extends(drawing []byte) (int, bool) {
	if s.drawn == nil {
		return 0, false
	}
	if bytes.HasPrefix(drawing, s.drawn) {
		return len(s.drawn), true
	}
	at, ok := bytes.CutSuffix(s.drawn, []byte(" \b"))
	if ok && len(drawing) > len(at) && bytes.HasPrefix(drawing, at) && printing(drawing[len(at)]) {
		return len(at), true
	}
	return 0, false
}

// printing reports whether c starts a character that is drawn where the
// cursor is: not a control character or an escape sequence.
func printing(c byte) bool { return c >= 0x20 && c != 0x7f }

// forget is called when output reached the terminal around the editor's
// frames (the prompt, a resize redraw).
func (s *redrawShortener) forget() { s.drawn = nil }

// lastDrawing is what the last redraw of frame drew, after its erase; ok
// is false unless frame is erase, drawing, erase, drawing... throughout.
func lastDrawing(frame []byte) (last []byte, ok bool) {
	for len(frame) > 0 {
		n := eraseLen(frame)
		if n == 0 {
			return nil, false
		}
		frame = frame[n:]
		end := nextErase(frame)
		if end < 0 {
			return frame, true
		}
		last, frame = frame[:end], frame[end:]
	}
	return last, true
}

// nextErase is where the next erase sequence in p starts, or -1.
func nextErase(p []byte) int {
	from := 0
	for {
		i := bytes.Index(p[from:], eraseBelow)
		if i < 0 {
			return -1
		}
		i += from
		for _, start := range eraseStarts(p, i) {
			if eraseLen(p[start:]) > 0 {
				return start
			}
		}
		from = i + len(eraseBelow)
	}
}

// eraseStarts are where an erase sequence whose erase-down is at i could
// start: before it a "\r" and perhaps a cursor-up.
func eraseStarts(p []byte, i int) []int {
	var starts []int
	if i > 0 && p[i-1] == '\r' {
		starts = append(starts, i-1)
	}
	if k := bytes.LastIndexByte(p[:i], '\r'); k >= 0 && cursorUpLen(p[k+1:i]) == i-k-1 {
		starts = append(starts, k)
	}
	// eraseFromTop: its erase-down comes after a move right.
	if right := i - 3; right >= 1 && string(p[right:i]) == "\x1b[C" {
		if k := bytes.LastIndexByte(p[:right], '\r'); k >= 0 && cursorUpLen(p[k+1:right]) == right-k-1 {
			starts = append(starts, k)
		}
	}
	return starts
}
