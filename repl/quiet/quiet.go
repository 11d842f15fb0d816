// Package quiet runs a function once something has been quiet for a while:
// no Poke for a given time.
//
// The obvious way, a time.Timer reset on every poke, costs a context
// switch per poke in a program whose other threads are idle: a timer moved
// earlier than the one Go's network poller sleeps until wakes the thread
// sleeping there (the runtime's netpollBreak), and it finds nothing to do.
// A pyaichat line pokes several of these (the line editor's frame, its idle
// trim, the suggester's settling), each at every prompt. A Timer here is
// armed once and left to run out; when it does, it waits again for the
// rest of the quiet time if a poke came meanwhile.
package quiet

import (
	"sync"
	"sync/atomic"
	"time"
)

// Timer calls its function once d has passed since the last Poke.
type Timer struct {
	d  time.Duration
	fn func()
	// last is when Poke was last called, in nanoseconds on the monotonic
	// clock (since epoch).
	last atomic.Int64

	mu    sync.Mutex
	armed bool
	timer *time.Timer
}

// epoch anchors the monotonic clock readings that Timers keep.
var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) }

// After returns a Timer that calls fn, on a goroutine of its own, once d
// has passed without a Poke. It starts unarmed: nothing runs before the
// first Poke.
func After(d time.Duration, fn func()) *Timer {
	t := &Timer{d: d, fn: fn}
	t.timer = time.AfterFunc(time.Hour, t.fire)
	t.timer.Stop()
	return t
}

// Poke starts the quiet time again.
func (t *Timer) Poke() {
	t.last.Store(now())
	t.mu.Lock()
	if !t.armed {
		t.armed = true
		t.timer.Reset(t.d)
	}
	t.mu.Unlock()
}

// Stop disarms t; a Poke arms it again.
func (t *Timer) Stop() {
	t.mu.Lock()
	t.armed = false
	t.timer.Stop()
	t.mu.Unlock()
}

func (t *Timer) fire() {
	t.mu.Lock()
	if !t.armed {
		t.mu.Unlock()
		return // stopped as it fired
	}
	if rest := t.d - time.Duration(now()-t.last.Load()); rest > 0 {
		t.timer.Reset(rest)
		t.mu.Unlock()
		return
	}
	t.armed = false
	t.mu.Unlock()
	t.fn()
}
