package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// How a program ended: its stdout, the signal that killed it (0 if none)
// and its exit status otherwise.
type ending struct {
	stdout string
	signal syscall.Signal
	status int
}

// runScript runs a Python file as `python3 -i FILE` would, with stdin
// empty, and says how the program ended.
func runScript(t *testing.T, program, script string) ending {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "script.py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{path}
	if program == pythonOracle {
		args = []string{"-i", path}
	}
	cmd := exec.Command(program, args...)
	cmd.Env = testEnv(dir, "")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s %s did not end in 30 s; output:\n%s", program, script, out.String())
	}
	e := ending{stdout: out.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			e.signal = ws.Signal()
		} else {
			e.status = ws.ExitStatus()
		}
	} else if err != nil {
		t.Fatal(err)
	}
	// The interactive prompt that python3 -i and pyaichat show before
	// reading the empty stdin, and what they print at its end.
	e.stdout = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(e.stdout, "\n"), ">>> "), "py> ")
	return e
}

// The signal cases of CPython's test_signal, test_threading and
// test_socket that failed inside pyaichat, and the ways a process ends by
// a signal, each run by python3 and by pyaichat: how they end must match.
func TestSignalsAgainstPython(t *testing.T) {
	cases := map[string]string{
		// test_signal: a signal sent to oneself is handled before kill()
		// returns, so the exception comes from the line that sent it.
		"self-sent SIGINT raises at once": `import os, signal
n = 0
try:
    os.kill(os.getpid(), signal.SIGINT)
    n = 1
    n = 2
except KeyboardInterrupt:
    print("KeyboardInterrupt after", n)
`,
		// test_signal (PendingSignalsTests): blocked signals stay pending.
		"pthread_sigmask, sigpending, sigwait": `import os, signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGUSR2})
os.kill(os.getpid(), signal.SIGUSR1)
os.kill(os.getpid(), signal.SIGUSR2)
print(sorted(signal.sigpending()))
print(signal.sigwait({signal.SIGUSR2}), sorted(signal.sigpending()))
print(signal.sigtimedwait({signal.SIGUSR1}, 1).si_signo)
print(signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2}) >= {signal.SIGUSR1})
`,
		// test_socket (InterruptedSendTimeoutTest): SIGALRM interrupts a
		// blocking send.
		"SIGALRM interrupts a blocking sendall": `import signal, socket
a, b = socket.socketpair()
class Alarm(Exception): pass
def on_alarm(s, f): raise Alarm
signal.signal(signal.SIGALRM, on_alarm)
payload = b"x" * 50_000_000  # built before the alarm is armed: it takes a loaded machine longer than 0.2 s
signal.setitimer(signal.ITIMER_REAL, 0.2)
try:
    a.sendall(payload)
    print("sent")
except Alarm:
    print("interrupted")
`,
		// test_threading: handlers run in the main thread, which is the
		// process's.
		"handler runs in the main thread": `import os, signal, threading
seen = []
signal.signal(signal.SIGUSR1, lambda s, f: seen.append(threading.current_thread() is threading.main_thread()))
t = threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGUSR1))
t.start(); t.join()
import time
for _ in range(100):
    if seen: break
    time.sleep(0.01)
print(seen, threading.main_thread().native_id == os.getpid())
`,
		"signal.set_wakeup_fd": `import os, signal, socket
r, w = socket.socketpair()
w.setblocking(False)
signal.set_wakeup_fd(w.fileno())
signal.signal(signal.SIGUSR1, lambda s, f: None)
os.kill(os.getpid(), signal.SIGUSR1)
print(r.recv(1) == bytes([signal.SIGUSR1]))
`,
		"getsignal of every signal": `import signal
for s in signal.valid_signals():
    h = signal.getsignal(s)
    print(s, getattr(h, "name", None) or getattr(h, "__name__", h))
`,
		"save and restore a handler": `import os, signal
old = signal.signal(signal.SIGTERM, lambda s, f: print("TERM handled"))
os.kill(os.getpid(), signal.SIGTERM)
signal.signal(signal.SIGTERM, old)
print(signal.getsignal(signal.SIGTERM))
`,
		"a blocked signal sent to itself stays pending": `import os, signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
os.kill(os.getpid(), signal.SIGTERM)
print("pending:", sorted(signal.sigpending()))
signal.signal(signal.SIGTERM, lambda s, f: print("TERM handled"))
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
print("after unblock")
`,
		"SIG_IGN for SIGINT": `import os, signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
os.kill(os.getpid(), signal.SIGINT)
print("still running")
`,
		"SIG_DFL for SIGINT kills": `import os, signal
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.kill(os.getpid(), signal.SIGINT)
print("not reached")
`,
		"SIGTERM by default kills": `import os, signal
os.kill(os.getpid(), signal.SIGTERM)
print("not reached")
`,
		"a crash in C code": `import ctypes
print("before", flush=True)
ctypes.string_at(0)
`,
		"a crash with faulthandler": `import ctypes, faulthandler, sys
faulthandler.enable(file=sys.stdout)
print("before", flush=True)
ctypes.string_at(0)
`,
		"abort": `import os
print("before", flush=True)
os.abort()
`,
	}
	for name, script := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := runScript(t, pythonOracle, script)
			got := runScript(t, binary, script)
			if name == "a crash with faulthandler" {
				// The thread's address and the path of the library's file.
				want.stdout, got.stdout = faultLines(want.stdout), faultLines(got.stdout)
			}
			if got != want {
				t.Errorf("python3 -i ended with signal %d status %d:\n%s\npyaichat with signal %d status %d:\n%s\n%s",
					want.signal, want.status, want.stdout, got.signal, got.status, got.stdout, lineDiff(want.stdout, got.stdout))
			}
		})
	}
}

