package capabilities

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/pyaichat/pyaichat/pybridge"
)

// The capabilities' performance targets: a small call that runs no user
// code (aim <= 100 us), an isolated evaluation in a session holding 1 GiB
// (<= 5 ms), get_repr of list(range(10**7)) (<= 2 ms, within the size cap)
// and list_globals with 10,000 globals (<= 10 ms); and objects whose plain
// repr would take seconds, summarised in a bounded time.
//
//	go test ./capabilities -run '^$' -bench . -benchtime 200x

func benchCall(b *testing.B, name, expr string) {
	b.Helper()
	args := json.RawMessage("{}")
	if expr != "" {
		args = json.RawMessage(exprArgs(expr))
	}
	ctx := context.Background()
	if _, cerr := reg.call(ctx, name, args); cerr != nil { // loads the helper
		b.Fatal(cerr)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, cerr := reg.call(ctx, name, args); cerr != nil {
			b.Fatal(cerr)
		}
	}
}

func BenchmarkGetTypeInt(b *testing.B) {
	setup(b, "bm_int = 12345")
	benchCall(b, "get_type", "bm_int")
}

func BenchmarkGetReprInt(b *testing.B) {
	setup(b, "bm_int = 12345")
	benchCall(b, "get_repr", "bm_int")
}

// An expression always runs in a fork()ed copy.
func BenchmarkEvalExprIsolated(b *testing.B) {
	benchCall(b, "eval_expr", "1 + 1")
}

func BenchmarkEvalExprIsolated1GiB(b *testing.B) {
	// Touched, so that every page is really mapped in the session.
	setup(b, "bm_gib = bytearray(2**30)\nfor _i in range(0, 2**30, 4096): bm_gib[_i] = 1")
	defer setup(b, "del bm_gib")
	benchCall(b, "eval_expr", "1 + 1")
}

func BenchmarkGetReprList1e7(b *testing.B) {
	setup(b, "bm_list = list(range(10**7))")
	defer setup(b, "del bm_list")
	res, cerr := reg.call(context.Background(), "get_repr", json.RawMessage(exprArgs("bm_list")))
	if cerr != nil {
		b.Fatal(cerr)
	}
	benchCall(b, "get_repr", "bm_list")
	// After the loop: ResetTimer drops metrics reported before it.
	b.ReportMetric(float64(len(res)), "result-bytes")
}

func BenchmarkListGlobals10k(b *testing.B) {
	setup(b, "for _i in range(10000): globals()['bm_g%05d' % _i] = _i")
	defer setup(b, "for _i in range(10000): del globals()['bm_g%05d' % _i]")
	benchCall(b, "list_globals", "")
}

// The floor under every in-process call: one trip through pybridge.Call to a
// Python function that does nothing.
func BenchmarkBridgeFloor(b *testing.B) {
	setup(b, "pass")
	for b.Loop() {
		if _, err := interp.Call(context.Background(), pybridge.CallHelper, "_caps_test", "clear_last", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// numpy and pandas summaries (isolated: the values are not builtin): the
// cost must not grow with the data. 10**7 float64 values (80 MB) and a
// 10**6-row DataFrame of three columns.
const (
	bmArray = "bm_arr = np.arange(10**7, dtype=np.float64)"
	bmFrame = `bm_df = pd.DataFrame({"x": np.arange(10**6), "y": np.arange(10**6) * 0.5, "s": ["r%d" % i for i in range(10**6)]})`
)

func BenchmarkGetReprNumpy1e7(b *testing.B) {
	needScientific(b)
	setup(b, bmArray)
	defer setup(b, "del bm_arr")
	benchCall(b, "get_repr", "bm_arr")
}

func BenchmarkGetReprDataFrame1e6(b *testing.B) {
	needScientific(b)
	setup(b, bmFrame)
	defer setup(b, "del bm_df")
	benchCall(b, "get_repr", "bm_df")
}

// The same, answered in the session: numpy's repr of 10**7 values itself,
// and pandas' own repr of the frame, for comparison.
func BenchmarkReprNumpy1e7Itself(b *testing.B)     { benchReprItself(b, bmArray, "bm_arr") }
func BenchmarkReprDataFrame1e6Itself(b *testing.B) { benchReprItself(b, bmFrame, "bm_df") }

// benchReprItself times repr(name) in the session after running code,
// which binds name.
func benchReprItself(b *testing.B, code, name string) {
	needScientific(b)
	setup(b, code)
	defer setup(b, "del "+name)
	for b.Loop() {
		value(b, name)
	}
}

// BenchmarkHugeLastException: get_last_exception of an exception whose
// message would be a repr of five million numbers.
func BenchmarkHugeLastException(b *testing.B) {
	setLast(b, "raise ValueError(*range(5*10**6))")
	defer setup(b, "sys.last_type = sys.last_value = sys.last_traceback = None")
	benchCall(b, "get_last_exception", "")
}

// BenchmarkHugeArraySummary: get_repr of a 12-dimensional array of 10^12
// elements, which numpy's own repr would print in full under the session's
// print options.
func BenchmarkHugeArraySummary(b *testing.B) {
	needScientific(b)
	setup(b, "bm_12d = np.broadcast_to(np.float64(1), (10,) * 12)")
	defer setup(b, "del bm_12d")
	benchCall(b, "get_repr", "bm_12d")
}
