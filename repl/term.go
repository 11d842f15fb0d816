package repl

import (
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return isTerminal(int(f.Fd())) }

// pollable opens the terminal behind f again, non-blocking, so that reads
// wait in Go's network poller instead of holding a thread in read(2): a
// key then wakes the goroutine that reads it and the ones it feeds on one
// thread, where a blocking read made the scheduler pass them between
// threads (a tenth of a py> round trip). The new descriptor has its own
// O_NONBLOCK, leaving the shell's stdin as it was. f itself is the
// fallback.
func pollable(f *os.File) io.Reader {
	// Fd would switch f to blocking mode; f is blocking already.
	g, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return f
	}
	return g
}

func isTerminal(fd int) bool {
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}

// termState is the terminal's mode at start, restored on every way out:
// normal exit, SystemExit, abandoning the session, or a Go panic while the
// line editor had the terminal raw.
type termState struct {
	fd    int
	saved *unix.Termios
}

func saveTerm(fd int) *termState {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return &termState{fd: -1}
	}
	return &termState{fd: fd, saved: t}
}

func (t *termState) restore() {
	if t == nil || t.saved == nil {
		return
	}
	_ = unix.IoctlSetTermios(t.fd, unix.TCSETS, t.saved)
}

// rawMode switches the terminal between raw (line editor) and the cooked
// mode it had at start (code running). Entering twice is harmless, unlike
// readline's own, so the REPL can go raw before readline draws the prompt:
// a key typed as soon as the prompt shows must arrive as a key (Ctrl-D as
// byte 4), not be interpreted by the kernel's cooked line discipline.
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
	t, err := unix.IoctlGetTermios(m.fd, unix.TCGETS)
	if err != nil {
		return err
	}
	saved := *t
	// cfmakeraw(3), but keeping output processing so "\n" still returns
	// the carriage, as readline does.
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(m.fd, unix.TCSETS, t); err != nil {
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
	err := unix.IoctlSetTermios(m.fd, unix.TCSETS, m.saved)
	m.saved = nil
	return err
}

// withoutEcho runs fn with the terminal's echo off, where keys typed
// meanwhile would be printed into fn's output (an answer streaming at ai>);
// they still reach the next prompt. Ctrl-C still interrupts.
func withoutEcho(fd int, fn func()) {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil || t.Lflag&unix.ECHO == 0 {
		fn()
		return
	}
	quiet := *t
	quiet.Lflag &^= unix.ECHO
	if unix.IoctlSetTermios(fd, unix.TCSETS, &quiet) != nil {
		fn()
		return
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, t)
	fn()
}
