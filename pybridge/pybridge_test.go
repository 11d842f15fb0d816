//go:build cgo

package pybridge

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/repl/interp"
)

var testInterp *Interp

func TestMain(m *testing.M) {
	if os.Getenv(readyChildEnv) != "" {
		readyChildMain()
	}
	in, err := Start(Config{})
	if err != nil {
		panic(err)
	}
	testInterp = in
	code := m.Run()
	in.Close(5e9)
	os.Exit(code)
}

func TestCallHelperRoundTrip(t *testing.T) {
	out, err := testInterp.Push("x = 6 * 7")
	if err != nil || out.More || out.Exit {
		t.Fatalf("Push: %+v %v", out, err)
	}
	out, err = testInterp.Push("if x:")
	if err != nil || !out.More {
		t.Fatalf("Push(if): %+v %v", out, err)
	}
	if err := testInterp.ResetBlock(); err != nil {
		t.Fatal(err)
	}
}

func TestRecentContextRecordsValuesAndErrors(t *testing.T) {
	for _, line := range []string{"rc_x = [1, 2]", "rc_x", "1/0"} {
		if _, err := testInterp.Push(line); err != nil {
			t.Fatal(err)
		}
	}
	got, err := testInterp.RecentContext()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">>> rc_x = [1, 2]", "-> [1, 2]", ">>> 1/0", "raised ZeroDivisionError: division by zero"} {
		if !strings.Contains(got, want) {
			t.Errorf("RecentContext() = %q, missing %q", got, want)
		}
	}
}

// The automatic context shows results and errors without running the
// user's code again: python3 calls __repr__ (and an exception's __str__)
// once, to show the value, and so must pyaichat.
func TestRecentContextRunsNoUserCode(t *testing.T) {
	for _, line := range []string{
		"rn_calls = []",
		"class RnA:\n    def __repr__(self):\n        rn_calls.append('repr')\n        return 'RnA()'\n",
		"class RnE(Exception):\n    def __str__(self):\n        rn_calls.append('str')\n        return 'custom'\n",
		"[RnA(), 1, 'two', {3: (4,)}, {5}, None]",
		"rn_x = 1",
		"raise RnE('arg')",
		"{'k': RnA()}",
		"raise KeyError('plain')",
	} {
		if _, err := testInterp.Push(line); err != nil {
			t.Fatal(err)
		}
	}
	got, err := testInterp.RecentContext()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"-> [<__main__.RnA object>, 1, 'two', {3: (4,)}, {5}, None]",
		">>> rn_x = 1\n>>> raise RnE('arg')\n    raised RnE\n",
		"-> {'k': <__main__.RnA object>}",
		"raised KeyError: 'plain'",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("RecentContext() = %q, missing %q", got, want)
		}
	}
	if _, err := testInterp.Push("rn_calls"); err != nil {
		t.Fatal(err)
	}
	got, err = testInterp.RecentContext()
	if err != nil {
		t.Fatal(err)
	}
	if want := "-> ['repr', 'str', 'repr']"; !strings.Contains(got, want) {
		t.Errorf("the user's __repr__/__str__ ran %s, want once each time python3 shows a value (%s)", got[strings.LastIndex(got, ">>>"):], want)
	}
}

// BenchmarkPush is the interpreter side of a py> round trip: one line in,
// compiled, run and displayed (output goes to /dev/null).
func BenchmarkPush(b *testing.B) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	if _, err := testInterp.Push("import sys, os; _bench_out = sys.stdout; sys.stdout = open(os.devnull, 'w')"); err != nil {
		b.Fatal(err)
	}
	defer testInterp.Push("sys.stdout = _bench_out")
	b.ResetTimer()
	for range b.N {
		if _, err := testInterp.Push("1+1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallOverhead is the cost of one job on the interpreter thread
// plus one cgo crossing into a trivial helper.
func BenchmarkCallOverhead(b *testing.B) {
	for range b.N {
		if err := testInterp.ResetBlock(); err != nil {
			b.Fatal(err)
		}
	}
}

// A helper module, and what it imports while loading, stay out of the
// sys.modules that user code sees; user code that edits sys.modules cannot
// unload it; the user importing the same module gets one of their own.
func TestHelpersStayOutOfSysModules(t *testing.T) {
	if _, err := testInterp.Push("import sys; hm_before = sorted(sys.modules)"); err != nil {
		t.Fatal(err)
	}
	const helper = `
import colorsys
import sys

def check(_):
    import __main__
    return repr((
        "colorsys" in __main__.hm_before,
        sorted(sys.modules) == __main__.hm_before,
        colorsys.rgb_to_hsv(1, 0, 0),
    ))
`
	if err := testInterp.LoadModule("_hm_test", helper); err != nil {
		t.Fatal(err)
	}
	check := func(want string) {
		t.Helper()
		got, err := helperCall("_hm_test", "check", "")
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("(colorsys imported before, sys.modules unchanged, helper works) = %s, want %s", got, want)
		}
	}
	check("(False, True, (0.0, 1.0, 1))")

	for _, line := range []string{
		"for hm_k in [k for k in sys.modules if k.startswith(('_pyaichat', '_hm'))]: del sys.modules[hm_k]",
		"",
		"import colorsys as hm_colorsys",
		"hm_before = sorted(sys.modules)",
	} {
		if _, err := testInterp.Push(line); err != nil {
			t.Fatal(err)
		}
	}
	check("(True, True, (0.0, 1.0, 1))")
}

// rssAnon is this process's resident anonymous memory, in bytes.
func rssAnon(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no RssAnon in /proc/self/status")
	return 0
}

// Free C heap pages that a pinned block keeps below the heap's top stay
// resident until TrimCHeap returns them.
func TestTrimCHeapReturnsFreePages(t *testing.T) {
	for _, line := range []string{
		// 32 MB of 1000-byte objects (malloc's, not pymalloc's: over 512
		// bytes), one more kept above them, then the 32 MB freed.
		"tc_blocks = [bytes(1000) for _ in range(32000)]",
		"tc_pin = bytes(1000)",
		"del tc_blocks",
	} {
		if _, err := testInterp.Push(line); err != nil {
			t.Fatal(err)
		}
	}
	before := rssAnon(t)
	TrimCHeap()
	if freed := before - rssAnon(t); freed < 16<<20 {
		t.Errorf("TrimCHeap returned %d KiB, want at least 16 MiB of the 32 MB freed", freed>>10)
	}
}

// Each input's outcome names the exception it raised, or its
// SyntaxError, for the session log.
func TestPushReportsExceptionType(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"pe_x = 1", ""},
		{"1/0", "ZeroDivisionError"},
		{"pe_x +", "SyntaxError"},
		{"class PeErr(Exception): pass", ""},
		{"", ""},
		{"raise PeErr()", "PeErr"},
		{"pe_x", ""},
	} {
		out, err := testInterp.Push(c.line)
		if err != nil {
			t.Fatal(err)
		}
		if out.Error != c.want {
			t.Errorf("Push(%q).Error = %q, want %q", c.line, out.Error, c.want)
		}
	}
}

