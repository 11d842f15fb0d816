package term

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pyaichat/pyaichat/repl/interp"
	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return isTerminal(int(f.Fd())) }

// Terminal is the terminal pyaichat runs on. Its input is read only while
// a prompt is up, a byte at a time (see Editor), and the mode it had at
// Open is restored on every way out.
type Terminal struct {
	in    *os.File // the terminal, for a program the editor runs on it
	fd    int
	out   io.Writer
	echo  *echoWriter // out, for keys echoed ahead of the editor
	tty   *ttyReader
	saved *unix.Termios

	graphicsOnce sync.Once
	graphics     interp.Graphics // what Graphics found
}

// Open takes the terminal whose input is in and whose output is out.
func Open(in *os.File, out io.Writer) (*Terminal, error) {
	fd := int(in.Fd())
	saved, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, fmt.Errorf("reading the terminal's mode: %w", err)
	}
	tty, err := newTTYReader(in)
	if err != nil {
		return nil, err
	}
	return &Terminal{in: in, fd: fd, out: out, echo: newEchoWriter(out), tty: tty, saved: saved}, nil
}

// Restore puts the terminal back in the mode it had at Open, with
// bracketed paste off: for normal exit, SystemExit, abandoning the session
// or a Go panic while the line editor had it raw.
func (t *Terminal) Restore() {
	io.WriteString(t.out, bracketedPasteOff)
	_ = unix.IoctlSetTermios(t.fd, ioctlSetTermios, t.saved)
}

// ReadLine reads one line in the terminal's cooked mode, where the kernel
// edits it (TERM=dumb, where no line editor can run): the line with its
// newline, io.EOF for Ctrl-D on an empty line, or ErrInterrupted.
func (t *Terminal) ReadLine() (string, error) {
	line, err := t.tty.readLine()
	if errors.Is(err, errWoken) {
		return "", ErrInterrupted
	}
	return line, err
}

// errWoken is a read's answer to wake.
var errWoken = errors.New("woken")

// ErrInterrupted is ReadLine's answer to Interrupt.
var ErrInterrupted = errors.New("interrupted")

// Interrupt stops a ReadLine under way (Ctrl-C, which came as a signal).
func (t *Terminal) Interrupt() { t.tty.wake() }

// WithoutEcho runs fn with the terminal's echo off, where keys typed
// meanwhile would be printed into fn's output (an answer streaming at ai>);
// they still reach the next prompt. Ctrl-C still interrupts.
func (t *Terminal) WithoutEcho(fn func()) { withoutEcho(t.fd, fn) }

// Width is the terminal's width in columns, -1 if it cannot be read. It
// is read from the terminal itself, not from standard output, which may
// be redirected.
func (t *Terminal) Width() int {
	ws, err := unix.IoctlGetWinsize(t.fd, unix.TIOCGWINSZ)
	if err != nil {
		return -1
	}
	return int(ws.Col)
}

// ttyReader reads the terminal in Go's network poller instead of holding a
// thread in read(2): a key then wakes the goroutine that reads it and the
// ones it feeds on one thread, where a blocking read made the scheduler
// pass them between threads (0.38 against 0.61 ms for a py> round trip).
// The poller would watch a terminal for output too, and every line that
// Python writes to it would wake Go (printing was 4 times slower than
// python3's), so the poller watches an epoll instance of our own that
// watches the terminal for input only, and an eventfd that wake writes.
type ttyReader struct {
	fd     int             // the terminal, opened again: its own O_NONBLOCK
	wakeFD int             // an eventfd: a read returns errWoken
	ep     int             // an epoll instance watching wakeFD, and fd while polled
	raw    syscall.RawConn // ep, as Go's poller knows it
	// While reads wait through an Await, fd is left out of ep (polled
	// false): otherwise each key would wake a thread asleep in the poller
	// as well.
	polled atomic.Bool
	// unreadKeys are keys read before the reader needed them (typed while
	// the terminal was asked a question: see Terminal.Graphics), given
	// out before anything the terminal has.
	unreadMu   sync.Mutex
	unreadKeys []byte
	// behind says the last read through an Await found more input
	// behind the key it read (ReadAhead.Behind).
	behind bool
}

// typedAhead says whether the key just read had more behind it when it
// came through an Await, and forgets it.
func (t *ttyReader) typedAhead() bool {
	b := t.behind
	t.behind = false
	return b
}

// unread keeps keys for the reads to come.
func (t *ttyReader) unread(keys []byte) {
	if len(keys) == 0 {
		return
	}
	t.unreadMu.Lock()
	t.unreadKeys = append(t.unreadKeys, keys...)
	t.unreadMu.Unlock()
}

