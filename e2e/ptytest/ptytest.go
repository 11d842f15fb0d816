// Package ptytest runs a program on a pseudo-terminal for end-to-end tests:
// a go-expect console over a creack/pty pair, a vt10x screen fed with
// everything the program writes, and expectations that always have a
// deadline and always fail on the test goroutine (go-expect's own
// ExpectString waits forever without a timeout: go-expect issue 17).
//
// Every expectation reads the program's output on the calling goroutine, so
// nothing here calls t.Fatal from another goroutine, and a failure shows the
// rendered screen and the tail of the raw output.
package ptytest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	expect "github.com/Netflix/go-expect"
	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
	"github.com/pyaichat/pyaichat/termwidth"
	"golang.org/x/sys/unix"
)

// DefaultTimeout bounds every expectation that does not say otherwise.
const DefaultTimeout = 10 * time.Second

// Options configure Start.
type Options struct {
	Args    []string      // arguments after the program
	Env     []string      // the whole environment (nil: empty)
	Dir     string        // working directory
	Rows    int           // window size; default 30x100
	Cols    int           //
	Timeout time.Duration // default timeout of expectations; default DefaultTimeout
	// Answers are what the terminal answers to queries the emulator
	// (vt10x) does not: when the program writes a key, its value is
	// written to the program's input (a terminal that draws images says
	// so this way).
	Answers map[string]string
}

// Proc is one program running on a PTY.
type Proc struct {
	t       testing.TB
	console *expect.Console
	term    vt10x.Terminal
	cmd     *exec.Cmd
	raw     bytes.Buffer // everything the program wrote
	mark    int          // raw offset after the last match
	timeout time.Duration

	done    chan struct{} // closed when the program has exited
	waitErr error

	termiosBefore *unix.Termios
}

// responder forwards the terminal emulator's answers (cursor position
// reports) to the program's input once the console exists.
type responder struct{ c *expect.Console }

// answerer writes Options.Answers: before the emulator sees the output,
// so that they come before the emulator's own answers (a cursor position
// report), in the order a terminal sends them.
type answerer struct {
	answers map[string]string
	resp    *responder
	tail    []byte // output not yet searched through in full
}

func (a *answerer) Write(p []byte) (int, error) {
	if len(a.answers) == 0 {
		return len(p), nil
	}
	a.tail = append(a.tail, p...)
	longest := 0
	for {
		first, query := -1, ""
		for q := range a.answers {
			longest = max(longest, len(q))
			if i := bytes.Index(a.tail, []byte(q)); i >= 0 && (first < 0 || i < first) {
				first, query = i, q
			}
		}
		if first < 0 {
			break
		}
		a.resp.Write([]byte(a.answers[query]))
		a.tail = a.tail[first+len(query):]
	}
	if len(a.tail) > longest {
		a.tail = append([]byte(nil), a.tail[len(a.tail)-longest:]...)
	}
	return len(p), nil
}

func (r *responder) Write(p []byte) (int, error) {
	if r.c == nil {
		return len(p), nil
	}
	return r.c.Write(p)
}

// Start runs program on a new PTY (its controlling terminal, in a new
// session, so Ctrl-C typed in cooked mode is SIGINT to it). The program is
// killed and the PTY closed when the test ends.
func Start(t testing.TB, program string, o Options) *Proc {
	t.Helper()
	if o.Rows == 0 {
		o.Rows, o.Cols = 30, 100
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	s := &Proc{t: t, timeout: o.Timeout, done: make(chan struct{})}
	resp := &responder{}
	s.term = vt10x.New(vt10x.WithSize(o.Cols, o.Rows), vt10x.WithWriter(resp))
	c, err := expect.NewConsole(expect.WithStdout(&answerer{answers: o.Answers, resp: resp}, &wideScreen{term: s.term}, &s.raw))
	if err != nil {
		t.Fatalf("ptytest: opening a PTY: %v", err)
	}
	resp.c = c
	s.console = c
	if err := pty.Setsize(c.Tty(), &pty.Winsize{Rows: uint16(o.Rows), Cols: uint16(o.Cols)}); err != nil {
		c.Close()
		t.Fatalf("ptytest: setting the window size: %v", err)
	}
	s.termiosBefore, err = unix.IoctlGetTermios(int(c.Tty().Fd()), unix.TCGETS)
	if err != nil {
		c.Close()
		t.Fatalf("ptytest: reading termios: %v", err)
	}
	cmd := exec.Command(program, o.Args...)
	cmd.Env = o.Env
	cmd.Dir = o.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Tty(), c.Tty(), c.Tty()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		c.Close()
		t.Fatalf("ptytest: starting %s: %v", program, err)
	}
	s.cmd = cmd
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(s.cleanup)
	return s
}

