package suggest

import (
	"testing"
	"time"
)

// runs calls settled once the inputs pause, once a pause.
func TestRunsSettleOncePerPause(t *testing.T) {
	r := NewRuns()
	calls := make(chan struct{}, 16)
	settled := func() { calls <- struct{}{} }
	r.settled.Store(&settled)

	wait := func(what string) {
		t.Helper()
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatalf("settled was not called after %s", what)
		}
	}
	for range 5 {
		r.Done()
	}
	wait("a burst of five inputs")
	r.Done()
	wait("one more input")
	time.Sleep(3 * settleAfterRun)
	if n := len(calls); n != 0 {
		t.Fatalf("settled was called %d more times than once per pause", n)
	}
	if n := r.n.Load(); n != 6 {
		t.Fatalf("runs counted %d inputs, want 6", n)
	}
}