// faultLines keeps what faulthandler's report says, without addresses,
// paths and the list of extension modules (pyaichat's own is one).
func faultLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.HasPrefix(l, "Current thread 0x"):
			keep = append(keep, "Current thread")
		case strings.HasPrefix(l, "  File "):
			keep = append(keep, l[strings.LastIndexByte(l, '"'):])
		case strings.HasPrefix(l, "Extension modules:"):
		default:
			keep = append(keep, l)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

// Python's main thread is the process's main thread at every start, also
// on a loaded machine, where the goroutine that starts Python could land
// on any thread.
func TestMainThreadOverManyStarts(t *testing.T) {
	var stop atomic.Bool
	var load sync.WaitGroup
	for range runtime.NumCPU() {
		load.Add(1)
		go func() {
			defer load.Done()
			for !stop.Load() {
			}
		}()
	}
	defer func() { stop.Store(true); load.Wait() }()
	dir := t.TempDir()
	const starts = 30
	for i := range starts {
		cmd := exec.Command(binary, "-c", "import os, threading; print(threading.main_thread().native_id == os.getpid())")
		cmd.Env = testEnv(dir, "")
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != "True" {
			t.Fatalf("start %d of %d: Python's main thread is not the process's: %q %v", i+1, starts, out, err)
		}
	}
}

// Ctrl-C after signal.signal(SIGINT, SIG_DFL) ends the process by SIGINT,
// as in python3.
func TestPTYCtrlCAfterSigDfl(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	typeLine(t, s, "import signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL)", "<built-in function default_int_handler>")
	enter(s, "print('sleeping'); time.sleep(30)")
	s.ExpectString("sleeping\r\n")
	s.Send(ptytest.CtrlC)
	if sig := s.ExpectSignaled(); sig != syscall.SIGINT {
		t.Fatalf("pyaichat ended by signal %v, want SIGINT\n%s", sig, s.Dump())
	}
}

// A user's SIGINT handler runs on Ctrl-C, and the next Ctrl-C after it is
// put back raises KeyboardInterrupt again.
func TestPTYCtrlCUserHandler(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "")
	typeLine(t, s, "import signal, time; old = signal.signal(signal.SIGINT, lambda s, f: print('handled'))", "")
	enter(s, "print('sleeping'); time.sleep(3); print('slept')")
	s.ExpectString("sleeping\r\n")
	// Into the sleep: a handler that prints, run while the print before
	// still flushes, re-enters it (RuntimeError), in python3 too. The
	// sleep is long enough to be still asleep on a loaded machine.
	time.Sleep(200 * time.Millisecond)
	s.Send(ptytest.CtrlC)
	s.ExpectString("handled\r\n")
	s.ExpectString("slept\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, "signal.signal(signal.SIGINT, old) is not None", "True")
	enter(s, "print('sleeping'); time.sleep(30)")
	s.ExpectString("sleeping\r\n")
	// Into the sleep, as above: a SIGINT between the print and the sleep
	// is noticed only when the sleep ends, in python3 too (time.sleep
	// checks for signals when interrupted, not before it starts).
	time.Sleep(200 * time.Millisecond)
	interrupt(t, s)
}