// dropUnread drops the keys kept by unread (a Ctrl-C came after them).
func (t *ttyReader) dropUnread() {
	t.unreadMu.Lock()
	t.unreadKeys = nil
	t.unreadMu.Unlock()
}

// takeUnread fills b from the keys kept by unread: how many.
func (t *ttyReader) takeUnread(b []byte) int {
	t.unreadMu.Lock()
	defer t.unreadMu.Unlock()
	n := copy(b, t.unreadKeys)
	t.unreadKeys = t.unreadKeys[n:]
	return n
}

// Await waits until one of fds (the terminal and the reader's wake-up) is
// readable, on the calling thread, in place of Go's poller, which wakes a
// goroutine that waits there from another thread. It reports false at
// once where it cannot wait on the calling thread, and the wait goes to
// the poller. (The REPL's prompt runs on the interpreter's thread, where
// pybridge's wait also runs the interpreter's other jobs: see
// Editor.StartLine.) With ahead set, it reads the terminal as soon as that
// is readable, and may echo the key it read.
type Await func(fds []int, ahead *interp.ReadAhead) (bool, error)

// echoArm lets a wait through an Await echo the key it reads: called once
// the line is drawn, just before the wait, it says what to write before a
// printable key and where (see Editor.armEcho).
type echoArm func() (before []byte, fd int, ok bool)

// newTTYReader reads the terminal behind f.
func newTTYReader(f *os.File) (*ttyReader, error) {
	// Fd would switch f to blocking mode; f is blocking already.
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the terminal: %w", err)
	}
	t := &ttyReader{fd: fd, wakeFD: -1, ep: -1}
	if err := t.init(); err != nil {
		t.close()
		return nil, fmt.Errorf("watching the terminal: %w", err)
	}
	return t, nil
}

func (t *ttyReader) close() {
	for _, fd := range []int{t.fd, t.wakeFD, t.ep} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// wake makes a read waiting now, or the next one, return errWoken.
func (t *ttyReader) wake() {
	var one [8]byte
	one[0] = 1
	unix.Write(t.wakeFD, one[:])
}

// woken takes a pending wake-up.
func (t *ttyReader) woken() bool {
	var n [8]byte
	_, err := rawRead(t.wakeFD, n[:])
	return err == nil
}

// readyByte returns a byte if one can be read at once.
func (t *ttyReader) readyByte() (byte, bool) {
	var b [1]byte
	if t.takeUnread(b[:]) == 1 {
		return b[0], true
	}
	n, err := rawRead(t.fd, b[:])
	return b[0], err == nil && n == 1
}

// readByteAwaiting waits for a byte, calling idle first if it has to wait,
// through await, if set, which may echo the byte as arm says: echoed is
// how many bytes it wrote. It returns errWoken, having read nothing, when
// wake was called. A read that finds the terminal hung up or taken away
// (EIO, or nothing in raw mode) is tried again, as the terminal may be
// back (see waitForTerminal).
func (t *ttyReader) readByteAwaiting(idle func(), await Await, arm echoArm) (b byte, echoed int, err error) {
	var buf [1]byte
	for failures := 0; ; {
		n, echoed, err := t.read(buf[:], idle, await, arm)
		if err == nil && n == 1 {
			return buf[0], echoed, nil
		}
		if errors.Is(err, errWoken) {
			return 0, 0, err
		}
		if err != nil && !errors.Is(err, unix.EIO) {
			return 0, 0, err
		}
		if failures++; !t.waitForTerminal(failures) {
			if err == nil {
				err = io.EOF
			}
			return 0, 0, fmt.Errorf("the terminal is gone: %w", err)
		}
	}
}

// readLine reads one line as the terminal's cooked mode gives it (a read
// returns at most one line), up to and including its newline; io.EOF for
// Ctrl-D on an empty line.
func (t *ttyReader) readLine() (string, error) {
	var line []byte
	buf := make([]byte, 4096)
	for {
		n, _, err := t.read(buf, nil, nil, nil)
		if err != nil {
			return string(line), err
		}
		if n == 0 {
			if len(line) == 0 {
				return "", io.EOF
			}
			return string(line), nil // Ctrl-D after text ends the line
		}
		line = append(line, buf[:n]...)
		if line[len(line)-1] == '\n' {
			return string(line), nil
		}
	}
}

// read is one read(2) of the terminal, waiting (after calling idle, if
// set) until there is input or wake is called: through await, if set and
// it can wait on this thread, otherwise in Go's poller. A read that await
// made may have echoed the key it read, as arm said (echoed bytes).
func (t *ttyReader) read(b []byte, idle func(), await Await, arm echoArm) (n, echoed int, err error) {
	for {
		if t.woken() {
			return 0, 0, errWoken
		}
		if n := t.takeUnread(b); n > 0 {
			return n, 0, nil
		}
		n, err := rawRead(t.fd, b)
		if err != unix.EAGAIN {
			return n, 0, err
		}
		if idle != nil {
			idle()
			idle = nil
		}
		if await != nil {
			if err := t.poll(false); err != nil {
				return 0, 0, err
			}
			ahead := interp.ReadAhead{FD: t.fd, Buf: b, EchoFD: -1}
			if arm != nil {
				if before, fd, ok := arm(); ok {
					ahead.Echo, ahead.EchoFD = before, fd
				}
			}
			waited, err := await([]int{t.fd, t.wakeFD}, &ahead)
			if err != nil {
				return 0, 0, err
			}
			if ahead.N > 0 {
				t.behind = ahead.Behind
				return ahead.N, ahead.Echoed, nil
			}
			if waited {
				continue
			}
			await = nil // not on a thread it waits on: the poller, from now on
		}
		if err := t.waitPolled(); err != nil {
			return 0, 0, err
		}
	}
}

// waitPolled waits in Go's poller until ep may have input or a wake-up.
func (t *ttyReader) waitPolled() error {
	if err := t.poll(true); err != nil {
		return err
	}
	parked := false
	return t.raw.Read(func(uintptr) bool {
		if parked {
			return true // the poller saw ep ready
		}
		parked = true
		// Take what the epoll instance had ready, so that the next input
		// makes it ready again; if input came meanwhile, read it.
		return rawPoll(t.ep)
	})
}

// waitForTerminal decides whether to read again after the terminal said
// EIO or end of input at a prompt, where the line editor keeps it in raw
// mode and no key makes a read return nothing. A child that took the
// terminal's foreground (a shell, an editor) and ended without giving it
// back leaves pyaichat in the background, where reads fail: pyaichat takes
// the foreground back (reclaimForeground). Otherwise the failures are let
// pass for a while; a terminal that is really gone also ends pyaichat
// with SIGHUP, unless it ignores that (nohup).
func (t *ttyReader) waitForTerminal(failures int) bool {
	if failures > 20 {
		return false
	}
	if !reclaimForeground(t.fd) {
		time.Sleep(time.Duration(failures) * 10 * time.Millisecond)
	}
	return true
}

// reclaimForeground makes pyaichat's process group the terminal's
// foreground one again when the group that has it no longer exists (a
// child took it and ended), as a shell does for its jobs; it reports
// whether it did. A foreground group that exists (the shell, after the
// user put pyaichat in the background) keeps it. SIGTTOU, which the
// kernel sends a background process that sets the foreground, is blocked
// meanwhile.
func reclaimForeground(fd int) bool {
	fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	// Ours, as it is at every prompt unless a child took the terminal:
	// the group pyaichat started in (no system call) or, should user code
	// have moved pyaichat to another, that one.
	if err != nil || fg == startGroup || fg == unix.Getpgrp() || unix.Kill(-fg, 0) != unix.ESRCH {
		return false
	}
	withSIGTTOUBlocked(func() { err = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, unix.Getpgrp()) })
	return err == nil
}

