package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// Wide characters (emoji, CJK) take two columns on the terminal, and the
// line editor keeps the cursor where the terminal shows it while it moves
// and inserts around them.
func TestPTYWideCharactersInTheLine(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	// at checks the line and that the cursor is just after before.
	at := func(line, before string) {
		t.Helper()
		s.ExpectCursorAt("py> "+line, ptytest.StringWidth("py> "+before))
	}
	s.Send(`s = "😀😀 ok"`)
	at(`s = "😀😀 ok"`, `s = "😀😀 ok"`)
	s.Send(ptytest.Left + ptytest.Left + ptytest.Left)
	at(`s = "😀😀 ok"`, `s = "😀😀 `)
	s.Send("X")
	at(`s = "😀😀 Xok"`, `s = "😀😀 X`)
	s.Send(keyHome)
	at(`s = "😀😀 Xok"`, ``)
	s.Send(keyEnd)
	at(`s = "😀😀 Xok"`, `s = "😀😀 Xok"`)
	s.Send(strings.Repeat(ptytest.Left, 6))
	at(`s = "😀😀 Xok"`, `s = "😀`)
	s.Send("中")
	at(`s = "😀中😀 Xok"`, `s = "😀中`)
	s.Send(ptytest.Left + ptytest.Left + "Y")
	at(`s = "Y😀中😀 Xok"`, `s = "Y`)
	s.Send(ptytest.Enter)
	s.ExpectString("py> ")
	want := `Y😀中😀 Xok`
	typeLine(t, s, "print(len(s), s)", fmt.Sprint(utf8.RuneCountInString(want), " ", want))
}

// A line longer than a row, with wide characters where rows wrap: each
// one that does not fit in a row's last column starts the next row, as on
// the terminal, and the cursor follows it.
func TestPTYWideCharactersWrap(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := ptytest.Start(t, binary, ptytest.Options{Args: []string{"-q"}, Env: testEnv(home, "xterm"), Dir: home, Rows: 20, Cols: 20})
	s.ExpectString("py> ")
	text := "s = '" + strings.Repeat("😀", 15) + "'"
	s.Send(text)
	s.ExpectScreen("the line over three rows", func(screen string) bool {
		return strings.HasSuffix(screen, "py> s = '😀😀😀😀😀\n😀😀😀😀😀😀😀😀😀😀\n'")
	})
	if x, _ := s.Cursor(); x != 1 {
		t.Errorf("cursor in column %d after the line, want 1\n%s", x, s.Dump())
	}
	s.Send(strings.Repeat(ptytest.Left, 2))
	s.ExpectScreen("the cursor on the second row's last emoji", func(string) bool {
		x, y := s.Cursor()
		return x == 18 && y == strings.Count(s.Screen(), "\n")-1
	})
	s.Send(ptytest.Enter)
	s.ExpectString("py> ")
	typeLine(t, s, "len(s)", strconv.Itoa(utf8.RuneCountInString(text)-6))
}

// Home and End as xterm sends them.
const (
	keyHome = "\x1b[H"
	keyEnd  = "\x1b[F"
)

// When the window gets narrower while a line longer than the new width is
// being typed, the line is drawn again at once, whole and once, at the new
// width, with the cursor in place and the output above it kept; typing
// goes on from there and Enter runs the whole line.
func TestPTYRedrawAfterShrink(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	typeLine(t, s, "'above'", "'above'")
	digits := strings.Repeat("0123456789", 13)
	line := "len('" + digits + "')"
	s.Send(line)
	s.Send(ptytest.Left + ptytest.Left)
	// At 100 columns, "py> " and the line take two rows.
	s.ExpectCursorAt(("py> " + line)[100:], len("py> "+line)-100-2)

	const cols = 40
	s.Resize(30, cols)
	shows := func(text string, cursor int) func(string) bool {
		return func(screen string) bool {
			rows := strings.Split(screen, "\n")
			var want []string
			for full := "py> " + text; full != ""; {
				n := min(cols, len(full))
				want = append(want, full[:n])
				full = full[n:]
			}
			if len(rows) < len(want)+2 {
				return false
			}
			x, y := s.Cursor()
			return strings.Join(rows[len(rows)-len(want):], "\n") == strings.Join(want, "\n") &&
				strings.Count(screen, "py> len(") == 1 &&
				rows[len(rows)-len(want)-1] == "'above'" &&
				y == len(rows)-1-(len("py> "+text)-cursor)/cols && x == cursor%cols
		}
	}
	s.ExpectScreen("the line drawn again at 40 columns", shows(line, len("py> "+line)-2))
	s.Send("ab")
	line = "len('" + digits + "ab')"
	s.ExpectScreen("the line with ab typed in it", shows(line, len("py> "+line)-2))
	s.Send(ptytest.Enter)
	s.ExpectString(strconv.Itoa(len(digits)+2) + "\r\n")
	s.ExpectString("py> ")
}

// A line typed from its end, with Backspace, is taken without readline
// (repl/term's typeLine); the first other key hands readline the line as
// typed so far, and it edits on from there, history and all.
func TestPTYTypedLineEditedOn(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	s.Send("x = 'ab")
	s.ExpectCursorAt("py> x = 'ab", len("py> x = 'ab"))
	s.Send("\x7f\x7fcd")
	s.ExpectCursorAt("py> x = 'cd", len("py> x = 'cd"))
	s.Send(ptytest.Left + "Z")
	s.ExpectCursorAt("py> x = 'cZd", len("py> x = 'cZ"))
	s.Send(keyEnd + "'\r")
	s.ExpectString("py> ")
	typeLine(t, s, "x", "'cZd'")
	// Typed ahead, the same keys in one write.
	s.Send("w0 = 'ab\x7f\x7fcd" + ptytest.Left + "Z" + keyEnd + "'\r")
	s.ExpectString("py> ")
	typeLine(t, s, "w0", "'cZd'")
	// Up from a line typed in part recalls the line before.
	s.Send("z" + ptytest.Up)
	s.ExpectCursorAt("py> w0", len("py> w0"))
	s.Send("\r")
	s.ExpectString("'cZd'\r\n")
}
