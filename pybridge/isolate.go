package pybridge

/*
#include <stdlib.h>
#include "isolate.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompSeen records what the last isolated child reported: 0 no call
// yet, 1 the seccomp filter was active, 2 it could not be installed.
var seccompSeen atomic.Int32

// SeccompActive reports whether the last isolated call ran under the
// seccomp filter; known is false before the first isolated call. Without
// seccomp (an old kernel, a container that forbids filters, a non-Linux
// system) the copy is still guarded by the audit hook, closed descriptors,
// read-only shared mappings and resource limits.
func SeccompActive() (active, known bool) {
	switch seccompSeen.Load() {
	case 1:
		return true, true
	case 2:
		return false, true
	}
	return false, false
}

// A ready copy: a fork()ed copy of the session, made ahead of time, that
// has installed every guard and waits for one request (isolate.c).
//
// Why: fork() costs time in proportion to the session's memory (copying
// page tables: 15-20 ms for a 1 GiB session on the 2-CPU test VM), against
// an aim of 5 ms for an isolated evaluation. With a ready copy, a call only
// sends the request and reads the result.
//
// When one is made: only when asked (PrepareIsolated: the REPL on entering
// ai> mode, the capabilities layer after each isolated call), and only once
// the interpreter has had no job for readyIdle, so that a fork never sits
// on the path of a py> statement; a job that arrives during a fork waits
// for it (the fork's own cost, ~20 ms per GiB). Speculative forks after
// every statement would also make the session's next writes to its memory
// take copy-on-write faults, so there are none.
//
// When it is still the session: every job may run user code and discards
// the copy (the serve loop does it before the job runs), except isolated
// calls and CallReadOnly helpers. Between jobs no Python code runs unless
// another Python thread exists, so a copy is made and used only when the
// interpreter's thread is its only Python thread, at both moments;
// otherwise the call forks on demand as before. Anything else uncertain
// falls back to an on-demand fork too.
type readyCopy struct {
	pid int // 0: none
	fd  int // the parent's end of the request socket
}

// readyIdle is how long the interpreter must have had no job before a
// requested ready copy is forked.
const readyIdle = 40 * time.Millisecond

// readyCPUBackstop is a ready copy's CPU limit in seconds while it waits.
const readyCPUBackstop = C.PYB_READY_CPU_BACKSTOP

type isolationCounters struct {
	prepared, used, forked, discarded, skipped atomic.Int64
	waiting                                    atomic.Bool // a ready copy exists
}

// IsolationStats returns the counters of isolated calls so far.
func (in *Interp) IsolationStats() IsolationStats {
	c := &in.stats
	return IsolationStats{Prepared: c.prepared.Load(), Used: c.used.Load(), Forked: c.forked.Load(),
		Discarded: c.discarded.Load(), Skipped: c.skipped.Load(), Ready: c.waiting.Load()}
}

// PrepareIsolated asks for a ready copy of the session, so that the next
// isolated call need not fork (see readyCopy). It returns at once; the copy
// is forked once the interpreter has been idle for a short while (readyIdle),
// and the next job that may run user code (a py> statement, RunFile, a
// Call that is not read-only) cancels the request or discards the copy.
// Call it when isolated calls are likely soon: on entering ai> mode,
// before asking the assistant, after an isolated call (consecutive tool
// calls of one answer). Cheap when a copy is ready already.
func (in *Interp) PrepareIsolated() {
	in.want.Store(true)
	in.jobs.poke()
}

// DiscardIsolated drops the ready copy, if any, and a pending request for
// one. Call it when isolated calls are no longer likely (on leaving ai>
// mode): the copy of a large session takes tens of milliseconds to tear
// down, better spent while the user types than at the next statement,
// which would discard it anyway. Until it is gone, writes to the session's
// memory copy pages, and os.wait() in user code could collect it.
func (in *Interp) DiscardIsolated() {
	_ = in.job(func() {})
}

// prepareReady forks a ready copy; on the serve goroutine, between jobs.
func (in *Interp) prepareReady() {
	setPrivateRange()
	var pid, fd C.int
	var cerr C.pyb_error
	switch C.pyb_prepare_isolated(&pid, &fd, &cerr) {
	case 0:
		in.ready = readyCopy{pid: int(pid), fd: int(fd)}
		in.stats.prepared.Add(1)
		in.stats.waiting.Store(true)
	case C.PYB_ISO_SKIPPED:
		in.stats.skipped.Add(1)
	default:
		// The call will fork on demand and report what fails.
		takeError(&cerr)
	}
}

// discardReady kills the ready copy, if any; on the serve goroutine.
func (in *Interp) discardReady() {
	if in.ready.pid == 0 {
		return
	}
	discard(in.ready)
	in.ready = readyCopy{}
	in.stats.discarded.Add(1)
	in.stats.waiting.Store(false)
}

func discard(r readyCopy) {
	// It would exit at end of file too; SIGKILL does not wait for a copy
	// that is still running the user's at-fork callbacks.
	_ = unix.Kill(r.pid, unix.SIGKILL)
	_ = unix.Close(r.fd)
	go reap(r.pid)
}

// reap waits for a child in the background: tearing down a copy of a large
// session takes as long as making it, and nobody needs to wait for that.
func reap(pid int) {
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			return
		}
	}
}

// isolated is Call for CallIsolated: module.fn(arg) runs in a fork()ed
// copy of the interpreter. The copy has no terminal, no inherited
// descriptors and no way to write files, spawn processes or connect
// anywhere, and it is killed at ctx's deadline (an *Error of Type
// "Timeout") or when ctx is canceled (Type "Canceled", e.g. Ctrl-C at
// ai>). A copy that dies without a result is an *Error of Type "Crashed".
// Only the result text comes back. A ready copy made by PrepareIsolated
// answers instead of a new fork when it is still the session as it is.
func (in *Interp) isolated(ctx context.Context, module, fn, arg string) (string, error) {
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", &Error{Type: ErrTypeTimeout, Message: err.Error()}
		}
		return "", &Error{Type: ErrTypeCanceled, Message: err.Error()}
	}
	d, ok := ctx.Deadline()
	if !ok {
		return "", &Error{Type: ErrTypeIsolation, Message: "an isolated call needs a deadline"}
	}
	ms := max(time.Until(d).Milliseconds(), 1)

	var out string
	var callErr error
	// A keep job: it must not discard the ready copy it is about to use.
	// The wait lasts until the job is done: the job itself kills the copy
	// once ctx ends (C polls cancel beside the copy's result).
	derr := in.doContext(ctx, true, untilDone, func(cancel int) {
		rd := in.ready
		in.ready = readyCopy{}
		in.stats.waiting.Store(false)
		rfd := C.int(-1)
		if rd.pid != 0 {
			rfd = C.int(rd.fd)
		} else {
			setPrivateRange()
		}
		cmod, cfn := C.CString(module), C.CString(fn)
		defer C.free(unsafe.Pointer(cmod))
		defer C.free(unsafe.Pointer(cfn))
		// Passed with its length: arg may hold NUL bytes.
		carg := (*C.char)(C.CBytes([]byte(arg + "\x00")))
		defer C.free(unsafe.Pointer(carg))
		var res *C.char
		var n C.size_t
		var guards, reaped, used C.int
		var cerr C.pyb_error
		rc := C.pyb_call_isolated(cmod, cfn, carg, C.size_t(len(arg)), C.longlong(ms),
			C.int(cancel), C.int(rd.pid), rfd, &used,
			&res, &n, &guards, &reaped, &cerr)
		switch {
		case used != 0:
			in.stats.used.Add(1)
		case rd.pid != 0:
			// Another Python thread exists, or the deadline is beyond the
			// copy's CPU backstop: it may not be the session as it is.
			discard(rd)
			in.stats.discarded.Add(1)
			in.stats.forked.Add(1)
		default:
			in.stats.forked.Add(1)
		}
		if reaped > 0 {
			go reap(int(reaped))
		}
		switch rc {
		case 0:
			defer C.free(unsafe.Pointer(res))
			out = C.GoStringN(res, C.int(n))
			if guards&C.PYB_GUARD_SECCOMP != 0 {
				seccompSeen.Store(1)
			} else {
				seccompSeen.Store(2)
			}
		case C.PYB_ISO_TIMEOUT:
			callErr = timeoutError(ms)
		case C.PYB_ISO_CANCELED:
			// ctx's own deadline and the C-side one race; a deadline is
			// a Timeout whichever noticed it first.
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				callErr = timeoutError(ms)
			} else {
				callErr = &Error{Type: ErrTypeCanceled, Message: "canceled: the isolated evaluation was stopped; the session is unchanged"}
			}
		default:
			callErr = takeError(&cerr)
		}
	})
	if derr != nil {
		return "", derr
	}
	return out, callErr
}

// timeoutError is an isolated call's Timeout, ms after it started (to
// 10 ms: the time left to a deadline is a little less than it was set to).
func timeoutError(ms int64) *Error {
	d := (time.Duration(ms) * time.Millisecond).Round(10 * time.Millisecond)
	return &Error{Type: ErrTypeTimeout, Message: fmt.Sprintf(
		"no result within %v: the isolated evaluation was stopped; the session is unchanged", d)}
}
