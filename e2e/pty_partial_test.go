package e2e

import "testing"

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
