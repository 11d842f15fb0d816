//go:build cgo

package pybridge

// #include <errno.h>
// #include "await.h"
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/pyaichat/pyaichat/repl/interp"
	"golang.org/x/sys/unix"
)

// jobLine carries jobs to the interpreter's thread and says when each is
// done. Both directions go through pipes rather than Go channels. A channel
// hand-off to a locked goroutine is a futex wake of that one thread plus a
// transfer of the Go processor, and the kernel puts the woken thread on
// whichever CPU is idle: on a VM that cost 70 to 120 us a round trip, most
// of a py> line. A pipe write is a synchronous wake-up, which runs the
// reader on the writer's CPU as the writer blocks: about 15 us.
//
// The interpreter's thread waits in read(2) on the wake pipe, runs every
// queued job when a byte comes, and writes a byte to the caller's own pipe
// after each job. A caller waits in read(2) on that pipe.
type jobLine struct {
	wakeR, wakeW int // the interpreter's thread reads wakeR

	// signalled, if set, runs on the interpreter's thread when a signal
	// interrupts its wait: Python's handlers run then (pyb_idle_signals).
	signalled func()

	mu      sync.Mutex
	queue   []job
	closed  bool
	waiters []*waiter // idle ones, for reuse
}

// A job runs on the interpreter's thread. Every job may run user code and
// so discards the ready copy of the session, unless it is marked keep:
// isolated calls and helpers that change nothing (CallReadOnly).
type job struct {
	fn   func()
	keep bool
	done *waiter // nil: nobody waits (Close waits its own way)
}

// waiter is a caller's pipe: the interpreter's thread writes one byte when
// the job is done.
type waiter struct {
	r, w   int
	cancel int // an eventfd, readable once the caller's context ended (waitDoneContext)
	// seq is stored after the job and loaded after the byte is read: the
	// race detector does not see a pipe as synchronisation, but it does an
	// atomic, so what the job wrote happens before what the caller reads.
	seq atomic.Uint64
}

func newJobLine() (*jobLine, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("pybridge: job pipe: %w", err)
	}
	// A full pipe needs no more bytes: the thread runs every queued job on
	// each wake-up, so a byte that could not be written is not missed.
	if err := unix.SetNonblock(p[1], true); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, fmt.Errorf("pybridge: job pipe: %w", err)
	}
	return &jobLine{wakeR: p[0], wakeW: p[1]}, nil
}

// submit queues j and wakes the interpreter's thread. With last set, no
// job may follow j.
func (l *jobLine) submit(j job, last bool) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.queue = append(l.queue, j)
	l.closed = last
	l.mu.Unlock()
	l.poke()
	return nil
}

// poke wakes the interpreter's thread without a job (PrepareIsolated).
func (l *jobLine) poke() {
	for {
		_, err := unix.Write(l.wakeW, []byte{1})
		if err != unix.EINTR {
			return // EAGAIN: the pipe is full of wake-ups already
		}
	}
}

// take returns the queued jobs, oldest first.
func (l *jobLine) take() []job {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.queue
	l.queue = nil
	return q
}

// wait blocks the interpreter's thread until a wake-up, until one of the
// inputs (descriptors, at most maxInputs) is readable, or until timeout
// passes (timeout < 0: no limit). It reports whether a wake-up came and
// whether an input is readable; with ahead set, ahead.FD, if readable,
// has been read already (see ReadAhead).
func (l *jobLine) wait(timeout time.Duration, inputs []int, ahead *interp.ReadAhead) (woken, readable bool, err error) {
	if timeout >= 0 || len(inputs) > 0 {
		found, err := l.poll(timeout, inputs, ahead)
		if err != nil {
			return false, false, fmt.Errorf("pybridge: waiting for jobs: %w", err)
		}
		readable = found&C.PYB_AWAIT_INPUT != 0
		if found&C.PYB_AWAIT_WOKEN == 0 {
			return false, readable, nil
		}
	}
	var buf [64]byte // several wake-ups are one
	for {
		_, err := unix.Read(l.wakeR, buf[:])
		if err != unix.EINTR {
			return err == nil, readable, nil
		}
		l.interrupted()
	}
}

// maxInputs is the most inputs a wait watches beside the wake-up pipe.
const maxInputs = C.PYB_AWAIT_INPUTS

