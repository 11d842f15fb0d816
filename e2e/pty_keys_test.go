package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// Ctrl-Cs typed all at once at an idle prompt give as many
// KeyboardInterrupts as python3 -i gives for them (its SIGINTs merge into
// one), and the prompt works afterwards.
func TestPTYQuickCtrlCsAsPython(t *testing.T) {
	t.Parallel()
	interrupts := func(program string, args []string, prompt string) int {
		s := startProgram(t, program, "", nil, args...)
		s.ExpectString(prompt)
		waitUntilWaiting(t, s.Pid())
		s.Send(strings.Repeat(ptytest.CtrlC, 5))
		s.ExpectString("KeyboardInterrupt")
		s.ExpectString(prompt)
		// Every interrupt the Ctrl-Cs give comes before this line's result.
		s.SendLine("1+1")
		s.ExpectString("1+1\r\n")
		s.ExpectString("2\r\n")
		s.ExpectString(prompt)
		return strings.Count(s.Output(), "KeyboardInterrupt")
	}
	want := interrupts(pythonOracle, []string{"-q", "-i"}, ">>> ")
	got := interrupts(binary, []string{"-q"}, "py> ")
	if got != want {
		t.Errorf("five Ctrl-Cs at once: python3 -i gave %d KeyboardInterrupts, pyaichat %d", want, got)
	}
}

