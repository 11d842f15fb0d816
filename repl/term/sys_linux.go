//go:build linux

package term

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Linux's terminal ioctls; the BSDs and macOS name them TIOCGETA and so on
// (sys_bsd.go).
const (
	ioctlGetTermios      = unix.TCGETS
	ioctlSetTermios      = unix.TCSETS
	ioctlSetTermiosFlush = unix.TCSETSF
	ioctlInputQueued     = unix.TIOCINQ // bytes waiting to be read (the tests')
)

// signalThisThread sends sig to the calling thread, which takes it before
// the call returns (a signal to the process may be taken by any thread).
func signalThisThread(sig unix.Signal) {
	unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
}

// withSIGTTOUBlocked runs fn with SIGTTOU blocked on its thread, so that a
// background process may set the terminal's foreground group.
func withSIGTTOUBlocked(fn func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	set.Val[0] = 1 << (uint(unix.SIGTTOU) - 1)
	unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old)
	fn()
	unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
}

func (t *ttyReader) init() error {
	var err error
	if t.wakeFD, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return err
	}
	if t.ep, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return err
	}
	for _, fd := range []int{t.fd, t.wakeFD} {
		if err := unix.EpollCtl(t.ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			return err
		}
	}
	t.polled.Store(true)
	if err := unix.SetNonblock(t.ep, true); err != nil {
		return err
	}
	t.raw, err = os.NewFile(uintptr(t.ep), "terminal input").SyscallConn()
	return err
}

// poll puts the terminal in ep, or takes it out, for a wait in Go's poller
// or through await.
func (t *ttyReader) poll(on bool) error {
	if t.polled.Load() == on {
		return nil
	}
	op := unix.EPOLL_CTL_DEL
	if on {
		op = unix.EPOLL_CTL_ADD
	}
	if err := unix.EpollCtl(t.ep, op, t.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(t.fd)}); err != nil {
		return fmt.Errorf("watching the terminal: %w", err)
	}
	t.polled.Store(on)
	return nil
}

// rawPoll reports whether the epoll instance ep has an event ready,
// without waiting.
func rawPoll(ep int) bool {
	var ev [2]unix.EpollEvent
	n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&ev[0])), uintptr(len(ev)), 0, 0, 0)
	return errno == 0 && n > 0
}
