package quiet

import (
	"sync/atomic"
	"testing"
	"time"
)

// counter counts a Timer's calls, and fails the test for a call that came
// sooner than the quiet time after the last poke it was told of.
type counter struct {
	t     *testing.T
	d     time.Duration
	calls atomic.Int32
	poked atomic.Int64 // when poke was last called (now())
}

func (c *counter) call() {
	if quiet := time.Duration(now() - c.poked.Load()); quiet < c.d {
		c.t.Errorf("ran %v after the last poke, want at least %v", quiet, c.d)
	}
	c.calls.Add(1)
}

func (c *counter) poke(q *Timer) {
	c.poked.Store(now())
	q.Poke()
}

// waitCalls waits up to five seconds for want calls in all.
func (c *counter) waitCalls(want int32, after string) {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.calls.Load() != want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := c.calls.Load(); n != want {
		c.t.Fatalf("ran %d times %s, want %d", n, after, want)
	}
}

// expectCalls checks, after a pause of several quiet times, that no call
// came beyond want.
func (c *counter) expectCalls(want int32, after string) {
	c.t.Helper()
	time.Sleep(3 * c.d)
	if n := c.calls.Load(); n != want {
		c.t.Fatalf("ran %d times %s, want %d", n, after, want)
	}
}

func TestRunsOnceQuiet(t *testing.T) {
	// Pokes come 1/50 of the quiet time apart, so that a loaded machine
	// slow to wake the test from its sleeps does not make a quiet time of
	// its own between two of them.
	c := &counter{t: t, d: 500 * time.Millisecond}
	q := After(c.d, c.call)
	defer q.Stop()
	c.expectCalls(0, "before the first poke")

	for range 8 {
		c.poke(q)
		time.Sleep(c.d / 50)
	}
	c.waitCalls(1, "after the pokes stopped")
	c.expectCalls(1, "for one quiet time")

	// A poke after it ran arms it again.
	c.poke(q)
	c.waitCalls(2, "after another poke")
}

func TestStopDisarms(t *testing.T) {
	// A quiet time long enough that the test is not descheduled for as
	// long between the poke and the Stop.
	c := &counter{t: t, d: 500 * time.Millisecond}
	q := After(c.d, c.call)
	c.poke(q)
	q.Stop()
	c.expectCalls(0, "after Stop")
	c.poke(q)
	c.waitCalls(1, "after a poke following Stop")
}
