package e2e

import (
	"strings"
	"testing"
)

// Output that does not end its line stays on screen with the prompt after
// it, as in python3 (the line editor redraws its whole line, so the prompt
// has to carry that text).
func TestPTYPromptFollowsOutputWithoutNewline(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	enter(s, `print("abc", end=",")`)
	s.ExpectCursorLine("abc,py>")
	enter(s, "1+1")
	s.ExpectString("2\r\n")
	s.ExpectCursorLine("py>")
	// A line typed after such output ended the terminal's line: the
	// continuation prompt has nothing before it.
	enter(s, `print("x", end="")`)
	s.ExpectCursorLine("xpy>")
	enter(s, "if 1:")
	s.ExpectCursorLine("...")
	enter(s, "  3")
	s.ExpectCursorLine("...")
	enter(s, "")
	s.ExpectString("3\r\n")
	s.ExpectCursorLine("py>")
	s.Send("\x04")
	assertExit(t, s, 0)
}

// Output that bypassed sys.stdout (a file descriptor, a subprocess) and did
// not end its line stays on screen; the prompt then starts the next line.
func TestPTYOutputBypassingStdoutIsKept(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	enter(s, `import os; n = os.write(1, b"RAWFD")`)
	s.ExpectCursorLine("py>")
	enter(s, `r = os.system("printf SUBPROC")`)
	s.ExpectCursorLine("py>")
	s.SendLine("1+1")
	s.ExpectString("2\r\n")
	s.ExpectCursorLine("py>")
	screen := s.Screen()
	for _, want := range []string{"\nRAWFD\n", "\nSUBPROC\n"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lost %q:\n%s", strings.Trim(want, "\n"), screen)
		}
	}
}

// Output longer than a row (the test terminal has 100 columns): the rows
// it filled stay as they are and the prompt follows its last row, as in
// python3; a row filled exactly puts the prompt on the next one.
func TestPTYPromptFollowsWrappedOutput(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	enter(s, `print("x" * 130, end="")`)
	s.ExpectCursorLine(strings.Repeat("x", 30) + "py>")
	enter(s, `print("y" * 100, end="")`)
	s.ExpectCursorLine("py>")
	s.SendLine("1+1")
	s.ExpectString("2\r\n")
	s.ExpectCursorLine("py>")
	screen := s.Screen()
	for _, want := range []string{
		"\n" + strings.Repeat("x", 100) + "\n" + strings.Repeat("x", 30) + `py> print("y"`,
		"\n" + strings.Repeat("y", 100) + "\npy> 1+1\n",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen does not show %q:\n%s", want, screen)
		}
	}
}

// A line read by input() ended the terminal's line: the next prompt does
// not repeat the output that was before it.
func TestPTYPromptAfterInputHasNoStaleOutput(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	enter(s, `print("abc", end=""); y = input()`)
	s.SendLine("zz")
	s.ExpectString("zz\r\n")
	s.ExpectCursorLine("py>")
	typeLine(t, s, "y", "'zz'")
}
