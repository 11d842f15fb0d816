package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// More of the REPL under a PTY: code stuck in C, threads at exit, bad
// terminals and bad history files.

func TestPTYStuckInCOffersToAbandon(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	enter(s, "sum(range(10**12))")
	time.Sleep(300 * time.Millisecond)
	s.Send(ptytest.CtrlC)
	time.Sleep(800 * time.Millisecond)
	s.Send(ptytest.CtrlC)
	s.ExpectString("Press Ctrl-C again to abandon")
	s.Send(ptytest.CtrlC)
	s.ExpectString("abandoned")
	status := s.ExpectExit()
	t.Logf("exit status after abandoning: %d", status)
	if status == 0 {
		t.Errorf("an abandoned session exited with status 0")
	}
	if d := s.TermiosChanges(); d != "" {
		t.Errorf("the terminal was not restored after abandoning: %s", d)
	}
}

// Exit waits for a non-daemon thread as python3 does, says so after a
// few seconds, and Ctrl-C stops the wait, leaving the terminal as it was.
func TestPTYExitWaitsForThreadUntilCtrlC(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	typeLine(t, s, "import threading, time; th = threading.Thread(target=time.sleep, args=(3600,)); th.start()", "")
	s.Send(ptytest.CtrlD)
	s.ExpectString("pyaichat: waiting for Python's non-daemon threads to end (Ctrl-C stops the wait)")
	s.Send(ptytest.CtrlC)
	s.ExpectString("KeyboardInterrupt")
	assertExit(t, s, 0)
}

func TestPTYSysExitRestoresTerminalAfterAIMode(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.SendLine("raise SystemExit(7)")
	assertExit(t, s, 7)
	if !strings.Contains(s.Output(), "\x1b[?2004l") {
		t.Errorf("bracketed paste was not switched off at exit")
	}
}

func TestPTYDumbTerminal(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := append(testEnv(home, ""), "TERM=dumb")
	s := ptytest.Start(t, binary, ptytest.Options{Env: env, Dir: home})
	s.ExpectString("py> ")
	s.SendLine("6*7")
	s.ExpectString("42\r\n")
	s.ExpectString("py> ")
	s.SendLine("import os; n = os.write(1, b'raw')")
	s.ExpectString("py> ")
	if strings.Contains(s.Output(), "\x1b[") || strings.Contains(s.Output(), "    \r") {
		t.Errorf("escape sequences or line redraws sent to a TERM=dumb terminal: %q", s.Output())
	}
	s.Send(ptytest.CtrlD)
	assertExit(t, s, 0)
}

