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
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Error types of isolated calls, besides the Python exception types that the
// helper itself reports.
const (
	ErrTypeTimeout   = "Timeout"        // the deadline passed; the copy was killed
	ErrTypeCanceled  = "Canceled"       // the context ended first; the copy was killed
	ErrTypeCrashed   = "Crashed"        // the copy died without a result (a signal, os._exit)
	ErrTypeIsolation = "IsolationError" // the copy could not be made (pipe, fork)
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

// CallIsolated calls module.fn(arg), a helper taking and returning str, in a
// fork()ed copy of the interpreter, so that whatever the call does to
// objects (user __repr__, properties, walrus, list.append) never reaches
// the session. The copy has no terminal, no inherited descriptors and no
// way to write files, spawn processes or connect anywhere, and it is killed
// at the timeout (an *Error of Type "Timeout"). A copy that dies without a
// result is an *Error of Type "Crashed". Only the result text comes back.
func (in *Interp) CallIsolated(module, fn, arg string, timeout time.Duration) (string, error) {
	return in.CallIsolatedContext(context.Background(), module, fn, arg, timeout)
}

// CallIsolatedContext is CallIsolated that also stops (Type "Canceled")
// when ctx ends, e.g. on Ctrl-C at ai>.
func (in *Interp) CallIsolatedContext(ctx context.Context, module, fn, arg string, timeout time.Duration) (string, error) {
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", &Error{Type: ErrTypeTimeout, Message: err.Error()}
		}
		return "", &Error{Type: ErrTypeCanceled, Message: err.Error()}
	}
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	ms := timeout.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	// A pipe whose write end Go closes when ctx ends: C polls it next to
	// the child's result, so no Go code has to run on the Python thread.
	cancelR, cancelW, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("pybridge: cancel pipe: %w", err)
	}
	defer cancelR.Close()
	stop := context.AfterFunc(ctx, func() { cancelW.Close() })
	defer func() {
		if stop() {
			cancelW.Close()
		}
	}()

	var out string
	var callErr error
	derr := in.Do(func() {
		cmod, cfn := C.CString(module), C.CString(fn)
		defer C.free(unsafe.Pointer(cmod))
		defer C.free(unsafe.Pointer(cfn))
		// Passed with its length: arg may hold NUL bytes.
		carg := (*C.char)(C.CBytes([]byte(arg + "\x00")))
		defer C.free(unsafe.Pointer(carg))
		var res *C.char
		var n C.size_t
		var guards, reap C.int
		var cerr C.pyb_error
		rc := C.pyb_call_isolated(cmod, cfn, carg, C.size_t(len(arg)), C.longlong(ms),
			C.int(cancelR.Fd()), &res, &n, &guards, &reap, &cerr)
		if reap > 0 {
			// Tearing down a copy of a large session takes as long as
			// making it; nobody needs to wait for that.
			go func(pid int) {
				var ws unix.WaitStatus
				for {
					if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
						return
					}
				}
			}(int(reap))
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
			callErr = &Error{Type: ErrTypeTimeout, Message: fmt.Sprintf(
				"no result within %v: the isolated evaluation was stopped; the session is unchanged", time.Duration(ms)*time.Millisecond)}
		case C.PYB_ISO_CANCELED:
			// ctx's own deadline and the C-side one race; a deadline is
			// a Timeout whichever noticed it first.
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				callErr = &Error{Type: ErrTypeTimeout, Message: "no result before the deadline: the isolated evaluation was stopped; the session is unchanged"}
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
