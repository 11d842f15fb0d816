//go:build cgo

package pybridge

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/repl/interp"
	"golang.org/x/sys/unix"
)

// hostOrFail runs fn under Host, failing the test rather than hanging
// when fn does not return in time (a job that waits for itself).
func hostOrFail(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- testInterp.Host(fn) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Host: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Host's function did not return: a job waited for the thread it was on")
	}
}

const hostHelper = `
import __main__

def value(expr):
    return repr(eval(expr, __main__.__dict__))
`

// pyValue returns the repr of a Python expression in the session.
func pyValue(t *testing.T, expr string) string {
	t.Helper()
	if err := testInterp.LoadModule("_host_test", hostHelper); err != nil {
		t.Fatal(err)
	}
	out, err := testInterp.Call(context.Background(), CallHelper, "_host_test", "value", expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return out
}

func TestHostRunsItsJobsInPlaceOnPythonsThread(t *testing.T) {
	if _, err := testInterp.Push("import threading; ht_outside = threading.get_ident()"); err != nil {
		t.Fatal(err)
	}
	hostOrFail(t, func() {
		// Each would wait forever for the thread it runs on, were it queued.
		for _, line := range []string{"ht_inside = threading.get_ident()", "ht_more = 0", "for i in range(3):", "    ht_more += i", ""} {
			if _, err := testInterp.Push(line); err != nil {
				t.Errorf("Push(%q) under Host: %v", line, err)
			}
		}
		if got := pyValue(t, "ht_more"); got != "3" {
			t.Errorf("a Call under Host read ht_more = %s, want 3", got)
		}
	})
	if got := pyValue(t, "(ht_inside == ht_outside, ht_more)"); got != "(True, 3)" {
		t.Errorf("under Host, Python ran on its own thread and ran the block as (same thread, sum) = %s, want (True, 3)", got)
	}
}

func TestAwaitInputRunsOtherGoroutinesJobs(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if ok, err := testInterp.AwaitInput([]int{int(r.Fd())}, nil); ok || err != nil {
		t.Fatalf("AwaitInput off the interpreter's thread = %v, %v; want false at once", ok, err)
	}
	pushed := make(chan error, 1)
	var readable bool
	hostOrFail(t, func() {
		// The job of another goroutine can only run inside the wait, and
		// the input comes only once it has.
		go func() {
			_, err := testInterp.Push("ai_from_elsewhere = 42")
			pushed <- err
			w.Write([]byte{1})
		}()
		readable, err = testInterp.AwaitInput([]int{int(r.Fd())}, nil)
	})
	if !readable || err != nil {
		t.Fatalf("AwaitInput = %v, %v; want the input readable", readable, err)
	}
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	if got := pyValue(t, "ai_from_elsewhere"); got != "42" {
		t.Errorf("the job run inside the wait left %s, want 42", got)
	}
}

// With a ReadAhead, the wait reads the input itself once it is readable,
// and echoes a lone printable key after the echo it was given, unless
// more input waits behind it; anything else it reads without an echo.
func TestAwaitInputReadsAheadAndEchoesAKey(t *testing.T) {
	pipe := func() (r, w int) {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
		return p[0], p[1]
	}
	var err error
	keysR, keysW := pipe()
	screenR, screenW := pipe()
	for _, c := range []struct {
		typed, echo string
		echoFD      int
		read, shown string
	}{
		{"a", "\r>>> ", screenW, "a", "\r>>> a"},
		{"b", "", screenW, "b", "b"},
		{"~", "", -1, "~", ""},
		{"\x01", "x", screenW, "\x01", ""},
		{"\x7f", "x", screenW, "\x7f", ""},
		{"cd", "x", screenW, "cd", ""},
		{"é", "x", screenW, "é", ""},
	} {
		unix.Write(keysW, []byte(c.typed))
		ahead := interp.ReadAhead{FD: keysR, Buf: make([]byte, 16), Echo: []byte(c.echo), EchoFD: c.echoFD}
		var readable bool
		hostOrFail(t, func() { readable, err = testInterp.AwaitInput([]int{keysR}, &ahead) })
		shown := make([]byte, 64)
		n, _ := unix.Read(screenR, shown)
		shown = shown[:max(n, 0)]
		if !readable || err != nil || string(ahead.Buf[:ahead.N]) != c.read || string(shown) != c.shown || ahead.Echoed != len(c.shown) {
			t.Errorf("%q typed, echo %q: readable %v (%v), read %q, echoed %d bytes: %q; want %q read and %q shown",
				c.typed, c.echo, readable, err, ahead.Buf[:ahead.N], ahead.Echoed, shown, c.read, c.shown)
		}
	}

	// Keys typed ahead, read one at a time as the editor reads them: a key
	// with more behind it is not echoed (the editor draws them together),
	// the last one is.
	unix.Write(keysW, []byte("ab"))
	for _, want := range []struct {
		read, shown string
		behind      bool
	}{{"a", "", true}, {"b", "b", false}} {
		ahead := interp.ReadAhead{FD: keysR, Buf: make([]byte, 1), EchoFD: screenW}
		var readable bool
		hostOrFail(t, func() { readable, err = testInterp.AwaitInput([]int{keysR}, &ahead) })
		shown := make([]byte, 64)
		n, _ := unix.Read(screenR, shown)
		shown = shown[:max(n, 0)]
		if !readable || err != nil || string(ahead.Buf[:ahead.N]) != want.read || string(shown) != want.shown || ahead.Behind != want.behind {
			t.Errorf("typed ahead: readable %v (%v), read %q, shown %q, behind %v; want %q read, %q shown, behind %v",
				readable, err, ahead.Buf[:ahead.N], shown, ahead.Behind, want.read, want.shown, want.behind)
		}
	}

	// Another of the descriptors readable, the keys not: nothing is read.
	otherR, otherW := pipe()
	unix.Write(otherW, []byte{1})
	ahead := interp.ReadAhead{FD: keysR, Buf: make([]byte, 16), Echo: []byte("x"), EchoFD: screenW}
	var readable bool
	hostOrFail(t, func() { readable, err = testInterp.AwaitInput([]int{keysR, otherR}, &ahead) })
	if !readable || err != nil || ahead.N != 0 || ahead.Echoed != 0 {
		t.Errorf("with another descriptor readable: readable %v (%v), %d bytes read, %d echoed; want readable, none", readable, err, ahead.N, ahead.Echoed)
	}
}

func TestAwaitInputReadiesACopyWhenAsked(t *testing.T) {
	if !testInterp.CanHost() {
		t.Fatal("a Python thread of an earlier test is still running: no ready copy would be made (see readyCopy)")
	}
	testInterp.DiscardIsolated()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	hostOrFail(t, func() {
		testInterp.PrepareIsolated()
		go func() {
			for end := time.Now().Add(10 * time.Second); !testInterp.IsolationStats().Ready && time.Now().Before(end); {
				time.Sleep(readyIdle / 4)
			}
			w.Write([]byte{1})
		}()
		if _, err := testInterp.AwaitInput([]int{int(r.Fd())}, nil); err != nil {
			t.Error(err)
		}
	})
	if !testInterp.IsolationStats().Ready {
		t.Error("no ready copy was made while Host's function waited for input, idle, after PrepareIsolated")
	}
	testInterp.DiscardIsolated()
}

func TestCanHostOnlyWhilePythonHasOneThread(t *testing.T) {
	if !testInterp.CanHost() {
		t.Fatal("CanHost() = false with no Python thread but the interpreter's")
	}
	if _, err := testInterp.Push("import threading; ch_go = threading.Event(); ch_t = threading.Thread(target=ch_go.wait); ch_t.start()"); err != nil {
		t.Fatal(err)
	}
	if testInterp.CanHost() {
		t.Error("CanHost() = true while another Python thread runs (it may hold the GIL)")
	}
	if _, err := testInterp.Push("ch_go.set(); ch_t.join()"); err != nil {
		t.Fatal(err)
	}
	if !testInterp.CanHost() {
		t.Error("CanHost() = false after the other thread ended")
	}
}