func TestPTYResizeDuringOutput(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	enter(s, "for i in range(3000): print('row', i)")
	s.SendLine("")
	tty := ttyOf(t, s)
	for i := 0; i < 20; i++ {
		_ = pty.Setsize(tty, &pty.Winsize{Rows: uint16(20 + i), Cols: uint16(60 + 2*i)})
		time.Sleep(5 * time.Millisecond)
	}
	s.ExpectString("row 2999\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, "'resized'", "'resized'")
}

func TestPTYUnusableHistoryWarnsOnce(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	// history-py is a directory: unreadable as a file.
	if err := os.MkdirAll(historyFile(home, "py"), 0o755); err != nil {
		t.Fatal(err)
	}
	// history-ai holds invalid UTF-8 and a NUL.
	if err := os.WriteFile(historyFile(home, "ai"), []byte("ok line\n\xff\xfe\x00bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startREPL(t, home)
	typeLine(t, s, "'started'", "'started'")
	out := s.Output()
	if strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
		t.Fatalf("crash with an unusable history file\n%s", s.Dump())
	}
	// One warning for history-py (a directory); history-ai may be read as
	// it is or give one warning too.
	if n := strings.Count(out, "history-py"); n < 1 || n > 2 { // the message may name it twice
		t.Errorf("want one warning about history-py, saw it named %d times\n%s", n, s.Dump())
	}
	if n := strings.Count(out, "pyaichat: "); n < 1 || n > 2 {
		t.Errorf("want one warning per unusable history file, saw %d warnings\n%s", n, s.Dump())
	}
	s.Send(ptytest.CtrlD)
	assertExit(t, s, 0)
}

func TestPTYNULAndInvalidUTF8(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	// Each paste waits for the answer to the one before (type-ahead across
	// pastes is TestPTYTypeAheadAfterPaste's business).
	s.Paste("x = 'a\x00b'\n")
	s.ExpectString("null bytes")
	s.ExpectString("py> ")
	s.Paste("y = '\xff\xfe'\n")
	s.ExpectString("can't decode byte 0xff")
	s.ExpectString("py> ")
	typeLine(t, s, "'alive after NUL and bad UTF-8'", "'alive after NUL and bad UTF-8'")
	if strings.Contains(s.Output(), "panic") {
		t.Errorf("panic on NUL or invalid UTF-8\n%s", s.Dump())
	}
}

// ttyOf finds the PTY slave of the session's program (its stdin).
func ttyOf(t *testing.T, s *ptytest.Proc) *os.File {
	t.Helper()
	name, err := os.Readlink(filepath.Join("/proc", itoa(s.Pid()), "fd", "0"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(name, os.O_RDWR|syscallNoctty, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

const syscallNoctty = syscall.O_NOCTTY

func itoa(n int) string { return strconv.Itoa(n) }

// Ctrl-Z where no shell can continue pyaichat (it leads its own session, as
// under `docker run -it` or a terminal emulator without a shell): python3
// ignores it, and so must pyaichat, keeping the line being typed. (The
// line editor's own handling stopped the parent process and then waited
// for ever.)
func TestPTYCtrlZWithoutJobControl(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.Send("x = 4")
	s.ExpectCursorLine("py> x = 4")
	s.Send("\x1a")
	s.ExpectCursorLine("py> x = 4")
	s.Send("\r")
	typeLine(t, s, "x + 1", "5")
	s.Send(ptytest.CtrlD)
	assertExit(t, s, 0)
}

// Home and End as tmux, screen and rxvt send them, and Ctrl-Left/Right,
// which GNU readline takes from Debian's /etc/inputrc.
func TestPTYHomeEndAndWordKeys(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.Send("23")
	s.Send("\x1b[1~1\x1b[4~4")
	s.ExpectCursorLine("py> 1234")
	s.Send("\x1b[7~9\x1b[8~5")
	s.ExpectCursorLine("py> 912345")
	s.Send("\r")
	s.ExpectString("912345\r\n")
	s.ExpectString("py> ")
	s.Send("aa bb\x1b[1;5Dx\x1b[1;5Cy\r")
	s.ExpectString("SyntaxError")
	s.ExpectScreen(`the line "py> aa xbby"`, func(screen string) bool {
		return strings.Contains(screen, "\npy> aa xbby\n")
	})
}

// Ctrl-C at the ai> prompt drops the question typed so far; it is not
// Python's KeyboardInterrupt.
func TestPTYCtrlCAtAIPrompt(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	s.Send("\t")
	s.ExpectCursorLine("ai>")
	s.Send("half a question")
	s.ExpectCursorLine("ai> half a question")
	s.Send(ptytest.CtrlC)
	// The next prompt, on a row of its own. (Keys typed before it shows
	// may come while the terminal is cooked between the two prompts, and
	// the terminal itself echoes them where the cursor is, as it does
	// with python3.)
	s.ExpectCursorLine("ai>")
	typed := "the next one"
	s.Send(typed)
	s.ExpectCursorLine("ai> " + typed)
	if strings.Contains(s.Output(), "KeyboardInterrupt") || strings.Contains(s.Output(), "^C") {
		t.Errorf("Ctrl-C at ai> printed KeyboardInterrupt or ^C:\n%s", s.Dump())
	}
	if lines := strings.Split(s.Screen(), "\n"); len(lines) < 2 || lines[len(lines)-2] != "ai> half a question" {
		t.Errorf("the next prompt does not follow the discarded line:\n%s", s.Screen())
	}
}
