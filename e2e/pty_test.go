package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// PTY end-to-end tests: pyaichat on a pseudo-terminal, typed at as a person
// would. Output comes back through the tty (ONLCR), so lines end in "\r\n".

// enter types line and Enter and waits for the line editor's final echo of
// it, so that what is expected next cannot match the echo.
func enter(s *ptytest.Proc, line string) {
	s.SendLine(line)
	s.ExpectString(line + "\r\n")
}

// typeLine types line and Enter at the py> prompt, waits for want (whole
// output lines, without the final newline; "" for none) after the echoed
// line, and for the next prompt.
func typeLine(t *testing.T, s *ptytest.Proc, line, want string) {
	t.Helper()
	enter(s, line)
	if want != "" {
		s.ExpectString(strings.ReplaceAll(want, "\n", "\r\n") + "\r\n")
	}
	s.ExpectString("py> ")
}

// assertExit waits for the program to end and checks its status and that
// the terminal modes are back to what they were before it started.
func assertExit(t *testing.T, s *ptytest.Proc, want int) {
	t.Helper()
	if got := s.ExpectExit(); got != want {
		t.Errorf("exit status %d, want %d\n%s", got, want, s.Dump())
	}
	if d := s.TermiosChanges(); d != "" {
		t.Errorf("the terminal was not restored after exit: %s", d)
	}
}

func TestPTYFirstPrompt(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.ExpectCursorLine("py>")
	if strings.Contains(s.Output(), "Traceback") || strings.Contains(s.Output(), "warning") {
		t.Errorf("unexpected start-up output:\n%s", s.Dump())
	}
	if !strings.Contains(s.Output(), "\x1b[?2004h") {
		t.Errorf("bracketed paste was not switched on at the prompt (no ESC[?2004h)\n%s", s.Dump())
	}
	typeLine(t, s, "1+1", "2")
}

func TestPTYTabTogglesModeKeepingText(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.Send("6*7")
	s.ExpectCursorLine("py> 6*7")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("ai> 6*7")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("py> 6*7")
	s.SendLine("")
	s.ExpectString("6*7\r\n")
	s.ExpectString("42\r\n")
	s.ExpectString("py> ")

	// A question at ai> gets one line and the ai> prompt back; TAB returns
	// to py> with the session intact.
	typeLine(t, s, "kept = 'state'", "")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("ai>")
	enter(s, "what is kept?")
	s.ExpectString("ai> ")
	s.ExpectCursorLine("ai>")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("py>")
	enter(s, "kept")
	s.ExpectString("'state'\r\n")
}

func TestPTYBlock(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.SendLine("for i in range(3):")
	s.ExpectString("... ")
	s.SendLine("    print(i * 10)")
	s.ExpectString("... ")
	s.SendLine("")
	s.ExpectString("0\r\n10\r\n20\r\n")
	s.ExpectString("py> ")
	// TAB inside an incomplete block indents instead of switching modes.
	s.SendLine("def f():")
	s.ExpectString("... ")
	s.Send(ptytest.Tab + "return 'indented'")
	s.ExpectScreen("the continuation line to hold the indented body", func(screen string) bool {
		return strings.HasSuffix(screen, "...     return 'indented'") || strings.HasSuffix(screen, "... \treturn 'indented'")
	})
	s.SendLine("")
	s.ExpectString("... ")
	s.SendLine("")
	s.ExpectString("py> ")
	typeLine(t, s, "f()", "'indented'")
}