// startGroup is the process group pyaichat started in.
var startGroup = unix.Getpgrp()

func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	return err == nil
}

// rawMode switches the terminal between raw (line editor) and the cooked
// mode it had at start (code running). Entering twice is harmless. The
// editor goes raw before the prompt shows: a key typed as soon as it shows
// must arrive as a key (Ctrl-D as byte 4), not be interpreted by the
// kernel's cooked line discipline.
type rawMode struct {
	fd    int
	mu    sync.Mutex
	saved *unix.Termios
}

func (m *rawMode) enter() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saved != nil {
		return nil
	}
	t, err := unix.IoctlGetTermios(m.fd, ioctlGetTermios)
	if err != nil {
		return err
	}
	saved := *t
	// cfmakeraw(3), but keeping output processing so "\n" still returns
	// the carriage, as GNU readline's terminal mode does.
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(m.fd, ioctlSetTermios, t); err != nil {
		return err
	}
	m.saved = &saved
	return nil
}

func (m *rawMode) exit() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saved == nil {
		return nil
	}
	err := unix.IoctlSetTermios(m.fd, ioctlSetTermios, m.saved)
	m.saved = nil
	return err
}

// withoutEcho runs fn with the terminal's echo off, where keys typed
// meanwhile would be printed into fn's output (an answer streaming at ai>);
// they still reach the next prompt. Ctrl-C still interrupts.
func withoutEcho(fd int, fn func()) {
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil || t.Lflag&unix.ECHO == 0 {
		fn()
		return
	}
	quiet := *t
	quiet.Lflag &^= unix.ECHO
	if unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet) != nil {
		fn()
		return
	}
	defer unix.IoctlSetTermios(fd, ioctlSetTermios, t)
	fn()
}
