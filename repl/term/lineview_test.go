package term

import (
	"bytes"
	"testing"
)

func TestRuneWidth(t *testing.T) {
	for _, c := range []struct {
		r    rune
		want int
	}{
		{'a', 1}, {'é', 1}, {'中', 2}, {'😀', 2}, {'\u0301', 0}, {'\u200d', 0}, {'\t', 4},
	} {
		if got := RuneWidth(c.r); got != c.want {
			t.Errorf("RuneWidth(%q) = %d, want %d", c.r, got, c.want)
		}
	}
	if got := StringWidth("py> 😀中a"); got != 9 {
		t.Errorf("StringWidth = %d, want 9", got)
	}
}

// drawn runs one readline redraw (its clearing, then Paint and its
// drawing) through a view width columns wide and returns what reached the
// terminal.
func drawn(v *lineView, line string, pos int) string {
	out := v.out.(*bytes.Buffer)
	out.Reset()
	v.Write([]byte("\x1b[J\x1b[2K\r")) // readline's clearing (its row count is ignored)
	rs := []rune(line)
	v.Paint(rs, pos)
	v.Write([]byte("readline's own drawing"))
	return out.String()
}

func TestLineViewDraws(t *testing.T) {
	width := 10
	v := newLineView(&bytes.Buffer{}, func() int { return width })
	v.setPrompt("> ")
	steps := []struct {
		line string
		pos  int
		want string
	}{
		// The cursor at the end: nothing after the text.
		{"ab", 2, "\r\x1b[J> ab"},
		// Back over a wide character: one column each for a and b, two
		// for the emoji, by column, not one backspace per character.
		{"😀ab", 0, "\r\x1b[J> 😀ab\r\x1b[2C"},
		// An emoji that does not fit in the last column starts the next
		// row; the cursor follows it there.
		{"1234567😀x", 7, "\r\x1b[J> 1234567😀x\r"},
		// Clearing goes up the rows the cursor was put below the start.
		{"1234567😀x", 9, "\r\x1b[1A\x1b[J> 1234567😀x"},
		// Text that fills its last row exactly: the cursor moves to the
		// next row, where the terminal shows it.
		{"12345678", 8, "\r\x1b[1A\x1b[J> 12345678 \b"},
		// A tab is drawn as readline draws it, four spaces.
		{"\tx", 1, "\r\x1b[1A\x1b[J>     x\r\x1b[6C"},
	}
	for _, s := range steps {
		if got := drawn(v, s.line, s.pos); got != s.want {
			t.Errorf("%q at %d: wrote %q, want %q", s.line, s.pos, got, s.want)
		}
	}
	// The window narrows: the clearing goes up the rows drawn before, the
	// drawing lays the line out at the new width.
	drawn(v, "123456789012345678", 18) // rows 0-2 at 10 columns, cursor on row 2
	width = 5
	if got, want := drawn(v, "123456789012345678", 18), "\r\x1b[2A\x1b[J> 123456789012345678 \b"; got != want {
		t.Errorf("after the resize: wrote %q, want %q", got, want)
	}
	if v.row != 4 {
		t.Errorf("cursor row %d after drawing 20 columns 5 wide, want 4", v.row)
	}
}

// A line readline is ending (Enter, Ctrl-C) is readline's to write, and
// what follows starts a new row.
func TestLineViewLeavesEndedLines(t *testing.T) {
	v := newLineView(&bytes.Buffer{}, func() int { return 10 })
	v.setPrompt("> ")
	drawn(v, "123456789012", 12)
	if got := drawn(v, "123456789012\n", 13); got != "\r\x1b[1A\x1b[Jreadline's own drawing" {
		t.Errorf("wrote %q", got)
	}
	if got := drawn(v, "", 0); got != "\r\x1b[J> " {
		t.Errorf("the next prompt: wrote %q", got)
	}
}

func TestIsClear(t *testing.T) {
	for s, want := range map[string]bool{
		"\x1b[J\x1b[2K\r": true,
		"\x1b[J\x1b[2K\r\x1b[A\x1b[2K\r\x1b[A\x1b[2K\r": true,
		"\x1b[J":     false,
		"\x1b[Jpy> ": false,
		"\a":         false,
	} {
		if got := isClear([]byte(s)); got != want {
			t.Errorf("isClear(%q) = %v", s, got)
		}
	}
}