// Output is captured only on a terminal (sys.stdout's Tracked layer):
// elsewhere CaptureOutput says why, and nothing is kept.
func TestCaptureOutputNeedsATerminal(t *testing.T) {
	err := testInterp.CaptureOutput(1 << 10)
	if err == nil || !strings.Contains(err.Error(), "stdout is not a terminal") {
		t.Fatalf("CaptureOutput off a terminal: %v", err)
	}
	if _, err := testInterp.Push(`print("not kept")`); err != nil {
		t.Fatal(err)
	}
	if parts, written := testInterp.TakeOutput(); parts != nil || written != 0 {
		t.Errorf("kept %q (%d bytes written)", parts, written)
	}
}

// The capture copies a write before the terminal has it: a thread's output
// that the user sees and answers belongs to the input before the answer,
// even when the thread gets the GIL back only after the next input began.
// A write's unwritten bytes, written again, are not copied twice.
func TestCaptureCopiesAWriteBeforeTheTerminalHasIt(t *testing.T) {
	startCopy(1 << 10)
	defer testInterp.StopCapture()
	testInterp.TakeOutput()
	if out, err := testInterp.RunBlock(`
import threading, _pyaichat
class SlowTerminal:
    """A raw stream whose write waits to be let go, GIL released, and
    whose next write takes 2 bytes, then 0 (None), then all."""
    def __init__(self):
        self.entered, self.go, self.counts = threading.Event(), threading.Event(), []
    def write(self, b):
        self.entered.set()
        self.go.wait()
        return self.counts.pop(0) if self.counts else len(b)
cap_raw = SlowTerminal()
cap_out = _pyaichat.Tracked(cap_raw, 1)
cap_thread = threading.Thread(target=cap_out.write, args=(b"late\n",))
cap_thread.start()
_ = cap_raw.entered.wait()
`); err != nil || out.Error != "" {
		t.Fatalf("setting up the slow terminal: %+v %v", out, err)
	}
	during, _ := testInterp.TakeOutput()
	if out, err := testInterp.RunBlock(`
cap_raw.go.set()
cap_thread.join()
cap_raw.counts = [2, None]
cap_written = [cap_out.write(b"hello\n"), cap_out.write(b"llo\n"), cap_out.write(b"llo\n")]
`); err != nil || out.Error != "" {
		t.Fatalf("writing: %+v %v", out, err)
	}
	if want := []OutputPart{{Kind: "stdout", Text: "late\n"}}; !reflect.DeepEqual(during, want) {
		t.Errorf("taken while the write waited: %q, want %q", during, want)
	}
	if after, _ := testInterp.TakeOutput(); !reflect.DeepEqual(after, []OutputPart{{Kind: "stdout", Text: "hello\n"}}) {
		t.Errorf("a write taken in three parts (2 bytes, none, the rest) was copied as %q", after)
	}
}

// One REPL step answers what the prompt needs in one outcome: more input
// wanted, SystemExit and its status (the process goes on: the caller
// decides). (What output left on the line is tracked only on a terminal:
// the PTY tests check it.)
func TestStepOutcome(t *testing.T) {
	for _, c := range []struct {
		line string
		want interp.Outcome
	}{
		{"if True:", interp.Outcome{More: true}},
		{"    so_x = 5", interp.Outcome{More: true}},
		{"", interp.Outcome{}},
		{"raise SystemExit(so_x + 2)", interp.Outcome{Exit: true, Status: 7}},
		{"raise SystemExit('bye')", interp.Outcome{Exit: true, Status: 1}},
		{"print('so_line')", interp.Outcome{}},
	} {
		out, err := testInterp.Push(c.line)
		if err != nil {
			t.Fatal(err)
		}
		if out != c.want {
			t.Errorf("Push(%q) = %+v, want %+v", c.line, out, c.want)
		}
	}
}