// poll is pyb_await (await.c) on the wake-up pipe and inputs, with ahead's
// read and echo if set: the PYB_AWAIT bits found.
func (l *jobLine) poll(timeout time.Duration, inputs []int, ahead *interp.ReadAhead) (C.int, error) {
	if len(inputs) > maxInputs {
		return 0, fmt.Errorf("%d inputs, more than %d", len(inputs), maxInputs)
	}
	var fds [maxInputs]C.int
	for i, fd := range inputs {
		fds[i] = C.int(fd)
	}
	ms := -1
	if timeout >= 0 {
		ms = int(timeout / time.Millisecond)
	}
	readFD, echoFD := C.int(-1), C.int(-1)
	var buf, echo *C.char
	var bufLen, echoLen C.int
	if ahead != nil && len(ahead.Buf) > 0 {
		readFD, echoFD = C.int(ahead.FD), C.int(ahead.EchoFD)
		buf, bufLen = (*C.char)(unsafe.Pointer(&ahead.Buf[0])), C.int(len(ahead.Buf))
		if len(ahead.Echo) > 0 {
			echo, echoLen = (*C.char)(unsafe.Pointer(&ahead.Echo[0])), C.int(len(ahead.Echo))
		}
	}
	var out [3]C.int
	for {
		found := C.pyb_await(C.int(l.wakeR), &fds[0], C.int(len(inputs)), C.int(ms), readFD, buf, bufLen, echo, echoLen, echoFD, &out[0])
		if found == -C.EINTR {
			l.interrupted() // a fresh timeout is near enough
			continue
		}
		if found < 0 {
			return 0, syscall.Errno(-found)
		}
		if ahead != nil {
			ahead.N, ahead.Echoed, ahead.Behind = int(out[0]), int(out[1]), out[2] != 0
		}
		return found, nil
	}
}

// interrupted is a signal that ended the thread's wait: python3's prompt
// runs Python's handlers when a signal interrupts its read, and so does
// this wait.
func (l *jobLine) interrupted() {
	if l.signalled != nil {
		l.signalled()
	}
}

// run runs j on the interpreter's thread and tells its caller.
func (j job) run() {
	j.fn()
	if j.done != nil {
		j.done.seq.Add(1)
		for {
			_, err := unix.Write(j.done.w, []byte{1})
			if err != unix.EINTR {
				break
			}
		}
	}
}

// getWaiter returns an idle waiter, making one if none is free.
func (l *jobLine) getWaiter() (*waiter, error) {
	l.mu.Lock()
	if n := len(l.waiters); n > 0 {
		w := l.waiters[n-1]
		l.waiters = l.waiters[:n-1]
		l.mu.Unlock()
		return w, nil
	}
	l.mu.Unlock()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("pybridge: job pipe: %w", err)
	}
	cancel, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, fmt.Errorf("pybridge: job pipe: %w", err)
	}
	return &waiter{r: p[0], w: p[1], cancel: cancel}, nil
}

func (l *jobLine) putWaiter(w *waiter) {
	l.mu.Lock()
	l.waiters = append(l.waiters, w)
	l.mu.Unlock()
}

// waitDoneContext waits for the job that carries w. When ctx ends, w's
// cancel descriptor (an eventfd, the job's view of ctx) polls readable;
// with giveUp set the wait ends then too, and a goroutine waits for the
// job and puts w back in the pool. Without a ctx that can end, it is
// waitDone itself: one blocking read, the fastest way back from the
// interpreter's thread.
func (l *jobLine) waitDoneContext(ctx context.Context, w *waiter, giveUp bool) error {
	if ctx.Done() == nil {
		return l.collect(w, nil)
	}
	// w's eventfd, rather than a new pipe, to spare the two system calls
	// of one on the capabilities' every call.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		unix.Write(w.cancel, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		close(fired)
	})
	// Once the job is done: clear the eventfd for w's next job.
	disarm := func() {
		if !stop() {
			<-fired
			var b [8]byte
			unix.Read(w.cancel, b[:])
		}
	}
	if !giveUp {
		return l.collect(w, disarm)
	}
	fds := []unix.PollFd{{Fd: int32(w.r), Events: unix.POLLIN}, {Fd: int32(w.cancel), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			stop()
			return fmt.Errorf("pybridge: waiting for the interpreter: %w", err)
		case fds[0].Revents != 0:
			return l.collect(w, disarm)
		case fds[1].Revents != 0:
			go l.collect(w, disarm)
			return ctx.Err()
		}
	}
}

// collect waits for the job that carries w, disarms its context (disarm,
// if not nil) and puts w back in the pool; after an error w is left
// alone, its pipe in an unknown state.
func (l *jobLine) collect(w *waiter, disarm func()) error {
	err := w.waitDone()
	if disarm != nil {
		disarm()
	}
	if err != nil {
		return err
	}
	l.putWaiter(w)
	return nil
}

// waitDone blocks until the interpreter's thread has run the job that
// carries w.
func (w *waiter) waitDone() error {
	var b [1]byte
	for {
		n, err := unix.Read(w.r, b[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n != 1 {
			return errors.Join(errors.New("pybridge: lost the interpreter's answer"), err)
		}
		w.seq.Load()
		return nil
	}
}
