//go:build cgo

package pybridge

// #include "bridge.h"
import "C"

import (
	"time"

	"github.com/pyaichat/pyaichat/repl/interp"
	"golang.org/x/sys/unix"
)

// Host runs fn on the interpreter's thread and waits for it, for a caller
// whose work is mostly Python's: the REPL, which there reads a line, runs
// it and draws the next prompt with no thread in between, as python3's
// loop does on its one thread. Each hand-off between the caller's thread
// and the interpreter's is a wake-up of another thread: a py> line read
// elsewhere takes two (the line there, the outcome back) that python3
// does not.
//
// While fn runs, what it asks of the interpreter (Push, Call, ...) runs at
// once, in place, and fn waits for input through AwaitInput, which runs
// the jobs of other goroutines meanwhile. fn must not wait for another
// goroutine that needs the interpreter, which would wait for fn.
func (in *Interp) Host(fn func()) error {
	// Marked keep: hosting changes nothing; each job fn runs decides for
	// itself whether the ready copy goes.
	return in.do(func() {
		in.hosting.Store(true)
		defer in.hosting.Store(false)
		fn()
	}, true)
}

// CanHost reports whether Host may take the REPL's prompt now: while the
// interpreter's thread is Python's only thread. Another may hold the GIL
// for as long as it runs C code, and a prompt on the interpreter's thread
// that asked Python for a suggestion would hold up every key behind it,
// where a prompt on a goroutine of its own gives up on the suggestion.
// (python3's prompt needs the GIL only once Enter is pressed.)
func (in *Interp) CanHost() bool { return C.pyb_sole_thread() != 0 }

// AwaitInput waits until one of fds (at most four) is readable, running
// meanwhile the jobs that other goroutines send the interpreter, as its
// thread does between jobs. It waits only on the interpreter's thread
// while Host runs, and reports false at once elsewhere. With ahead set, it
// reads ahead.FD, one of fds, as soon as that is readable (see ReadAhead).
func (in *Interp) AwaitInput(fds []int, ahead *interp.ReadAhead) (bool, error) {
	if !in.onThread() {
		return false, nil
	}
	for {
		readable, err := in.serveOnce(fds, ahead)
		if err != nil || readable {
			return readable, err
		}
	}
}

// onThread says that the caller is Host's function, on the interpreter's
// thread.
func (in *Interp) onThread() bool {
	return in.hosting.Load() && unix.Gettid() == in.tid
}

// inline runs j where Host's function asked for it, on the interpreter's
// thread already.
func (in *Interp) inline(j job) error {
	if in.dead {
		return ErrClosed
	}
	in.runJob(j)
	return nil
}

// serveOnce waits for jobs and runs them, or, once PrepareIsolated asked
// and no job has come for readyIdle, forks a ready copy (see isolate.go).
// With inputs, it returns as soon as one is readable too, read with ahead
// if set.
func (in *Interp) serveOnce(inputs []int, ahead *interp.ReadAhead) (readable bool, err error) {
	timeout := time.Duration(-1)
	if in.want.Load() && in.ready.pid == 0 && !in.dead {
		timeout = readyIdle
	}
	woken, readable, err := in.jobs.wait(timeout, inputs, ahead)
	switch {
	case err != nil:
		return false, err
	case woken:
		for _, j := range in.jobs.take() {
			in.runJob(j)
		}
		if in.ready.pid != 0 {
			in.want.Store(false) // one is ready already
		}
	case !readable && timeout >= 0:
		if in.want.Swap(false) && in.ready.pid == 0 && !in.dead {
			in.prepareReady()
		}
	}
	return readable, nil
}

// runJob runs j on the interpreter's thread, after discarding the ready
// copy unless j changes nothing a copy could show.
func (in *Interp) runJob(j job) {
	if !j.keep {
		in.want.Store(false)
		in.discardReady()
	}
	j.run()
}
