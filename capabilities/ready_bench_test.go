package capabilities

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// BenchmarkEvalExprIsolated1GiBReady is BenchmarkEvalExprIsolated1GiB when
// a ready copy of the session exists (pybridge.PrepareIsolated, as after
// entering ai> mode or after an earlier isolated call): the copy is made
// between iterations, untimed.
//
//	go test ./capabilities -run '^$' -bench 'EvalExprIsolated' -benchtime 50x
func BenchmarkEvalExprIsolated1GiBReady(b *testing.B) {
	setup(b, "bm_gib = bytearray(2**30)\nfor _i in range(0, 2**30, 4096): bm_gib[_i] = 1")
	defer setup(b, "del bm_gib")
	benchReady(b)
}

// BenchmarkEvalExprIsolatedReady is the same in a small session.
func BenchmarkEvalExprIsolatedReady(b *testing.B) {
	setup(b, "pass")
	benchReady(b)
}

func benchReady(b *testing.B) {
	// A call of a function of the user's: it runs user code, so in the
	// copy (a literal like 1 + 1 is answered in the session).
	setup(b, "def bm_one(): return 1")
	args := json.RawMessage(exprArgs("bm_one()"))
	// The default deadline: the tests' registry allows 30 s, longer than
	// a ready copy's CPU backstop, and such a call forks its own copy.
	reg := New(interp, Options{})
	ctx := context.Background()
	if _, cerr := reg.call(ctx, "eval_expr", args); cerr != nil { // loads the helper
		b.Fatal(cerr)
	}
	before := interp.IsolationStats()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		waitReady(b)
		b.StartTimer()
		if _, cerr := reg.call(ctx, "eval_expr", args); cerr != nil {
			b.Fatal(cerr)
		}
	}
	b.StopTimer()
	if s := interp.IsolationStats(); s.Used-before.Used != int64(b.N) {
		b.Fatalf("%d of %d calls used a ready copy", s.Used-before.Used, b.N)
	}
}

// waitReady asks for a ready copy and waits until one exists and has had
// time to finish setting up its guards (and the previous copy to be torn
// down), as it has when a model's reply separates two calls.
func waitReady(b *testing.B) {
	interp.PrepareIsolated()
	for deadline := time.Now().Add(10 * time.Second); !interp.IsolationStats().Ready; {
		if time.Now().After(deadline) {
			b.Fatal("no ready copy within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(readySettle)
}

// readySettle is far less than a model's reply takes.
const readySettle = 50 * time.Millisecond
