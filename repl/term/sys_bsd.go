//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package term

import (
	"errors"
	"os/signal"

	"golang.org/x/sys/unix"
)

// The BSD and macOS names of the terminal ioctls.
const (
	ioctlGetTermios      = unix.TIOCGETA
	ioctlSetTermios      = unix.TIOCSETA
	ioctlSetTermiosFlush = unix.TIOCSETAF
	ioctlInputQueued     = 0x4004667f // FIONREAD, _IOR('f', 127, int), which x/sys/unix does not name here
)

// errNoPoller is what the terminal reader says where it has not been
// ported: it waits on an epoll instance and an eventfd, which a port
// replaces with a kqueue and a pipe (docs/porting.md).
var errNoPoller = errors.New("the terminal reader needs epoll and eventfd, which this system lacks (see docs/porting.md)")

func (t *ttyReader) init() error { return errNoPoller }

func (t *ttyReader) poll(bool) error { return errNoPoller }

func rawPoll(int) bool { return false }

// signalThisThread sends sig to the process: without cgo there is no
// pthread_kill here, so another thread may take it.
func signalThisThread(sig unix.Signal) { unix.Kill(unix.Getpid(), sig) }

// withSIGTTOUBlocked runs fn with SIGTTOU ignored, as near as Go comes to
// blocking it here.
func withSIGTTOUBlocked(fn func()) {
	signal.Ignore(unix.SIGTTOU)
	defer signal.Reset(unix.SIGTTOU)
	fn()
}