// waitUntilWaiting waits until the process pid waits for input in
// select/poll/epoll (a thread of it does), as at an idle prompt. python3 -i
// writes its prompt before it waits in select(2), and a SIGINT that comes
// in between is noted but acted on only when the next key arrives.
func waitUntilWaiting(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(ptytest.DefaultTimeout)
	for {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		for _, task := range tasks {
			wchan, _ := os.ReadFile(task)
			if strings.Contains(string(wchan), "poll_schedule_timeout") || strings.Contains(string(wchan), "do_select") || strings.Contains(string(wchan), "epoll_wait") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never waited for input", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// Keys typed right after Ctrl-Cs, in writes of their own that may reach
// pyaichat together with them, go to the next prompt; none is lost.
func TestPTYKeysRightAfterCtrlCsAreKept(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	s.Send("dropped")
	s.ExpectCursorLine("py> dropped")
	s.Send(strings.Repeat(ptytest.CtrlC, 3))
	s.Send("'ke")
	s.Send("pt'")
	s.Send(ptytest.Enter)
	s.ExpectString("'kept'\r\n")
	s.ExpectString("py> ")
	s.Send("\x03")
	s.ExpectString("KeyboardInterrupt")
	s.ExpectString("py> ")
	typeLine(t, s, "'still' + 'here'", "'stillhere'")
	if n := strings.Count(s.Output(), "KeyboardInterrupt"); n != 2 {
		t.Errorf("want one KeyboardInterrupt for the three Ctrl-Cs and one for the last, got %d\n%s", n, s.Dump())
	}
	if strings.Contains(s.Output(), "NameError") {
		t.Errorf("the discarded text ran\n%s", s.Dump())
	}
}

// Ctrl-\ at the prompt ends python3 -i by SIGQUIT (GNU readline leaves the
// terminal's signal keys on); so it ends pyaichat, which puts the
// terminal's modes back first (python3 leaves them to the shell).
func TestPTYCtrlBackslashAsPython(t *testing.T) {
	t.Parallel()
	quit := func(program string, args []string, prompt string) (syscall.Signal, string) {
		s := startProgram(t, program, "", nil, args...)
		s.ExpectString(prompt)
		s.Send("x = 4")
		s.ExpectCursorLine(prompt + "x = 4")
		s.Send("\x1c")
		return s.ExpectSignaled(), s.TermiosChanges()
	}
	want, _ := quit(pythonOracle, []string{"-q", "-i"}, ">>> ")
	got, termios := quit(binary, []string{"-q"}, "py> ")
	if got != want {
		t.Errorf("Ctrl-\\ at the prompt: python3 -i ended by signal %d, pyaichat by %d", want, got)
	}
	if termios != "" {
		t.Errorf("Ctrl-\\ left the terminal changed: %s", termios)
	}
}

// Ctrl-C while a child program runs goes to the child, as under python3 -i,
// which carries on with what the child's end gives; the next prompt works.
func TestPTYCtrlCInChildAsPython(t *testing.T) {
	t.Parallel()
	run := func(program string, args []string, prompt string) string {
		s := startProgram(t, program, "", nil, args...)
		s.ExpectString(prompt)
		s.SendLine(`import os; os.system("echo started; exec sleep 5")`)
		s.ExpectString("started\r\n")
		s.Send(ptytest.CtrlC)
		// What the child's end printed, before the prompt's own drawing.
		got, _, _ := strings.Cut(s.ExpectString(prompt), "\r\n")
		s.SendLine("'after' + 'wards'")
		s.ExpectString("'afterwards'\r\n")
		s.ExpectString(prompt)
		return got
	}
	want := run(pythonOracle, []string{"-q", "-i"}, ">>> ")
	got := run(binary, []string{"-q"}, "py> ")
	if got != want {
		t.Errorf("Ctrl-C in os.system: python3 -i showed %q, pyaichat %q", want, got)
	}
}

// With SIGQUIT ignored by user code, Ctrl-\ at the prompt does nothing,
// in python3 -i and in pyaichat: the line being typed is kept.
func TestPTYCtrlBackslashIgnoredAsPython(t *testing.T) {
	t.Parallel()
	run := func(program string, args []string, prompt string) string {
		s := startProgram(t, program, "", nil, args...)
		s.ExpectString(prompt)
		ignore := "import signal; h = signal.signal(signal.SIGQUIT, signal.SIG_IGN)"
		s.SendLine(ignore)
		s.ExpectString(ignore + "\r\n")
		s.ExpectString(prompt)
		s.Send("x = 4")
		s.ExpectCursorLine(prompt + "x = 4")
		s.Send("\x1c")
		s.Send("2\r")
		s.SendLine("print('x is', x)")
		return s.ExpectRegexp(regexp.MustCompile(`x is (\d+)\r\n`))[1]
	}
	want := run(pythonOracle, []string{"-q", "-i"}, ">>> ")
	got := run(binary, []string{"-q"}, "py> ")
	if got != want {
		t.Errorf("Ctrl-\\ with SIGQUIT ignored: python3 -i then showed x = %q, pyaichat %q", want, got)
	}
}

// Under a shell with job control, Ctrl-Z at the prompt stops python3 -i
// and pyaichat alike, and after fg the line being typed is still there.
func TestPTYCtrlZSuspendsAsPython(t *testing.T) {
	t.Parallel()
	run := func(command, prompt string) string {
		home := t.TempDir()
		env := append(testEnv(home, "xterm"), "PS1=$ ")
		s := ptytest.Start(t, "/bin/bash", ptytest.Options{Args: []string{"--norc", "--noprofile", "-i"}, Env: env, Dir: home})
		s.ExpectString("$ ")
		s.SendLine(command)
		s.ExpectString(prompt)
		s.Send("x = 4")
		s.ExpectCursorLine(prompt + "x = 4")
		s.Send("\x1a")
		s.ExpectString("Stopped")
		s.ExpectString("$ ")
		s.SendLine("fg")
		s.ExpectString("fg\r\n")
		s.ExpectString(command)
		s.Send("2\r")
		s.SendLine("print('x is', x)")
		return s.ExpectRegexp(regexp.MustCompile(`x is (\d+)\r\n`))[1]
	}
	want := run(pythonOracle+" -q -i", ">>> ")
	got := run(binary+" -q", "py> ")
	if got != want {
		t.Errorf("after Ctrl-Z and fg: python3 -i showed x = %s, pyaichat %s", want, got)
	}
}

// As in python3, keys echo at the prompt while another Python thread holds
// the GIL in C code, here a sum() that outlasts the test: a name typed
// there asks Python for a suggestion, which is given up rather than held
// up behind the GIL, and the keys after it echo as well. (The line runs
// once the thread lets go of the GIL, which this one never does.)
func TestPTYKeysEchoWhileAThreadHoldsTheGIL(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	s.SendLine("import threading, time")
	s.ExpectString("py> ")
	s.SendLine("busy = threading.Thread(target=lambda: (time.sleep(0.3), sum(range(10**12))), daemon=True); busy.start()")
	s.ExpectString("py> ")
	time.Sleep(time.Second) // the thread is inside sum() now
	// Each wait ends long before the thread does; a suggestion may follow
	// the cursor or not.
	typed := func(line string) {
		t.Helper()
		s.ExpectScreen(fmt.Sprintf("%q typed, the cursor after it", line), func(string) bool {
			col, _ := s.Cursor()
			return strings.HasPrefix(s.CursorLine(), line) && col == len(line)
		})
	}
	s.Send("bu")
	typed("py> bu")
	s.Send("sy.na")
	typed("py> busy.na")
}

// As in python3: an escape sequence cut short (Esc then [, Alt+[) takes
// the next key as its end, so an Enter there enters nothing and the next
// one enters the line; a Ctrl-C there still interrupts, and the line it
// was on is not run.
func TestPTYEscapeSequenceCutShort(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	s.Send("1+1\x1b[\r")
	s.Send("\r")
	s.ExpectString("2\r\n")
	s.ExpectString("py> ")
	s.Send("cut = 1\x1b[")
	s.Send(ptytest.CtrlC)
	s.ExpectString("KeyboardInterrupt")
	s.ExpectString("py> ")
	s.SendLine("'cut' in globals()")
	s.ExpectString("False\r\n")
}

// Alt with a key readline binds to nothing (ESC then the key) inserts
// nothing, as in python3; Alt+B still moves back a word.
func TestPTYUnboundMetaKeyInsertsNothing(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	s.Send("1+1\x1bx\x1b.")
	s.ExpectCursorLine("py> 1+1")
	s.Send("\r")
	s.ExpectString("2\r\n")
	s.ExpectString("py> ")
	s.Send("x = 23\x1bb1")
	s.ExpectCursorLine("py> x = 123")
	s.Send("\r")
	s.ExpectString("py> ")
	s.SendLine("x")
	s.ExpectString("123\r\n")
}

// A paste that comes after a key waiting for the next one (C-v quoted
// insert, C-x, C-]) is taken as a paste: the prefix is dropped, the text
// goes into the line, and the keys after it are read as usual. Taken as
// the prefix's key, the paste's marker was dropped while the key reader
// held everything after it for that paste, and the REPL took no key again.
func TestPTYPasteAfterPrefixKeyIsAPaste(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	for i, prefix := range []struct{ name, key string }{
		{"C-v", "\x16"}, {"C-x", "\x18"}, {"C-]", "\x1d"},
	} {
		s.Send("x = ")
		s.ExpectCursorLine("py> x =")
		s.Send(prefix.key)
		s.Paste("'pasted")
		s.ExpectCursorLine("py> x = 'pasted")
		// A key after the paste is typed as it is, not taken by the prefix.
		s.Send(fmt.Sprintf("%d'\r", i))
		s.ExpectString("py> ")
		if got := valueOfX(s, "py> "); got != fmt.Sprintf("'pasted%d'", i) {
			t.Errorf("%s then a paste of 'pasted then %d': x is %s, want 'pasted%d'", prefix.name, i, got, i)
		}
	}
	// A paste of several lines after C-v runs them, as any paste does.
	s.Send("\x16")
	s.Paste("a = 6\rb = a * 7\r")
	s.ExpectString("py> ")
	typeLine(t, s, "b", "42")
}

// The line editor's emacs keys do what GNU readline does with them in
// python3 -i: word moves and kills by letters and digits, Ctrl-Left and
// Ctrl-Right, the kill ring (joined kills, C-y, M-y), case changes,
// transposed words, the last argument of the line before (M-.), undo,
// quoted insert (C-v) and character search (C-], M-C-]).
func TestPTYEditingKeysAsPython(t *testing.T) {
	t.Parallel()
	const text = "x = 'abc def ghi"
	cases := []struct{ name, typed, keys, end string }{
		{"M-., the last argument", "x = ", "\x1b.", ""},
		{"M-u", text, "\x1bb\x1bb\x1bu", "\x05'"},
		{"M-c", text, "\x1bb\x1bc", "\x05'"},
		{"M-l after M-u", text, "\x1bb\x1bu\x1bb\x1bl", "\x05'"},
		{"M-b and M-f", text, "\x1bb\x1bb\x1bb\x1bf\x1bfX", "\x05'"},
		{"Ctrl-Left and Ctrl-Right", text, "\x1b[1;5D\x1b[1;5D\x1b[1;5CX", "\x05'"},
		{"M-d", text, "\x1bb\x1bb\x1bd", "\x05'"},
		{"M-t", text, "\x1bt", "'"},
		{"M-DEL twice, then C-y", text, "\x1b\x7f\x1b\x7f\x19", "'"},
		{"C-w twice, then C-y", text, "\x17\x17\x19", "'"},
		{"C-y then M-y", text, "\x17\x17\x19\x1by", "'"},
		{"C-k and C-y", text, "\x1bb\x0b\x01\x1bf\x1bf\x1bf\x19", "\x05'"},
		{"undo of typing", text, "\x1bbXY\x1f", "\x05'"},
		{"undo of a Backspace", text, "\x7f\x7f\x1f", "'"},
		{"undo of a kill (C-x C-u)", text, "\x17\x18\x15", "'"},
		{"C-v TAB, a TAB in the line", text, "\x16\t", "'"},
		{"C-] then a character", text, "\x01\x1ddX\x1d'Y", "\x05'"},
		{"M-C-] then a character", text, "\x1b\x1daZ\x1b\x1dqW", "\x05'"},
		{"C-t", text, "\x02\x02\x14", "\x05'"},
		{"C-t at the start does nothing", text, "\x01\x14", "\x05'"},
		{"undo of C-t, then a key", text, "\x02\x02\x14\x1fX", "\x05'"},
		{"undo of M-c, then a key", text, "\x1bb\x1bc\x1fX", "\x05'"},
		{"undo of an M-l that changed nothing", text, "\x1bb\x1bl\x1f", "\x05'"},
	}
	run := func(program string, args []string, prompt string) []string {
		s := startProgram(t, program, "", nil, args...)
		s.ExpectString(prompt)
		s.SendLine("prev = 'one two'")
		s.ExpectString(prompt)
		var got []string
		for _, c := range cases {
			s.Send(c.typed)
			s.ExpectCursorLine(prompt + strings.TrimRight(c.typed, " "))
			for _, k := range keysOf(c.keys) {
				s.Send(k)
			}
			s.Send(c.end + "\r")
			s.ExpectString(prompt)
			got = append(got, valueOfX(s, prompt))
		}
		return got
	}
	want := run(pythonOracle, []string{"-q", "-i"}, ">>> ")
	got := run(binary, []string{"-q"}, "py> ")
	for i, c := range cases {
		if got[i] != want[i] {
			t.Errorf("%s: python3 -i made x %s, pyaichat %s", c.name, want[i], got[i])
		}
	}
}

// keysOf splits typed into keys, each sent as a terminal sends it, in one
// write: ESC [ or ESC O with its parameters and final byte, ESC and the
// key Meta goes with, or one byte.
func keysOf(typed string) []string {
	var keys []string
	for typed != "" {
		n := 1
		if typed[0] == '\x1b' && len(typed) > 1 {
			n = 2
			if typed[1] == '[' || typed[1] == 'O' {
				for n < len(typed) && (typed[n] < 0x40 || typed[n] > 0x7e) {
					n++
				}
				n = min(n+1, len(typed))
			}
		}
		keys = append(keys, typed[:n])
		typed = typed[n:]
	}
	return keys
}

// Ctrl-L clears the screen as python3 -i's readline does, as the first key
// at a new prompt and in a line being edited: the cursor home and the
// whole screen erased (ESC[H ESC[2J, which tmux and others keep in their
// scrollback once), then the prompt and the line drawn once at the top.
// The keys after it never erase down from the top left (CR ESC[J there):
// tmux takes that for another clear of the screen, and keeps another copy
// of the line in its scrollback for each key.
func TestPTYCtrlLClearsAsPython(t *testing.T) {
	t.Parallel()
	type state struct {
		screen   string
		col, row int
	}
	run := func(program string, args []string, prompt string) []state {
		s := startProgram(t, program, "", nil, args...)
		s.ExpectString(prompt)
		s.SendLine("1+1")
		s.ExpectString("2\r\n")
		s.ExpectString(prompt)
		var got []state
		clear := func(line string) {
			mark := len(s.Output())
			s.Send("\x0c")
			s.ExpectScreen("the cleared screen", func(screen string) bool { return screen == strings.TrimRight(prompt+line, " ") })
			s.Settle(200 * time.Millisecond)
			out := s.Output()[mark:]
			if !strings.HasPrefix(out, "\x1b[H\x1b[2J") || strings.Count(out, prompt) != 1 {
				t.Errorf("%s: after Ctrl-L at %q it wrote %q, want ESC[H ESC[2J and the prompt once", program, line, out)
			}
			col, row := s.Cursor()
			got = append(got, state{strings.ReplaceAll(s.Screen(), strings.TrimSpace(prompt), "P"), col, row})
		}
		noEraseAtTop := func(from int, what string) {
			if out := s.Output()[from:]; strings.Contains(out, "\r\x1b[J") {
				t.Errorf("%s: %s erased down from the top left: %q", program, what, out)
			}
		}
		clear("") // the first key at a new prompt
		mark := len(s.Output())
		s.Send("abc")
		s.ExpectCursorLine(prompt + "abc")
		s.Send("\x1b[D") // now in the line editor proper
		s.ExpectCursorAt(prompt+"abc", len(prompt)+2)
		s.Settle(200 * time.Millisecond)
		noEraseAtTop(mark, "typing and moving after Ctrl-L")
		clear("abc")
		mark = len(s.Output())
		s.Send("X")
		s.ExpectCursorAt(prompt+"abXc", len(prompt)+3)
		s.Settle(200 * time.Millisecond)
		noEraseAtTop(mark, "inserting after Ctrl-L")
		s.Send("\r")
		s.ExpectString("NameError")
		return got
	}
	want := run(pythonOracle, []string{"-q", "-i"}, ">>> ")
	got := run(binary, []string{"-q"}, "py> ")
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("Ctrl-L %d: pyaichat left %+v, python3 -i %+v", i+1, got, want)
			break
		}
	}
}