func (s *Proc) cleanup() {
	select {
	case <-s.done:
	default:
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		_ = s.cmd.Process.Kill()
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
		}
	}
	s.console.Close()
}

// Pid is the program's process id.
func (s *Proc) Pid() int { return s.cmd.Process.Pid }

// Send writes text to the terminal as if typed (or pasted) at once.
func (s *Proc) Send(text string) {
	s.t.Helper()
	if _, err := s.console.Send(text); err != nil {
		s.fail("sending %q: %v", text, err)
	}
}

// Type sends text a byte at a time, gap apart, as a person types.
func (s *Proc) Type(text string, gap time.Duration) {
	s.t.Helper()
	for i := 0; i < len(text); i++ {
		s.Send(text[i : i+1])
		time.Sleep(gap)
	}
}

// SendLine types text and Enter (a carriage return, as a terminal sends).
func (s *Proc) SendLine(text string) { s.t.Helper(); s.Send(text + "\r") }

// Paste sends text as a bracketed paste (ESC[200~ text ESC[201~).
func (s *Proc) Paste(text string) { s.t.Helper(); s.Send("\x1b[200~" + text + "\x1b[201~") }

// Keys worth naming.
const (
	CtrlC = "\x03"
	CtrlD = "\x04"
	Tab   = "\t"
	Enter = "\r"
	Up    = "\x1b[A"
	Down  = "\x1b[B"
	Left  = "\x1b[D"
)

// matcher adapts a condition on the session to go-expect's Matcher.
type matcher struct {
	s      *Proc
	check  func() bool
	ok     bool
	runes  int
	screen bool // the condition looks at the screen: test it less often
}

func (m *matcher) Match(v interface{}) bool {
	if _, isBuf := v.(*bytes.Buffer); !isBuf {
		return false // an error (a read timeout): the caller decides
	}
	m.runes++
	if m.screen {
		// Rendering the screen for every rune of a long output is slow;
		// test at ends of words and lines, every 512 runes, and on silence.
		b := lastByte(&m.s.raw)
		if b != ' ' && b != '\n' && b != '\r' && m.runes%512 != 0 {
			return false
		}
	}
	m.ok = m.check()
	return m.ok
}

func lastByte(b *bytes.Buffer) byte {
	if b.Len() == 0 {
		return 0
	}
	return b.Bytes()[b.Len()-1]
}

func (m *matcher) Criteria() interface{} { return "ptytest condition" }

