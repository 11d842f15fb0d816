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

// drawn is one redraw of line, the cursor at pos, as the editor makes it.
func drawn(v *lineView, line string, pos int) string {
	return string(v.redrawAt([]rune(line), pos))
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
		// A tab is drawn as four spaces.
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

// A line with line feeds in it is drawn on rows of its own, each after
// the continuation prompt, with the cursor on its row and column. (The
// terminal's output processing sends each line feed as CR LF.)
func TestLineViewDrawsRows(t *testing.T) {
	width := 10
	v := newLineView(&bytes.Buffer{}, func() int { return width })
	v.setPrompt("> ")
	steps := []struct {
		line string
		pos  int
		want string
		row  int
	}{
		// The cursor at the end, on the last row.
		{"a=1\nb=2", 7, "\r\x1b[J> a=1\n... b=2", 1},
		// The cursor on the first row, after "a": up one row, to column 3.
		{"a=1\nb=2", 1, "\r\x1b[1A\x1b[J> a=1\n... b=2\x1b[1A\r\x1b[3C", 0},
		// At the end of the first row (on its line feed).
		{"a=1\nb=2", 3, "\r\x1b[J> a=1\n... b=2\x1b[1A\r\x1b[5C", 0},
		// Wide characters take two columns on their row; the cursor after
		// the emoji on the second row is at column 4+2.
		{"x\n😀中", 3, "\r\x1b[J> x\n... 😀中\r\x1b[6C", 1},
		// A row longer than the width wraps, and the rows after it follow.
		{"123456789\nz", 11, "\r\x1b[1A\x1b[J> 123456789\n... z", 2},
		// Three rows, the cursor in the middle one.
		{"if x:\n  y\nz", 7, "\r\x1b[2A\x1b[J> if x:\n...   y\n... z\x1b[1A\r\x1b[5C", 1},
	}
	for _, s := range steps {
		if got := drawn(v, s.line, s.pos); got != s.want {
			t.Errorf("%q at %d: wrote %q, want %q", s.line, s.pos, got, s.want)
		}
		if v.row != s.row {
			t.Errorf("%q at %d: cursor row %d, want %d", s.line, s.pos, v.row, s.row)
		}
	}
	// Ending the line (Enter): its rows drawn again with the cursor after
	// the last.
	drawn(v, "a=1\nb=2", 1)
	if got, want := string(v.redrawPlain([]rune("a=1\nb=2"))), "\r\x1b[J> a=1\n... b=2"; got != want {
		t.Errorf("ending: wrote %q, want %q", got, want)
	}
	v.ended()
	if v.row != 0 {
		t.Errorf("after the end: cursor row %d, want 0", v.row)
	}
}

// A suggestion is drawn dim after the cursor at the end of the line, the
// cursor left before it; away from the end, none is drawn.
func TestLineViewDrawsSuggestion(t *testing.T) {
	v := newLineView(&bytes.Buffer{}, func() int { return 20 })
	v.setPrompt("> ")
	asked := 0
	v.suggest = func(line string) string {
		asked++
		if line == "coll" {
			return "ections"
		}
		return ""
	}
	if got, want := drawn(v, "coll", 4), "\r\x1b[J> coll\x1b[2mections\x1b[22m\r\x1b[6C"; got != want {
		t.Errorf("at the end: wrote %q, want %q", got, want)
	}
	if got := v.shownHint(); got != "ections" {
		t.Errorf("shownHint = %q", got)
	}
	if got, want := drawn(v, "coll", 2), "\r\x1b[J> coll\r\x1b[4C"; got != want {
		t.Errorf("cursor inside: wrote %q, want %q", got, want)
	}
	if got := v.shownHint(); got != "" {
		t.Errorf("shownHint with the cursor inside = %q", got)
	}
	drawn(v, "coll", 4)
	if asked != 1 {
		t.Errorf("suggest asked %d times for one line, want once", asked)
	}
	// A suggestion that reaches the next row: the cursor goes back up.
	v.suggest = func(string) string { return "0123456789abcdefghij" }
	if got, want := drawn(v, "x", 1), "\r\x1b[J> x\x1b[2m0123456789abcdefghij\x1b[22m\x1b[1A\r\x1b[3C"; got != want {
		t.Errorf("long suggestion: wrote %q, want %q", got, want)
	}
	// The line as it ends shows no suggestion.
	if got := string(v.redrawPlain([]rune("x"))); got != "\r\x1b[J> x" {
		t.Errorf("ending: wrote %q", got)
	}
}

// Up and Down in a line of rows go to the same column of the row above or
// below (its end if shorter); on the first row Up, and on the last Down,
// are the history's.
func TestRowMove(t *testing.T) {
	line := []rune("abcdef\nxy\nlonger row")
	for _, c := range []struct {
		pos  int
		up   bool
		to   int
		rows bool
	}{
		{pos: 9, up: true, to: 2, rows: true},   // "xy|" -> "ab|cdef"
		{pos: 5, up: false, to: 9, rows: true},  // "abcde|f" -> "xy|" (shorter)
		{pos: 8, up: false, to: 11, rows: true}, // "x|y" -> "l|onger row"
		{pos: 20, up: true, to: 9, rows: true},  // end of the last row -> end of "xy"
		{pos: 3, up: true, rows: false},         // first row: history
		{pos: 12, up: false, rows: false},       // last row: history
		{pos: 6, up: false, to: 9, rows: true},  // at the first row's end
		{pos: 10, up: true, to: 7, rows: true},  // start of the last row -> start of "xy"
	} {
		to, ok := rowMove(line, c.pos, c.up)
		if ok != c.rows || ok && to != c.to {
			t.Errorf("at %d, up %v: %d, %v; want %d, %v", c.pos, c.up, to, ok, c.to, c.rows)
		}
	}
}
