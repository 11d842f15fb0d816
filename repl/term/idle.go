package term

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pyaichat/pyaichat/repl/quiet"
)

// idleTrim gives the Go heap's garbage back to the system while the user
// pauses at a prompt. Each input allocates (the line's drawings, the
// interpreter's results, the session log), and Go's first collection
// comes only when 4 MiB have piled up; the pages it freed stay resident
// after it. A collection in a pause
// keeps the REPL's own heap near what is live (about 250 KB) for the cost
// of one small collection, which a person who stopped typing cannot
// notice. The caller's own trim runs too (pyaichat's returns the C heap's
// free pages, where Python keeps its larger objects). Nothing runs
// while code runs or keys arrive, and nothing runs at all until enough
// garbage was made to be worth returning.
type idleTrim struct {
	after time.Duration // how long the prompt must wait for keys
	min   uint64        // bytes allocated since the last trim that make one worthwhile
	also  func()        // the caller's trim, or nil
	timer *quiet.Timer  // poked when the editor starts waiting
	// idle says the editor waits for keys.
	idle atomic.Bool

	mu        sync.Mutex
	trimmedAt uint64 // the heap's cumulative allocation at the last trim
	trims     int    // how many trims ran, for tests
}

const (
	idleTrimAfter = time.Second
	idleTrimMin   = 512 << 10
)

func newIdleTrim(after time.Duration, min uint64, also func()) *idleTrim {
	t := &idleTrim{after: after, min: min, also: also}
	t.timer = quiet.After(after, func() {
		if t.idle.Load() {
			t.trim()
		}
	})
	return t
}

// waiting is told when the line editor blocks for keys (true) and when
// keys come (false).
func (t *idleTrim) waiting(w bool) {
	t.idle.Store(w)
	if w {
		t.timer.Poke()
	}
}

// heapAllocated is the heap's cumulative allocation: reading it does not
// stop the world, as runtime.ReadMemStats does.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func (t *idleTrim) trim() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if heapAllocated()-t.trimmedAt < t.min {
		return
	}
	debug.FreeOSMemory()
	if t.also != nil {
		t.also()
	}
	t.trimmedAt = heapAllocated()
	t.trims++
}