// wait reads output until check is true, the deadline passes or the
// program exits (then it drains what is left and checks once more).
func (s *Proc) wait(what string, timeout time.Duration, screen bool, check func() bool) {
	s.t.Helper()
	if check() {
		return
	}
	m := &matcher{s: s, check: check, screen: screen}
	opt := func(o *expect.ExpectOpts) error { o.Matchers = append(o.Matchers, m); return nil }
	deadline := time.Now().Add(timeout)
	exited := false
	for {
		_, err := s.console.Expect(opt, expect.WithTimeout(20*time.Millisecond))
		if m.ok || check() {
			return
		}
		if err != nil && !os.IsTimeout(err) {
			s.fail("waiting for %s: reading the PTY: %v", what, err)
		}
		if exited {
			s.fail("waiting for %s: the program exited (%v)", what, s.waitErr)
		}
		select {
		case <-s.done:
			exited = true // one more round to drain the output
			continue
		default:
		}
		if time.Now().After(deadline) {
			s.fail("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// ExpectString waits for text in the output after the previous match and
// moves past it. It returns the output between the previous match and text.
func (s *Proc) ExpectString(text string) string {
	s.t.Helper()
	return s.ExpectStringTimeout(text, s.timeout)
}

// ExpectStringTimeout is ExpectString with its own deadline.
func (s *Proc) ExpectStringTimeout(text string, timeout time.Duration) string {
	s.t.Helper()
	var before string
	checked := s.mark
	s.wait(fmt.Sprintf("%q", text), timeout, false, func() bool {
		out := s.raw.Bytes()
		from := max(s.mark, checked-len(text))
		if i := bytes.Index(out[from:], []byte(text)); i >= 0 {
			before = string(out[s.mark : from+i])
			s.mark = from + i + len(text)
			return true
		}
		checked = len(out)
		return false
	})
	return before
}

// ExpectRegexp waits for re to match the output after the previous match and
// moves past the match; it returns the submatches.
func (s *Proc) ExpectRegexp(re *regexp.Regexp) []string {
	s.t.Helper()
	var sub []string
	s.wait(re.String(), s.timeout, true, func() bool {
		out := s.raw.Bytes()[s.mark:]
		loc := re.FindSubmatchIndex(out)
		if loc == nil {
			return false
		}
		for i := 0; i+1 < len(loc); i += 2 {
			if loc[i] < 0 {
				sub = append(sub, "")
			} else {
				sub = append(sub, string(out[loc[i]:loc[i+1]]))
			}
		}
		s.mark += loc[1]
		return true
	})
	return sub
}

// ExpectScreen waits until the rendered screen satisfies ok; what says what
// is awaited, for the failure message.
func (s *Proc) ExpectScreen(what string, ok func(screen string) bool) {
	s.t.Helper()
	s.wait(what, s.timeout, true, func() bool { return ok(s.Screen()) })
}

// ExpectCursorLine waits until the screen line holding the cursor, trailing
// spaces removed, equals line (what a person sees on the line being typed).
func (s *Proc) ExpectCursorLine(line string) {
	s.t.Helper()
	s.wait(fmt.Sprintf("the cursor line to read %q", line), s.timeout, true, func() bool {
		return s.CursorLine() == line
	})
}

// Settle reads output until none has come for quiet (at most timeout),
// without failing: for when the next step needs the screen up to date.
func (s *Proc) Settle(quiet time.Duration) {
	deadline := time.Now().Add(s.timeout)
	for time.Now().Before(deadline) {
		before := s.raw.Len()
		_, _ = s.console.Expect(func(o *expect.ExpectOpts) error {
			o.Matchers = append(o.Matchers, &matcher{s: s, check: func() bool { return false }})
			return nil
		}, expect.WithTimeout(quiet))
		if s.raw.Len() == before {
			return
		}
	}
}

// ExpectExit drains the output until the program exits and returns its
// exit status (-1 when killed by a signal).
func (s *Proc) ExpectExit() int {
	s.t.Helper()
	s.wait("the program to exit", s.timeout, false, func() bool {
		select {
		case <-s.done:
			return true
		default:
			return false
		}
	})
	s.Settle(50 * time.Millisecond)
	var ee *exec.ExitError
	switch {
	case s.waitErr == nil:
		return 0
	case errors.As(s.waitErr, &ee):
		return ee.ExitCode()
	default:
		s.fail("waiting for the program: %v", s.waitErr)
		return -1
	}
}

// ExpectSignaled drains the output until the program exits and returns the
// signal that killed it, or 0 if it exited.
func (s *Proc) ExpectSignaled() syscall.Signal {
	s.t.Helper()
	s.ExpectExit()
	var ee *exec.ExitError
	if errors.As(s.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal()
		}
	}
	return 0
}

// Exited reports whether the program has ended.
func (s *Proc) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Output returns all the raw output so far.
func (s *Proc) Output() string { return s.raw.String() }

// Unmatched returns the raw output after the last match.
func (s *Proc) Unmatched() string { return string(s.raw.Bytes()[s.mark:]) }

// Resize changes the window's size, as a terminal emulator does: the
// screen first, then the PTY, which sends the program SIGWINCH. Output not
// yet read is drawn at the new size, so call it when the screen is up to
// date with what the program wrote (after an expectation on the screen).
func (s *Proc) Resize(rows, cols int) {
	s.t.Helper()
	s.term.Resize(cols, rows)
	if err := pty.Setsize(s.console.Tty(), &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)}); err != nil {
		s.fail("resizing the PTY: %v", err)
	}
}

// Cursor is the cursor's column and row on the screen, from 0.
func (s *Proc) Cursor() (col, row int) {
	c := s.term.Cursor()
	return c.X, c.Y
}

// Screen renders the terminal: one line per row, trailing spaces and
// trailing empty rows removed.
func (s *Proc) Screen() string {
	lines := strings.Split(screenText(s.term), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// visibleModes are vt10x's attribute bits a person sees: reverse,
// underline, bold, italic, blink (vt10x keeps them unexported; its other
// bits, such as the one marking a wrapped line, are bookkeeping).
const visibleModes = 1 | 2 | 4 | 16 | 32

// StyledText is the text on the screen drawn in a colour or with an
// attribute (bold, underline, reverse...) other than the terminal's
// default, as a person would see it stand out: its words, one screen row
// a line, rows without any left out.
func (s *Proc) StyledText() string {
	s.term.Lock()
	defer s.term.Unlock()
	cols, rows := s.term.Size()
	var lines []string
	for y := 0; y < rows; y++ {
		row := make([]rune, cols)
		for x := 0; x < cols; x++ {
			g := s.term.Cell(x, y)
			row[x] = ' '
			if g.Char != 0 && (g.Mode&visibleModes != 0 || g.FG != vt10x.DefaultFG || g.BG != vt10x.DefaultBG) {
				row[x] = g.Char
			}
		}
		if words := strings.Fields(string(row)); len(words) > 0 {
			lines = append(lines, strings.Join(words, " "))
		}
	}
	return strings.Join(lines, "\n")
}

// CursorLine is the screen row holding the cursor, trailing spaces removed.
func (s *Proc) CursorLine() string {
	y := s.term.Cursor().Y
	lines := strings.Split(screenText(s.term), "\n")
	if y < 0 || y >= len(lines) {
		return ""
	}
	return strings.TrimRight(lines[y], " ")
}

// TermiosChanges compares the PTY's terminal modes now with those before the
// program started and describes what differs ("" when nothing does).
func (s *Proc) TermiosChanges() string {
	now, err := unix.IoctlGetTermios(int(s.console.Tty().Fd()), unix.TCGETS)
	if err != nil {
		return fmt.Sprintf("cannot read termios: %v", err)
	}
	b := s.termiosBefore
	var diffs []string
	flag := func(name string, was, is uint32, bits map[string]uint32) {
		for bn, bit := range bits {
			if was&bit != is&bit {
				diffs = append(diffs, fmt.Sprintf("%s %s was %v, now %v", name, bn, was&bit != 0, is&bit != 0))
			}
		}
		if was != is && len(diffs) == 0 {
			diffs = append(diffs, fmt.Sprintf("%s was %#o, now %#o", name, was, is))
		}
	}
	flag("lflag", b.Lflag, now.Lflag, map[string]uint32{"ICANON": unix.ICANON, "ECHO": unix.ECHO, "ISIG": unix.ISIG, "IEXTEN": unix.IEXTEN, "ECHOE": unix.ECHOE, "ECHOK": unix.ECHOK})
	flag("iflag", b.Iflag, now.Iflag, map[string]uint32{"ICRNL": unix.ICRNL, "IXON": unix.IXON, "BRKINT": unix.BRKINT, "INPCK": unix.INPCK, "ISTRIP": unix.ISTRIP})
	flag("oflag", b.Oflag, now.Oflag, map[string]uint32{"OPOST": unix.OPOST, "ONLCR": unix.ONLCR})
	flag("cflag", b.Cflag, now.Cflag, map[string]uint32{"CS8": unix.CS8, "PARENB": unix.PARENB})
	if b.Cc[unix.VMIN] != now.Cc[unix.VMIN] || b.Cc[unix.VTIME] != now.Cc[unix.VTIME] {
		diffs = append(diffs, fmt.Sprintf("VMIN/VTIME was %d/%d, now %d/%d", b.Cc[unix.VMIN], b.Cc[unix.VTIME], now.Cc[unix.VMIN], now.Cc[unix.VTIME]))
	}
	return strings.Join(diffs, "; ")
}

// fail stops the test with the screen and the end of the raw output.
func (s *Proc) fail(format string, args ...interface{}) {
	s.t.Helper()
	s.t.Fatalf("%s\n%s", fmt.Sprintf(format, args...), s.Dump())
}

// Dump describes the session's state for a failure message.
func (s *Proc) Dump() string {
	raw := s.raw.Bytes()
	tail := raw
	if len(tail) > 1500 {
		tail = tail[len(tail)-1500:]
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
	}
	unmatched := raw[s.mark:]
	if len(unmatched) > 600 {
		unmatched = unmatched[len(unmatched)-600:]
	}
	state := "running"
	if s.Exited() {
		state = fmt.Sprintf("exited (%v)", s.waitErr)
	}
	return fmt.Sprintf("--- program %s; screen (%d bytes of output in all) ---\n%s\n--- end of screen; cursor at %+v ---\n--- last raw output ---\n%q\n--- raw output after the last match ---\n%q",
		state, len(raw), s.Screen(), s.term.Cursor(), tail, unmatched)
}

var _ io.Writer = (*responder)(nil)

// wideScreen feeds the terminal emulator, which gives every character one
// cell, so that a wide character (CJK, most emoji) takes two cells as it
// does on a real terminal: the character, then a filler cell that the
// screen's text leaves out. One that does not fit in the row's last cell
// goes to the next row, as in xterm.
type wideScreen struct {
	term    vt10x.Terminal
	partial []byte // an incomplete UTF-8 sequence, until the rest comes
}

// filler holds the second cell of a wide character.
const filler = '\U0010FFFD'

// wrapNext is vt10x's cursor state bit for a cursor on the last column
// waiting to wrap with the next character.
const wrapNext = 1 << 1

func (w *wideScreen) Write(p []byte) (int, error) {
	data := append(w.partial, p...)
	w.partial = nil
	start := 0 // of the bytes not written yet
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && !utf8.FullRune(data[i:]) {
			w.partial = append([]byte(nil), data[i:]...)
			data = data[:i]
			break
		}
		if r < utf8.RuneSelf || termwidth.Rune(r) != 2 {
			i += size
			continue
		}
		w.term.Write(data[start:i])
		cols, _ := w.term.Size()
		if c := w.term.Cursor(); c.X == cols-1 && c.State&wrapNext == 0 {
			w.term.Write([]byte(" "))
		}
		w.term.Write(append(data[i:i+size:i+size], string(filler)...))
		i += size
		start = i
	}
	w.term.Write(data[start:])
	return len(p), nil
}

// screenText is the emulator's text without the filler cells.
func screenText(term vt10x.Terminal) string {
	return strings.ReplaceAll(term.String(), string(filler), "")
}

// StringWidth is how many cells text takes on the terminal modelled here.
func StringWidth(text string) int {
	return termwidth.String(text)
}

// ExpectCursorAt waits until the screen line holding the cursor, trailing
// spaces removed, equals line and the cursor is in column col.
func (s *Proc) ExpectCursorAt(line string, col int) {
	s.t.Helper()
	s.wait(fmt.Sprintf("the cursor line to read %q with the cursor in column %d", line, col), s.timeout, true, func() bool {
		x, _ := s.Cursor()
		return s.CursorLine() == line && x == col
	})
}
