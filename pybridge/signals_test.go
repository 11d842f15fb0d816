//go:build cgo

package pybridge

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Go's own faults are still Go's: the fault handlers that make a crash in
// C code end by its signal pass a fault in Go code on to Go's runtime,
// which turns it into a panic that can be recovered.
func TestGoFaultIsStillAPanic(t *testing.T) {
	for range 3 {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("a nil dereference in Go did not panic")
				}
			}()
			var p *int
			_ = *p
		}()
	}
}

// Python starts with the dispositions python3 starts with, not with Go's
// handlers (which it would report as None).
func TestPythonSeesPython3Dispositions(t *testing.T) {
	out := runPython(t, `import signal
print(*[signal.getsignal(s).name for s in (signal.SIGWINCH, signal.SIGURG, signal.SIGPROF,
      signal.SIGSEGV, signal.SIGTERM, signal.SIGUSR1, signal.SIGPIPE, signal.SIGCHLD)])`)
	want := "SIG_DFL SIG_DFL SIG_DFL SIG_DFL SIG_DFL SIG_DFL SIG_IGN SIG_DFL"
	if out != want {
		t.Errorf("dispositions = %q, want %q", out, want)
	}
}

// A signal that Python's thread blocks stays pending for it, as in python3,
// instead of reaching a Go thread and killing the process by its default.
func TestBlockedSignalStaysPending(t *testing.T) {
	out := runPython(t, `import os, signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGALRM})
os.kill(os.getpid(), signal.SIGUSR1)
signal.setitimer(signal.ITIMER_REAL, 0.01)
import time; time.sleep(0.05)
pending = sorted(signal.sigpending())
got = [signal.sigwait({signal.SIGUSR1}), signal.sigwait({signal.SIGALRM})]
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGALRM})
print(pending == [signal.SIGUSR1, signal.SIGALRM], got == [signal.SIGUSR1, signal.SIGALRM])`)
	if out != "True True" {
		t.Errorf("pending and sigwait: %q, want True True", out)
	}
}

// A signal sent to the process interrupts a blocking call in Python: the
// kernel may hand it to any thread that does not block it, and Go's
// threads block it.
func TestProcessSignalInterruptsPythonSleep(t *testing.T) {
	start := time.Now()
	out := runPython(t, `import os, signal, threading, time
class Alarm(Exception): pass
def on_alarm(s, f): raise Alarm
old = signal.signal(signal.SIGALRM, on_alarm)
threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGALRM)).start()
try:
    time.sleep(30)
    print("slept")
except Alarm:
    print("interrupted")
finally:
    signal.signal(signal.SIGALRM, old)`)
	if out != "interrupted" {
		t.Errorf("sleep under SIGALRM: %q", out)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the sleep was not interrupted (%v)", d)
	}
}

// A handler that user code installs for a signal Go also uses is in force
// while user code runs, and Go gets the signal back afterwards.
func TestUserHandlerForSharedSignal(t *testing.T) {
	out := runPython(t, `import os, signal
got = []
old = signal.signal(signal.SIGWINCH, lambda s, f: got.append(s))
os.kill(os.getpid(), signal.SIGWINCH)
print(got == [signal.SIGWINCH], signal.getsignal(signal.SIGWINCH) is not old)`)
	if out != "True True" {
		t.Errorf("SIGWINCH handler: %q", out)
	}
	// Still the user's, in the next statement.
	out = runPython(t, `import os, signal
got.clear(); os.kill(os.getpid(), signal.SIGWINCH); print(got == [signal.SIGWINCH])
signal.signal(signal.SIGWINCH, signal.SIG_DFL)`)
	if out != "True" {
		t.Errorf("SIGWINCH handler in the next statement: %q", out)
	}
}

// runPython runs source in the test interpreter's __main__ as user code
// and returns what it printed, trimmed.
func runPython(t *testing.T, source string) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	wrapped := "import sys as _s\n_f = open(" + strconv.Quote(f.Name()) + ", 'w')\n_old, _s.stdout = _s.stdout, _f\n" +
		"try:\n    exec(" + strconv.Quote(source) + ", globals())\nfinally:\n    _s.stdout = _old\n    _f.close()\n"
	out, err := testInterp.RunBlock(wrapped)
	if err != nil || out.Exit {
		t.Fatalf("RunBlock: %+v %v", out, err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Python handlers for the signals Go uses (SIGURG, its preemption; SIGPROF,
// its profiler) run, and pyaichat goes on working.
func TestUserHandlersForGoSignals(t *testing.T) {
	out := runPython(t, `import os, signal
got = []
old = {s: signal.signal(s, lambda n, f: got.append(n)) for s in (signal.SIGURG, signal.SIGPROF)}
os.kill(os.getpid(), signal.SIGURG)
os.kill(os.getpid(), signal.SIGPROF)
# A signal sent to the process may reach one of Go's threads, a moment
# after kill returns: restoring SIG_DFL before it arrived would make it fatal.
import time
deadline = time.monotonic() + 5
while not {signal.SIGURG, signal.SIGPROF} <= set(got) and time.monotonic() < deadline:
    time.sleep(0.001)
for s, h in old.items():
    signal.signal(s, h)
print(signal.SIGURG in got and signal.SIGPROF in got)  # Go may preempt with SIGURG too`)
	if out != "True" {
		t.Errorf("handlers for SIGURG and SIGPROF: %q", out)
	}
	if out, err := testInterp.Push("after_go_signals = 1"); err != nil || out.Exit {
		t.Fatalf("Push after: %+v %v", out, err)
	}
}
