package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// A def typed with auto-indent on: the body is indented after the
// header's colon, Backspace takes a level off, Up goes back to fix the
// body's first line, and Enter on the empty last row runs the block.
func TestPTYBlockAutoIndentFixedWithUp(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeConfig(t, home, "auto_indent = true\n")
	s := startREPL(t, home, "-q")
	s.Send("def f(x):\r")
	s.ExpectCursorAt("...", len("...     "))
	s.Send("if x:\r")
	s.ExpectCursorAt("...", len("...         "))
	s.Send("return 'yes'\r")
	s.Send("\x7f") // a level back, to the def's body
	s.ExpectCursorAt("...", len("...     "))
	s.Send("return 'no'")
	s.Send(ptytest.Up + ptytest.Up + "\x05" + ptytest.Left + " and x > 1")
	s.ExpectScreen("the fixed block", func(screen string) bool {
		return lastRows(screen, 4) == "py> def f(x):\n...     if x and x > 1:\n...         return 'yes'\n...     return 'no'"
	})
	// Down to the last row's end: Enter there adds a row (the block is
	// not complete without one), and Enter on it runs the block.
	s.Send(ptytest.Down + ptytest.Down + "\x05\r")
	s.ExpectCursorLine("...")
	s.Send("\r")
	s.ExpectString("py> ")
	typeLine(t, s, "f(0), f(1), f(2)", "('no', 'no', 'yes')")
}

// A block comes back from the history whole, as one buffer: edited in
// place and run again, it is one entry of the history after it.
func TestPTYBlockRecalledWhole(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startREPL(t, home, "-q")
	s.Send("for i in range(2):\r")
	s.Send("    print('row', i)\r")
	s.Send("\r")
	s.ExpectString("row 1\r\n")
	s.ExpectString("py> ")
	s.Send(ptytest.Up)
	s.ExpectScreen("the block recalled", func(screen string) bool {
		return lastRows(screen, 2) == "py> for i in range(2):\n...     print('row', i)"
	})
	// Up to the first row, the 2 made a 3.
	s.Send(ptytest.Up + "\x05" + ptytest.Left + ptytest.Left + "\x7f3")
	s.ExpectCursorLine("py> for i in range(3):")
	s.Send(ptytest.Down + "\x05\r")
	s.Send("\r")
	s.ExpectString("row 2\r\n")
	s.ExpectString("py> ")
	// C-r finds the edited block by a word of its second row.
	s.Send("\x12'row'")
	s.ExpectScreen("the block found", func(screen string) bool {
		return strings.Contains(screen, "(reverse-i-search)`'row'': for i in range(3):\n...     print('row', i)")
	})
	s.Send("\x07") // C-g: back to the empty line
	s.ExpectCursorLine("py>")
	// Ctrl-D on a block's empty last row ends it, as at python3's "... ".
	s.Send("for i in range(2):\r    print('d', i)\r")
	s.ExpectCursorLine("...")
	s.Send(ptytest.CtrlD)
	s.ExpectString("d 1\r\n")
	s.ExpectString("py> ")
	s.Send(ptytest.CtrlD)
	assertExit(t, s, 0)
	hist := readFile(t, historyFile(home, "py"))
	if !strings.Contains(hist, "range(3)") || strings.Count(hist, "print('row', i)") != 2 || !strings.Contains(hist, "print('d', i)") {
		t.Errorf("history file:\n%s", hist)
	}
}

// TAB after an attribute being typed completes it, listing the choices
// when there are several; TAB on an empty line or after an operator
// switches modes, and so does Shift-TAB anywhere.
func TestPTYTabCompletes(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	typeLine(t, s, "import json", "")
	s.Send("json.du" + ptytest.Tab)
	s.ExpectScreen("dump and dumps listed", func(screen string) bool {
		return lastRows(screen, 2) == "py> json.dump\ndump   dumps"
	})
	s.Send("s(1)")
	s.ExpectScreen("the list gone", func(screen string) bool { return lastRows(screen, 1) == "py> json.dumps(1)" })
	s.Send("\r")
	s.ExpectString("'1'\r\n")
	s.ExpectString("py> ")
	s.Send("json.JSONEnc" + ptytest.Tab)
	s.ExpectCursorLine("py> json.JSONEncoder")
	s.Send("\x15json." + ptytest.Tab)
	s.ExpectScreen("json's public attributes listed", func(screen string) bool {
		return strings.Contains(lastRows(screen, 4), "JSONDecodeError") && strings.Contains(lastRows(screen, 4), "loads")
	})
	s.Send("\x15") // C-u
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("ai>")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("py>")
	s.Send("1 + " + ptytest.Tab)
	s.ExpectCursorLine("ai> 1 +")
	s.Send("\x1b[Z") // Shift-TAB
	s.ExpectCursorLine("py> 1 +")
	s.Send("js\x1b[Z")
	s.ExpectCursorLine("ai> 1 + js")
}

// tab = "toggle" in the config brings back TAB that always switches modes.
func TestPTYTabToggleSetting(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeConfig(t, home, "tab = \"toggle\"\n")
	s := startREPL(t, home, "-q")
	typeLine(t, s, "import json", "")
	s.Send("json.du" + ptytest.Tab)
	s.ExpectCursorLine("ai> json.du")
}

