package term

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

// heapReleased is free heap memory that has been returned to the system.
func heapReleased() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func TestIdleTrim(t *testing.T) {
	// As pyaichat runs Go code (cmd/pyaichat): one processor.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// Long enough that the test is not descheduled for as long between
	// two calls, on a loaded machine.
	const after = 200 * time.Millisecond
	trim := newIdleTrim(after, 4<<20, nil)
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

	// What a trim hands back to the system, measured around one call. (How
	// much free heap stays resident afterwards is the runtime's business:
	// on a busy machine FreeOSMemory left 1.5-3 MiB of it, against 4 MiB
	// for a collection alone, too close to tell the two apart.)
	makeGarbage(16 << 20)
	before := heapReleased()
	trim.trim()
	if got := heapReleased() - before; got < 2<<20 {
		t.Errorf("the trim returned %d bytes of the garbage's pages to the system, want at least 2 MiB", got)
	}
	if n := trim.count(); n != 3 {
		t.Fatalf("%d trims, want 3", n)
	}
}
