package term

import (
	"fmt"
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The system calls on a key's way from the terminal to its echo are made
// raw, without telling Go's scheduler, where that is safe: on descriptors
// that never block (O_NONBLOCK). A system call made the usual way wakes
// the runtime's monitor thread first whenever it sleeps, which it does at
// a prompt where nothing runs, and on this path that wake-up (a futex and
// a thread on another CPU) came before each key was even read. A raw call
// that blocked would stall every goroutine, so none here can.

// rawRead is read(2) on a non-blocking descriptor.
func rawRead(fd int, b []byte) (int, error) { return rawIO(unix.SYS_READ, fd, b) }

// rawWrite is write(2) on a non-blocking descriptor.
func rawWrite(fd int, b []byte) (int, error) { return rawIO(unix.SYS_WRITE, fd, b) }

// rawIO is the system call trap (read or write) on fd and b.
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// echoWriter writes key echoes to the terminal through a descriptor of its
// own, opened again with O_NONBLOCK (its own open file, so the terminal
// descriptor Python writes to stays blocking), with raw system calls. A
// terminal that cannot take the bytes at once (its output stopped with
// Ctrl-S) gets them the usual, blocking way.
type echoWriter struct {
	fd  int // -1: none could be opened; every write goes to dst
	dst io.Writer
}

// newEchoWriter opens the terminal behind out again, if out is one.
func newEchoWriter(out io.Writer) *echoWriter {
	w := &echoWriter{fd: -1, dst: out}
	f, ok := out.(*os.File)
	if !ok || !isTerminal(int(f.Fd())) {
		return w
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err == nil {
		w.fd = fd
	}
	return w
}

// Write writes b, as much as the terminal takes at once raw and the rest
// through dst.
func (w *echoWriter) Write(b []byte) (int, error) {
	done := 0
	if w.fd >= 0 {
		for done < len(b) {
			n, err := rawWrite(w.fd, b[done:])
			if err == unix.EINTR {
				continue
			}
			if err != nil || n == 0 {
				break
			}
			done += n
		}
	}
	if done == len(b) {
		return done, nil
	}
	n, err := w.dst.Write(b[done:])
	return done + n, err
}