// Python is coloured as it is typed on a terminal that shows colour, and
// not under NO_COLOR; the line entered is left as plain text.
func TestPTYHighlighting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env    []string
		styled string
	}{
		{[]string{"TERM=xterm-256color"}, "def f return 'x' 42 # note"},
		{[]string{"TERM=xterm-256color", "NO_COLOR=1"}, ""},
	} {
		s := startProgram(t, binary, "", c.env, "-q")
		s.ExpectString("py> ")
		s.Send("def f(): return 'x', 42 # note")
		s.ExpectCursorLine("py> def f(): return 'x', 42 # note")
		s.Settle(100e6)
		if got := s.StyledText(); !strings.Contains(got, c.styled) || c.styled == "" && strings.Contains(got, "note") {
			t.Errorf("%v: the styled text is %q, want %q", c.env, got, c.styled)
		}
		s.Send("\r\r")
		s.ExpectString("def f(): return 'x', 42 # note\r\n")
		s.ExpectString("py> ")
	}
}

// C-x C-e edits the line in $EDITOR, here a script that rewrites it, and
// brings the result back into the line, to edit on and run.
func TestPTYEditInEditor(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	editor := filepath.Join(home, "editor.sh")
	script := "#!/bin/sh\nprintf 'def g():\\n    return %s\\n' \"$(cat \"$1\")\" > \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startProgram(t, binary, home, []string{"VISUAL=" + editor}, "-q")
	s.ExpectString("py> ")
	s.Send("6 * 7\x18\x05")
	s.ExpectScreen("the edited block", func(screen string) bool {
		return lastRows(screen, 2) == "py> def g():\n...     return 6 * 7"
	})
	s.Send("0\r")
	s.ExpectCursorLine("...")
	s.Send("\r")
	s.ExpectString("py> ")
	typeLine(t, s, "g()", "420")
}

// vi mode, from `set editing-mode vi` in the readline init file or from
// editing_mode in the config: Esc, then 0 and x, take the first
// character off, as python3 -i's readline does there; other command-mode
// keys move, delete, change and go back to inserting.
func TestPTYViMode(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	rc := filepath.Join(home, "inputrc")
	if err := os.WriteFile(rc, []byte("set editing-mode vi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(program string, args []string, prompt string) []string {
		s := startProgram(t, program, home, []string{"INPUTRC=" + rc}, args...)
		s.ExpectString(prompt)
		var got []string
		for _, keys := range [][]string{
			{"xx = 'abc'", "\x1b", "0", "x", "A", " + 'd'", "\r"},
			{"x = 'one two'", "\x1b", "b", "d", "w", "\r"},
			{"x = 'one two'", "\x1b", "b", "c", "w", "ONE", "\r"},
			{"x = 'abc'", "\x1b", "h", "r", "Z", "\r"},
			{"x = 'a b c'", "\x1b", "0", "w", "w", "w", "D", "i", "'", "\r"},
		} {
			for _, k := range keys {
				s.Send(k)
				time.Sleep(20 * time.Millisecond) // Esc alone, as a person types it
			}
			s.ExpectString(prompt)
			got = append(got, valueOfX(s, prompt))
		}
		return got
	}
	want := run(pythonOracle, []string{"-q", "-i"}, ">>> ")
	got := run(binary, []string{"-q"}, "py> ")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("vi mode: python3 -i made x\n%s\npyaichat\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	// editing_mode in the config, without an init file.
	writeConfig(t, home, "editing_mode = \"vi\"\n")
	s := startREPL(t, home, "-q")
	s.Send("abc")
	s.ExpectCursorLine("py> abc")
	s.Send("\x1b")
	time.Sleep(20 * time.Millisecond)
	s.Send("0x")
	s.ExpectCursorLine("py> bc")
}

// TAB where a call's argument starts lists the keyword arguments of a
// function defined in Python (read from its code, running nothing).
func TestPTYTabCompletesKeywordArguments(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	s.Send("def area(width, height=1, *, scale=1.0): return width * height * scale\r")
	s.ExpectCursorLine("...")
	s.Send("\r") // the def's block ends at an empty row
	s.ExpectString("py> ")
	s.Send("area(2, " + ptytest.Tab)
	s.ExpectScreen("the keyword arguments listed", func(screen string) bool {
		return lastRows(screen, 1) == "height=  scale=   width="
	})
	s.Send("sc" + ptytest.Tab)
	s.ExpectCursorLine("py> area(2, scale=")
	s.Send("3)\r")
	s.ExpectString("6\r\n")
}

// TAB inside a string completes a file's path, listing the choices.
func TestPTYTabCompletesPaths(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, name := range []string{"data-2025.csv", "data-2026.csv", "notes/today.txt"} {
		path := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := startREPL(t, home, "-q")
	s.Send("open('da" + ptytest.Tab)
	s.ExpectScreen("both files listed", func(screen string) bool {
		return lastRows(screen, 2) == "py> open('data-202\ndata-2025.csv  data-2026.csv"
	})
	s.Send("6" + ptytest.Tab)
	s.ExpectCursorLine("py> open('data-2026.csv")
	s.Send("\x15x = 'no" + ptytest.Tab)
	s.ExpectCursorLine("py> x = 'notes/")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("py> x = 'notes/today.txt")
	s.Send("'\r")
	s.ExpectString("py> ")
	typeLine(t, s, "open(x).read()", "'x\\n'")
}
