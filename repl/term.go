package repl

import (
	"golang.org/x/sys/unix"
)

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
