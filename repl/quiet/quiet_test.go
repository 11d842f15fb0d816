package quiet

import (
	"sync/atomic"
	"testing"
	"time"
)

// waitFor polls cond for up to five seconds.
func waitFor(cond func() bool) bool {
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

func TestRunsOnceQuiet(t *testing.T) {
	const d = 30 * time.Millisecond
	var calls atomic.Int32
	var at atomic.Int64
	q := After(d, func() { at.Store(now()); calls.Add(1) })
	defer q.Stop()

	time.Sleep(2 * d)
	if n := calls.Load(); n != 0 {
		t.Fatalf("ran %d times before the first poke", n)
	}

	// Pokes for four quiet times, each sooner than d after the last: the
	// function waits for the quiet after the last one.
	var last int64
	for range 8 {
		q.Poke()
		last = now()
		time.Sleep(d / 2)
		if n := calls.Load(); n != 0 {
			t.Fatalf("ran %d times while pokes kept coming", n)
		}
	}
	if !waitFor(func() bool { return calls.Load() == 1 }) {
		t.Fatalf("ran %d times after the pokes stopped, want 1", calls.Load())
	}
	if quiet := time.Duration(at.Load() - last); quiet < d {
		t.Errorf("ran %v after the last poke, want at least %v", quiet, d)
	}
	time.Sleep(3 * d)
	if n := calls.Load(); n != 1 {
		t.Fatalf("ran %d times, want once for one quiet time", n)
	}

	// A poke after it ran arms it again.
	q.Poke()
	if !waitFor(func() bool { return calls.Load() == 2 }) {
		t.Fatalf("ran %d times after another poke, want 2", calls.Load())
	}
}

func TestStopDisarms(t *testing.T) {
	const d = 20 * time.Millisecond
	var calls atomic.Int32
	q := After(d, func() { calls.Add(1) })
	q.Poke()
	q.Stop()
	time.Sleep(3 * d)
	if n := calls.Load(); n != 0 {
		t.Fatalf("ran %d times after Stop", n)
	}
	q.Poke()
	if !waitFor(func() bool { return calls.Load() == 1 }) {
		t.Fatalf("ran %d times after a poke following Stop, want 1", calls.Load())
	}
}
