package repl

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

var garbageSink []byte

// makeGarbage allocates n bytes that nothing keeps, as the line editor's
// redraws do.
func makeGarbage(n int) {
	for i := 0; i < n; i += 64 << 10 {
		garbageSink = make([]byte, 64<<10)
	}
	garbageSink = nil
}

func (t *idleTrim) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.trims
}

// freeResident is heap memory that is free but still resident: what a
// trim hands back.
func freeResident() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func TestIdleTrim(t *testing.T) {
	// As pyaichat runs Go code (cmd/pyaichat): with more processors, and
	// the machine busy, the runtime keeps up to a few MiB of free pages
	// that FreeOSMemory does not return, whatever the trim does.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const after = 20 * time.Millisecond
	trim := newIdleTrim(after, 4<<20)
	defer trim.timer.Stop()
	waitTrims := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for trim.count() < want && time.Now().Before(deadline) {
			time.Sleep(after)
		}
		if got := trim.count(); got != want {
			t.Fatalf("%d trims, want %d", got, want)
		}
	}

	trim.trimmedAt = heapAllocated()
	makeGarbage(1 << 20)
	trim.waiting(true)
	time.Sleep(5 * after)
	if n := trim.count(); n != 0 {
		t.Fatalf("a pause after 1 MiB of garbage trimmed (%d), want no trim below 4 MiB", n)
	}

	makeGarbage(16 << 20)
	trim.waiting(true)
	waitTrims(1)
	if free := freeResident(); free > 1<<20 {
		t.Errorf("after the trim %d bytes of free heap are still resident", free)
	}

	// Keys arriving before the pause is long enough cancel the trim.
	makeGarbage(16 << 20)
	trim.waiting(true)
	trim.waiting(false)
	time.Sleep(5 * after)
	if n := trim.count(); n != 1 {
		t.Fatalf("%d trims after keys came within the pause, want still 1", n)
	}
	trim.waiting(true)
	waitTrims(2)
}