func TestPTYTraceback(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.SendLine("def g(): return 1/0")
	s.ExpectString("... ")
	s.SendLine("")
	s.ExpectString("py> ")
	enter(s, "g()")
	s.ExpectString("Traceback (most recent call last):\r\n")
	s.ExpectString(", in g\r\n")
	s.ExpectString("ZeroDivisionError: division by zero\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, "import sys; sys.last_type.__name__", "'ZeroDivisionError'")
	enter(s, "1 +* 2")
	s.ExpectString("SyntaxError: invalid syntax\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, "'alive'", "'alive'")
}

// interrupt sends Ctrl-C and waits for KeyboardInterrupt and the prompt; it
// logs how long the interrupt took (it should be under 0.5 s; no timing is
// asserted here, the machine is shared).
func interrupt(t *testing.T, s *ptytest.Proc) {
	t.Helper()
	start := time.Now()
	s.Send(ptytest.CtrlC)
	s.ExpectStringTimeout("KeyboardInterrupt", 5*time.Second)
	t.Logf("KeyboardInterrupt %v after Ctrl-C", time.Since(start).Round(time.Millisecond))
	s.ExpectString("py> ")
}

func TestPTYCtrlCWhileTrue(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	typeLine(t, s, "before = 'kept'", "")
	s.SendLine("def spin():")
	s.SendLine("    global during")
	s.SendLine("    during = 'assigned'")
	s.SendLine("    print('spinning')")
	s.SendLine("    while True: pass")
	s.SendLine("")
	s.ExpectString("py> ")
	enter(s, "spin()")
	s.ExpectString("spinning\r\n")
	time.Sleep(200 * time.Millisecond)
	interrupt(t, s)
	typeLine(t, s, "before, during", "('kept', 'assigned')")
	// And a second time: the handler survives its first use.
	enter(s, "spin()")
	s.ExpectString("spinning\r\n")
	time.Sleep(200 * time.Millisecond)
	interrupt(t, s)
	typeLine(t, s, "'still here'", "'still here'")
}

func TestPTYCtrlCSleep(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	enter(s, "import time; x = 41; print('sleeping'); time.sleep(60); x = 0")
	s.ExpectString("sleeping\r\n")
	time.Sleep(200 * time.Millisecond)
	interrupt(t, s)
	typeLine(t, s, "x + 1", "42")
}

func TestPTYCtrlCAtPromptDiscardsLine(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.Send("raise SystemExit(9)")
	s.ExpectCursorLine("py> raise SystemExit(9)")
	s.Send(ptytest.CtrlC)
	s.ExpectString("KeyboardInterrupt")
	s.ExpectString("py> ")
	typeLine(t, s, "'fresh'", "'fresh'")
}

// A pending block is discarded by Ctrl-C at the continuation prompt,
// whether it comes as the key (the terminal is raw at a prompt) or as a
// signal while no code runs (kill -INT, or the key typed in the instant
// between two prompts, when the terminal is cooked), as in python3.
func TestPTYCtrlCDiscardsBlock(t *testing.T) {
	for name, ctrlC := range map[string]func(*ptytest.Proc) error{
		"key":    func(s *ptytest.Proc) error { s.Send(ptytest.CtrlC); return nil },
		"signal": func(s *ptytest.Proc) error { return syscall.Kill(s.Pid(), syscall.SIGINT) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := startREPL(t, "")
			enter(s, "if True:")
			s.ExpectString("... ")
			enter(s, "    print('never')")
			s.ExpectString("... ")
			if err := ctrlC(s); err != nil {
				t.Fatal(err)
			}
			s.ExpectString("KeyboardInterrupt")
			s.ExpectString("py> ")
			typeLine(t, s, "'fresh'", "'fresh'")
			if strings.Contains(s.Output(), "never\r\n") {
				t.Errorf("the discarded block ran\n%s", s.Dump())
			}
		})
	}
}

func TestPTYInput(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	enter(s, "name = input('name: ')")
	s.ExpectString("name: ")
	s.SendLine("Ada Lovelace")
	s.ExpectString("py> ")
	typeLine(t, s, "name.upper()", "'ADA LOVELACE'")
	// sys.stdin.readline goes through the REPL too
	enter(s, "import sys; line = sys.stdin.readline()")
	s.SendLine("from stdin")
	s.ExpectString("py> ")
	typeLine(t, s, "line", `'from stdin\n'`)
}

func TestPTYCtrlCOnInput(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	typeLine(t, s, "answer = 'unchanged'", "")
	enter(s, "answer = input('? ')")
	s.ExpectString("? ")
	time.Sleep(100 * time.Millisecond)
	interrupt(t, s)
	typeLine(t, s, "answer", "'unchanged'")
	// the next input() still works
	enter(s, "answer = input('again? ')")
	s.ExpectString("again? ")
	s.SendLine("yes")
	s.ExpectString("py> ")
	typeLine(t, s, "answer", "'yes'")
}

func TestPTYLargePaste(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	// A 20,000-character line pasted without a newline, then Enter.
	body := strings.Repeat("0123456789", 1999) + "abcd" // 19,994 characters
	line := "s = '" + body + "'"
	if len(line) != 20000 {
		t.Fatalf("built a %d-character line", len(line))
	}
	want := len(body)
	start := time.Now()
	s.Paste(line)
	s.ExpectString("abcd'") // the end of the pasted text, in the edit buffer
	t.Logf("20,000-character paste: in the edit buffer after %v", time.Since(start).Round(time.Millisecond))
	s.SendLine("")
	// Enter ends the line as it is shown, without drawing it again.
	s.ExpectString("\r\n\x1b[?2004l")
	s.ExpectString("py> ")
	t.Logf("20,000-character paste + Enter: prompt back after %v", time.Since(start).Round(time.Millisecond))
	typeLine(t, s, "len(s), s[:10], s[-3:]", fmt.Sprintf("(%d, '0123456789', 'bcd')", want))

	// The same, pasted with its newline: it runs at once.
	start = time.Now()
	s.Paste("t = '" + strings.Repeat("y", 19990) + "'\n")
	s.ExpectString("yyy'\r\n")
	s.ExpectString("py> ")
	t.Logf("20,000-character paste with newline: prompt back after %v", time.Since(start).Round(time.Millisecond))
	typeLine(t, s, "len(t)", "19990")
}

func TestPTYPastedBlockWithBlankLinesAndTabs(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	block := "def squares(n):\n" +
		"\tout = []\n" +
		"\n" +
		"\tfor i in range(n):\n" +
		"\t\tout.append(i * i)\n" +
		"\n" +
		"\n" +
		"\treturn out\n" +
		"x = squares(4)\n" +
		"print('x is', x)\n"
	s.Paste(block)
	s.ExpectString("x is [0, 1, 4, 9]\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, "squares(3)", "[0, 1, 4]")
	// Pasted tabs are text, never a mode switch.
	if strings.Contains(s.Output(), "ai> ") {
		t.Errorf("a pasted tab switched to ai>\n%s", s.Dump())
	}
	// A pasted class with a blank line between methods, then a use of it.
	s.Paste("class K:\n    def a(self):\n        return 1\n\n    def b(self):\n        return self.a() + 1\nprint(K().b())\n")
	s.ExpectString("\r\n2\r\n")
	s.ExpectString("py> ")
}

// A paste compiles with the session's __future__ imports, as typed lines do.
func TestPTYPasteKeepsFutureImports(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	typeLine(t, s, "from __future__ import annotations", "")
	s.Paste("def f(x: undefined) -> int:\n    pass\nprint(f.__annotations__)\n")
	s.ExpectString("{'x': 'undefined', 'return': 'int'}\r\n")
	s.ExpectString("py> ")
}

func TestPTYCtrlDExitsZero(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	typeLine(t, s, "1+1", "2")
	s.Send(ptytest.CtrlD)
	assertExit(t, s, 0)
}

func TestPTYSysExit3(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.SendLine("import sys; sys.exit(3)")
	assertExit(t, s, 3)
}

func TestPTYExitFromAIMode(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("ai>")
	s.Send(ptytest.CtrlD)
	assertExit(t, s, 0)
}

func TestPTYHistoryAfterRestart(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startREPL(t, home)
	typeLine(t, s, "hist_marker = 12345", "")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("ai>")
	enter(s, "a question for history")
	s.ExpectString("ai> ")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("py>")
	s.Send(ptytest.CtrlD)
	assertExit(t, s, 0)
	if h := readFile(t, historyFile(home, "py")); !strings.Contains(h, "hist_marker = 12345") {
		t.Errorf("history-py does not hold the line: %q", h)
	}

	s = startREPL(t, home)
	s.Send(ptytest.Up)
	s.ExpectCursorLine("py> hist_marker = 12345")
	s.Send(ptytest.Tab)
	s.ExpectCursorLine("ai> hist_marker = 12345")
	// clear the line (Ctrl-U) and recall the ai> history
	s.Send("\x15")
	s.ExpectCursorLine("ai>")
	s.Send(ptytest.Up)
	s.ExpectCursorLine("ai> a question for history")
	s.Send("\x15" + ptytest.Tab)
	s.ExpectCursorLine("py>")
	s.Send(ptytest.Up)
	s.ExpectCursorLine("py> hist_marker = 12345")
	s.SendLine("")
	s.ExpectString("py> ")
	typeLine(t, s, "hist_marker", "12345")
}

func TestPTYScriptThenInteractive(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	script := filepath.Join(home, "script.py")
	src := "import sys\n" +
		"greeting = 'hi ' + sys.argv[1]\n" +
		"def helper():\n    return 'helped'\n" +
		"print('script ran as', __name__, sys.argv[1:])\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startREPLNoWait(t, home, nil, script, "arg1", "--flag")
	s.ExpectString("script ran as __main__ ['arg1', '--flag']\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, "greeting, helper()", "('hi arg1', 'helped')")
	typeLine(t, s, "sys.argv[0] == "+pyQuote(script), "True")
}

func TestPTYScriptErrorKeptAsLast(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	script := filepath.Join(home, "bad.py")
	if err := os.WriteFile(script, []byte("before = 1\nraise ValueError('from the file')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startREPLNoWait(t, home, nil, script)
	s.ExpectString("ValueError: from the file\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, "before, sys.last_type.__name__ if 'sys' in dir() else __import__('sys').last_type.__name__", "(1, 'ValueError')")
}

func TestPTYDashC(t *testing.T) {
	t.Parallel()
	s := startREPLNoWait(t, "", nil, "-c", "import sys; cval = 7; print('c ran', sys.argv)", "a1")
	s.ExpectString("c ran ['-c', 'a1']\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, "cval * 6", "42")
}

func pyQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

// makeVenv creates a venv with Debian's python3 (without pip, which Debian
// splits off) holding a tiny package e2e_venv_pkg.
func makeVenv(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "venv")
	out, err := exec.Command(pythonOracle, "-m", "venv", "--without-pip", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("creating a venv with %s -m venv --without-pip (install python3-venv): %v\n%s", pythonOracle, err, out)
	}
	site, err := filepath.Glob(filepath.Join(dir, "lib", "python3*", "site-packages"))
	if err != nil || len(site) != 1 {
		t.Fatalf("no site-packages in the venv: %v %v", site, err)
	}
	pkg := filepath.Join(site[0], "e2e_venv_pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "__init__.py"), []byte("VALUE = 'from the venv'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func checkVenv(t *testing.T, s *ptytest.Proc, venv string) {
	t.Helper()
	typeLine(t, s, "import e2e_venv_pkg; e2e_venv_pkg.VALUE", "'from the venv'")
	typeLine(t, s, "import sys; sys.prefix == "+pyQuote(venv), "True")
	typeLine(t, s, "sys.executable == "+pyQuote(filepath.Join(venv, "bin", "python")), "True")
	typeLine(t, s, "sys.base_prefix", "'/usr'")
}

func TestPTYVenvFlag(t *testing.T) {
	t.Parallel()
	venv := makeVenv(t)
	s := startREPLNoWait(t, "", nil, "--venv", venv)
	s.ExpectString("py> ")
	checkVenv(t, s, venv)
}

func TestPTYVirtualEnvVariable(t *testing.T) {
	t.Parallel()
	venv := makeVenv(t)
	s := startREPLNoWait(t, "", []string{"VIRTUAL_ENV=" + venv})
	s.ExpectString("py> ")
	checkVenv(t, s, venv)
}

// A venv of another Python version: --venv asked for it, so pyaichat says
// why and exits with status 2; $VIRTUAL_ENV is only inherited, so it warns
// that it starts without it, and does.
func TestVenvOfAnotherPython(t *testing.T) {
	t.Parallel()
	venv := t.TempDir()
	if err := os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = /nowhere\nversion = 2.7.18\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(extraEnv []string, args ...string) (stdout, stderr string, status int) {
		home := t.TempDir()
		cmd := exec.Command(binary, args...)
		cmd.Env = append(testEnv(home, ""), extraEnv...)
		cmd.Stdin = strings.NewReader("print(6 * 7)\n")
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), status
	}
	const mismatch = " is for Python 2.7.18, but pyaichat embeds Python "
	stdout, stderr, status := run(nil, "--venv", venv)
	if status != 2 || !strings.Contains(stderr, mismatch) || strings.Contains(stderr, "starting without it") || stdout != "" {
		t.Errorf("--venv of another Python: status %d, stdout %q, stderr %q; want status 2 and why, without \"starting without it\"", status, stdout, stderr)
	}
	stdout, stderr, status = run([]string{"VIRTUAL_ENV=" + venv})
	if status != 0 || !strings.Contains(stderr, mismatch) || !strings.Contains(stderr, "; starting without it") || stdout != "42\n" {
		t.Errorf("$VIRTUAL_ENV of another Python: status %d, stdout %q, stderr %q; want a warning and the session", status, stdout, stderr)
	}
}

func TestPTYNoVenvExecutable(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	// Not whatever python3 comes first on PATH (a pyenv shim here).
	typeLine(t, s, "import sys, os; os.path.realpath(sys.executable).startswith('/usr/bin/python3')", "True")
}

func TestPTYUserSIGINTHandlerKeepsCtrlC(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	typeLine(t, s, "import signal; _ = signal.signal(signal.SIGINT, signal.default_int_handler)", "")
	enter(s, "import time; print('sleeping'); time.sleep(60)")
	s.ExpectString("sleeping\r\n")
	time.Sleep(200 * time.Millisecond)
	interrupt(t, s)
	typeLine(t, s, "'ok'", "'ok'")
}

// Keys typed while a paste is still being taken in (type-ahead) are kept, in
// order, after the paste.
func TestPTYTypeAheadAfterPaste(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	line := "u = '" + strings.Repeat("q", 4000) + "'"
	s.Send("\x1b[200~" + line + "\x1b[201~" + "\r" + "len(u) + 1\r")
	// Fail at once on an error rather than waiting out the timeout.
	m := s.ExpectRegexp(regexp.MustCompile(`(4001|\w+Error[^\r]*)\r\n`))
	if m[1] != "4001" {
		t.Fatalf("paste + Enter + typed line gave %q, want 4001 (the Enter after the paste was lost?)\n%s", m[1], s.Dump())
	}
	s.ExpectString("py> ")
	typeLine(t, s, "'after'", "'after'")
}

// A paste without a newline waits in the edit buffer for more typing.
func TestPTYPasteWithoutTrailingNewlineStaysInBuffer(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q") // no banner: the screen is the prompt line
	s.Paste("v = 5 * 5")
	s.ExpectCursorLine("py> v = 5 * 5")
	s.Settle(100 * time.Millisecond)
	// What a person sees: the pasted text on the prompt line, nothing else
	// (no empty prompt lines left above it).
	if got := s.Screen(); got != "py> v = 5 * 5" {
		t.Errorf("after pasting one line the screen is\n%s\nwant just the prompt line %q", got, "py> v = 5 * 5")
	}
	s.SendLine(" + 1")
	s.ExpectString("py> ")
	typeLine(t, s, "v", "26")
}
