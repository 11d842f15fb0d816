package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// A step of a session with a nested reader of the terminal: what the user
// types, and what then shows.
type step struct {
	keys, want string
}

// runSteps plays steps in both ways a person gives keys to a terminal: a
// key at a time, waiting for each answer, and all typed ahead at once (as
// a paste into a terminal without bracketed paste, or fast typing while a
// program starts). Either way each key must reach the program that reads
// when its turn comes: pdb, input(), a child program or the next py>
// prompt. Nothing may run twice or in the wrong place.
func runSteps(t *testing.T, steps []step) {
	for _, style := range []string{"typed", "ahead"} {
		t.Run(style, func(t *testing.T) {
			t.Parallel()
			s := startREPL(t, "")
			if style == "ahead" {
				var all strings.Builder
				for _, st := range steps {
					all.WriteString(st.keys)
				}
				s.Send(all.String())
			}
			for _, st := range steps {
				if style == "typed" {
					s.Type(st.keys, 3*time.Millisecond)
				}
				s.ExpectString(st.want)
			}
			if !strings.HasSuffix(steps[len(steps)-1].want, "py> ") {
				s.ExpectString("py> ")
			}
			typeLine(t, s, "'still here'", "'still here'")
			// py>'s inline suggestions are drawn dim and are no output
			// ("P" may be offered "ermissionError").
			out := suggestionSeq.ReplaceAllString(s.Output(), "")
			for _, bad := range []string{"Traceback", "Error", "*** "} {
				if strings.Contains(out, bad) {
					t.Errorf("the output has %q: a key went to the wrong reader\n%s", bad, s.Dump())
				}
			}
		})
	}
}

// suggestionSeq is an inline suggestion as the line editor draws it.
var suggestionSeq = regexp.MustCompile("\x1b\\[2m[^\x1b]*\x1b\\[22m")

func TestPTYPdb(t *testing.T) {
	t.Parallel()
	runSteps(t, []step{
		{"def f(a):\r", "... "},
		{"    breakpoint()\r", "... "},
		{"    return a\r", "... "},
		{"\r", "py> "},
		{"f(6)\r", "(Pdb) "},
		{"p a * 7\r", "42\r\n"},
		{"c\r", "6\r\n"},
		{"import pdb\r", "py> "},
		{"pdb.run('b = 6 * 7')\r", "(Pdb) "},
		{"n\r", "(Pdb) "},
		{"p b\r", "42\r\n"},
		{"c\r", "py> "},
	})
}

func TestPTYInputLineEditing(t *testing.T) {
	t.Parallel()
	t.Run("plain", func(t *testing.T) {
		runSteps(t, []step{
			{"x = input('name: ')\r", "name: "},
			{"alie" + ptytest.Left + "c\r", "py> "},
			{"x\r", "'alice'"},
		})
	})
	// The completion that python3 -i's sys.__interactivehook__ sets up.
	t.Run("completion", func(t *testing.T) {
		runSteps(t, []step{
			{"x = input('> ')\r", "> "},
			{"isinst\t1\r", "py> "},
			{"x\r", "'isinstance(1'"},
		})
	})
	t.Run("import readline", func(t *testing.T) {
		runSteps(t, []step{
			{"import readline\r", "py> "},
			{"readline.add_history('from history')\r", "py> "},
			{"x = input('name: ')\r", "name: "},
			{"bob" + ptytest.Left + ptytest.Left + "x\r", "py> "},
			{"x\r", "'bxob'"},
			{"y = input('again: ')\r", "again: "},
			{ptytest.Up + ptytest.Up + "\r", "py> "},
			{"y\r", "'from history'"},
		})
	})
}

func TestPTYCodeInteract(t *testing.T) {
	t.Parallel()
	runSteps(t, []step{
		{"import code; code.interact(local={'y': 5})\r", "(InteractiveConsole)"},
		{"y * 2\r", "10\r\n"},
		{"\x04", "now exiting InteractiveConsole"},
		{"'back'\r", "'back'"},
	})
}

// Child programs that read the terminal: another python3, and an
// interactive bash, which takes the terminal's foreground for itself and
// gives it back. Each returns to a working py> prompt, five times.
func TestPTYChildPrograms(t *testing.T) {
	t.Parallel()
	t.Run("python3", func(t *testing.T) {
		steps := []step{{"import os\r", "py> "}}
		for i := range 5 {
			steps = append(steps,
				// 3.13's new REPL drops keys typed before it starts; the
				// basic one, as earlier versions', reads them.
				step{fmt.Sprintf("os.system('PYTHON_BASIC_REPL=1 %s -q')\r", pythonOracle), ">>> "},
				step{fmt.Sprintf("print(6 * %d)\r", 7+i), fmt.Sprintf("%d\r\n", 6*(7+i))},
				step{"exit()\r", "0\r\n"},
			)
		}
		runSteps(t, steps)
	})
	t.Run("bash", func(t *testing.T) {
		steps := []step{{"import os, subprocess\r", "py> "}}
		for i := range 5 {
			steps = append(steps,
				step{"r = subprocess.run(['bash', '--norc', '--noprofile', '-i'], env=dict(os.environ, PS1='B' + 'SH> '))\r", "BSH> "},
				step{fmt.Sprintf("echo $((6 * %d))\r", 7+i), fmt.Sprintf("%d\r\n", 6*(7+i))},
				step{"exit\r", "py> "},
				step{"r.returncode\r", "0\r\n"},
			)
		}
		runSteps(t, steps)
	})
}

// A child that takes the terminal's foreground and ends without giving it
// back does not end the session: pyaichat takes the terminal back at its
// next prompt.
func TestPTYChildKeepsForeground(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	typeLine(t, s, "import os, subprocess", "")
	steal := "import os, signal; signal.signal(signal.SIGTTOU, signal.SIG_IGN); os.setpgid(0, 0); os.tcsetpgrp(0, os.getpgrp())"
	typeLine(t, s, fmt.Sprintf("subprocess.run([%q, '-c', %q]).returncode", pythonOracle, steal), "0")
	typeLine(t, s, "6 * 7", "42")
	if s.Exited() {
		t.Fatalf("pyaichat ended\n%s", s.Dump())
	}
}

// A PYTHONSTARTUP that sets up GNU readline, as many do, leaves py>, ai>
// and TAB to pyaichat.
func TestPTYStartupImportsReadline(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	startup := filepath.Join(home, "startup.py")
	if err := os.WriteFile(startup, []byte("import readline, rlcompleter\nreadline.parse_and_bind('tab: complete')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startREPLNoWait(t, home, []string{"PYTHONSTARTUP=" + startup})
	s.ExpectString("py> ")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("ai>")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("py>")
	typeLine(t, s, "'readline' in sys.modules if (sys := __import__('sys')) else 0", "True")
	s.Send("x = input('name: ')\r")
	s.ExpectString("name: ")
	s.Send("ann" + ptytest.Left + "i\r")
	s.ExpectString("py> ")
	typeLine(t, s, "x", "'anin'")
}
