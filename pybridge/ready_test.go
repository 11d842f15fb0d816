//go:build cgo

package pybridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Tests of ready copies (PrepareIsolated): a fork()ed copy made while the
// session is idle answers the next isolated call.

const readyHelper = `
import __main__, threading

def value(name):
    return repr(getattr(__main__, name, "<unset>"))

def evaluate(expr):
    return repr(eval(expr, __main__.__dict__))

def start_thread(_):
    ev = threading.Event()
    __main__.rt_stop = ev
    t = threading.Thread(target=ev.wait, daemon=True)
    t.start()
    __main__.rt_thread = t
    return "started"
`

func loadReadyHelper(t testing.TB) {
	t.Helper()
	loadIsoHelper(t)
	if err := testInterp.LoadModule("_ready_test", readyHelper); err != nil {
		t.Fatal(err)
	}
}

// prepare asks for a ready copy and waits until it exists; it returns the
// copy's pid.
func prepare(t testing.TB) int {
	t.Helper()
	pid, err := prepareOn(testInterp)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func prepareOn(in *Interp) (int, error) {
	in.PrepareIsolated()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if in.IsolationStats().Ready {
			var pid int
			err := in.do(func() { pid = in.ready.pid }, true)
			return pid, err
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, fmt.Errorf("no ready copy within 10s: %+v", in.IsolationStats())
}

// readyPid is the ready copy's pid, 0 for none, read on the interpreter's
// thread.
func readyPid(t testing.TB) int {
	t.Helper()
	var pid int
	if err := testInterp.do(func() { pid = testInterp.ready.pid }, true); err != nil {
		t.Fatal(err)
	}
	return pid
}

// gone reports whether pid has exited (reaped, or a zombie nobody reaped).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if gone(pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("ready copy %d still alive", pid)
}

func push(t testing.TB, line string) {
	t.Helper()
	if _, err := testInterp.Push(line); err != nil {
		t.Fatal(err)
	}
}

func isoValue(t *testing.T, name string) string {
	t.Helper()
	out, err := isolatedCall("_ready_test", "value", name, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReadyCopyAnswers(t *testing.T) {
	loadReadyHelper(t)
	prepare(t)
	before := testInterp.IsolationStats()
	out, err := isolatedCall("_iso_test", "echo", "a\x00b\u00e9", 5*time.Second)
	if err != nil || out != "echo:a\x00b\u00e9" {
		t.Fatalf("got %q, %v", out, err)
	}
	after := testInterp.IsolationStats()
	if after.Used != before.Used+1 || after.Forked != before.Forked {
		t.Fatalf("the ready copy did not answer: before %+v after %+v", before, after)
	}
	if active, known := SeccompActive(); !known || !active {
		t.Errorf("seccomp active=%v known=%v through a ready copy", active, known)
	}
	// It was used up: the next call forks.
	if _, err := isolatedCall("_iso_test", "echo", "", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if s := testInterp.IsolationStats(); s.Forked != after.Forked+1 {
		t.Fatalf("second call: %+v", s)
	}
}

// The copy must be the session as it is at the call, not as it was when
// the copy was made.
func TestReadyCopySeesLatestState(t *testing.T) {
	loadReadyHelper(t)
	push(t, "rc_v = 1")
	prepare(t)
	push(t, "rc_v = 2")
	before := testInterp.IsolationStats()
	if got := isoValue(t, "rc_v"); got != "2" {
		t.Fatalf("isolated call saw rc_v = %s, want 2", got)
	}
	after := testInterp.IsolationStats()
	if after.Discarded != before.Discarded || after.Forked != before.Forked+1 {
		// The statement discarded the copy before running.
		t.Fatalf("want an on-demand fork: before %+v after %+v", before, after)
	}

	// A copy made after the statement answers, and sees it too.
	prepare(t)
	if got := isoValue(t, "rc_v"); got != "2" {
		t.Fatalf("ready copy saw rc_v = %s, want 2", got)
	}
	if s := testInterp.IsolationStats(); s.Used != after.Used+1 {
		t.Fatalf("ready copy not used: %+v", s)
	}
}

// Every way to run code in the session discards the copy; read-only
// helpers and isolated calls do not.
func TestReadyCopyDiscardedByJobs(t *testing.T) {
	loadReadyHelper(t)
	for name, run := range map[string]func() error{
		"Push":            func() error { _, err := testInterp.Push("rd_a = 1"); return err },
		"RunBlock":        func() error { _, err := testInterp.RunBlock("rd_a = 2\n"); return err },
		"RunCommand":      func() error { _, err := testInterp.RunCommand("rd_a = 3"); return err },
		"Call":            func() error { _, err := helperCall("_iso_test", "echo", ""); return err },
		"LoadModule":      func() error { return testInterp.LoadModule("_rd_mod", "x = 1\n") },
		"Do":              func() error { return testInterp.job(func() {}) },
		"ResetBlock":      testInterp.ResetBlock,
		"DiscardIsolated": func() error { testInterp.DiscardIsolated(); return nil },
	} {
		pid := prepare(t)
		if err := run(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p := readyPid(t); p != 0 {
			t.Errorf("%s kept the ready copy", name)
		}
		waitGone(t, pid)
	}
	pid := prepare(t)
	if _, err := testInterp.RecentContext(); err != nil {
		t.Fatal(err)
	}
	if _, err := readOnlyCall("_iso_test", "echo", ""); err != nil {
		t.Fatal(err)
	}
	if p := readyPid(t); p != pid {
		t.Fatalf("a read-only helper discarded the ready copy (%d, now %d)", pid, p)
	}
}

// A job that comes before the interpreter has been idle cancels the
// request: no fork follows a py> statement.
func TestReadyCopyRequestCanceledByJob(t *testing.T) {
	loadReadyHelper(t)
	before := testInterp.IsolationStats().Prepared
	// The request and the statement both wait behind a job, so that the
	// statement comes right after the interpreter was busy.
	release := make(chan struct{})
	busy := make(chan error)
	go func() { busy <- testInterp.job(func() { <-release }) }()
	time.Sleep(10 * time.Millisecond)
	testInterp.PrepareIsolated()
	pushed := make(chan error)
	go func() { _, err := testInterp.Push("rd_b = 1"); pushed <- err }()
	time.Sleep(10 * time.Millisecond)
	close(release)
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	if err := <-pushed; err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * readyIdle)
	if n := testInterp.IsolationStats().Prepared; n != before {
		t.Fatalf("a copy was forked after a statement canceled the request")
	}
}

func TestReadyCopyExitsAtEOF(t *testing.T) {
	loadReadyHelper(t)
	prepare(t)
	// Only the socket is closed: the waiting copy must exit by itself.
	var rd readyCopy
	if err := testInterp.do(func() { rd = testInterp.ready; testInterp.ready = readyCopy{}; testInterp.stats.waiting.Store(false) }, true); err != nil {
		t.Fatal(err)
	}
	unix.Close(rd.fd)
	var ws unix.WaitStatus
	if _, err := unix.Wait4(rd.pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("copy ended with %v, want exit 0 at end of file", ws)
	}
}

// The waiting copy is already confined: seccomp on, only the socket and
// /dev/null open.
func TestReadyCopyGuardedWhileWaiting(t *testing.T) {
	loadReadyHelper(t)
	pid := prepare(t)
	var status string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			t.Fatal(err)
		}
		status = string(b)
		if strings.Contains(status, "\nSeccomp:\t2\n") {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !strings.Contains(status, "\nSeccomp:\t2\n") || !strings.Contains(status, "\nNoNewPrivs:\t1\n") {
		t.Fatalf("the waiting copy has no seccomp filter:\n%s", status)
	}
	if os.Geteuid() == 0 { // a non-dumpable process's fds are root's to list
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			t.Fatal(err)
		}
		var fds []string
		for _, e := range ents {
			fds = append(fds, e.Name())
		}
		if strings.Join(fds, ",") != "0,1,2,3" {
			t.Fatalf("the waiting copy holds descriptors %v", fds)
		}
	}
}

func TestReadyCopyIsolation(t *testing.T) {
	loadReadyHelper(t)
	used := func() int64 { return testInterp.IsolationStats().Used }

	prepare(t)
	u := used()
	out, err := isolatedCall("_iso_test", "mutate", "x", 5*time.Second)
	if err != nil || out != "3" || used() != u+1 {
		t.Fatalf("in the copy: %q, %v (used %d -> %d)", out, err, u, used())
	}
	if s, err := helperCall("_ready_test", "value", "iso_list"); err != nil || s != "[1, 2]" {
		t.Fatalf("session changed: %s %v", s, err)
	}
	if s, err := helperCall("_ready_test", "value", "iso_new"); err != nil || s != "'<unset>'" {
		t.Fatalf("session changed: %s %v", s, err)
	}

	path := t.TempDir() + "/x"
	prepare(t)
	u = used()
	out, err = isolatedCall("_iso_test", "try_open", path, 5*time.Second)
	if err != nil || !strings.HasPrefix(out, "Refused: open(") || used() != u+1 {
		t.Fatalf("open for writing: %q, %v", out, err)
	}
	prepare(t)
	out, err = isolatedCall("_iso_test", "unaudited", path, 5*time.Second)
	if err != nil || out != "fork_exec:PermissionError,dup:PermissionError" {
		t.Fatalf("got %q, %v", out, err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("the copy created a file")
	}
}

func TestReadyCopyDeadlinesAndCrashes(t *testing.T) {
	loadReadyHelper(t)
	for _, fn := range []string{"spin", "csum", "sleep"} {
		prepare(t)
		u := testInterp.IsolationStats().Used
		start := time.Now()
		_, err := isolatedCall("_iso_test", fn, "", 300*time.Millisecond)
		var pe *Error
		if !errors.As(err, &pe) || pe.Type != ErrTypeTimeout {
			t.Errorf("%s: want a Timeout error, got %v", fn, err)
		}
		if el := time.Since(start); el > 20*time.Second { // a hang, not a speed
			t.Errorf("%s: took %v", fn, el)
		}
		if testInterp.IsolationStats().Used != u+1 {
			t.Errorf("%s: ready copy not used", fn)
		}
	}
	for fn, want := range map[string]string{"exit3": "status 3", "segv": "signal 11"} {
		prepare(t)
		_, err := isolatedCall("_iso_test", fn, "", 5*time.Second)
		var pe *Error
		if !errors.As(err, &pe) || pe.Type != ErrTypeCrashed || !strings.Contains(pe.Message, want) {
			t.Errorf("%s: want Crashed with %q, got %v", fn, want, err)
		}
	}
	// Canceled through the context.
	prepare(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := testInterp.Call(ctx, CallIsolated, "_iso_test", "sleep", "")
	var pe *Error
	if !errors.As(err, &pe) || pe.Type != ErrTypeCanceled {
		t.Errorf("want Canceled, got %v", err)
	}
	// A deadline beyond the ready copy's CPU backstop forks on demand.
	prepare(t)
	before := testInterp.IsolationStats()
	if _, err := isolatedCall("_iso_test", "echo", "", time.Minute); err != nil {
		t.Fatal(err)
	}
	if s := testInterp.IsolationStats(); s.Forked != before.Forked+1 || s.Discarded != before.Discarded+1 {
		t.Errorf("long deadline: before %+v after %+v", before, s)
	}
	if out, err := helperCall("_iso_test", "echo", "ok"); err != nil || out != "echo:ok" {
		t.Fatal(out, err)
	}
}

// With another Python thread, the session can change between jobs: no
// copy is made ahead, and one made before the thread existed is not used.
func TestReadyCopyNotWithThreads(t *testing.T) {
	loadReadyHelper(t)
	// A thread started without discarding the copy (not something the
	// public API allows; a C library's thread could do it).
	pid := prepare(t)
	var err error
	if derr := testInterp.do(func() { _, err = testInterp.call("_ready_test", "start_thread", "", callHelper) }, true); derr != nil || err != nil {
		t.Fatal(derr, err)
	}
	defer push(t, "rt_stop.set(); rt_thread.join()")
	before := testInterp.IsolationStats()
	if _, err := isolatedCall("_iso_test", "echo", "", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if s := testInterp.IsolationStats(); s.Used != before.Used || s.Forked != before.Forked+1 {
		t.Fatalf("a ready copy answered while another thread ran: %+v", s)
	}
	waitGone(t, pid)

	before = testInterp.IsolationStats()
	testInterp.PrepareIsolated()
	for deadline := time.Now().Add(5 * time.Second); testInterp.IsolationStats().Skipped == before.Skipped; {
		if time.Now().After(deadline) {
			t.Fatalf("request not refused: %+v", testInterp.IsolationStats())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if s := testInterp.IsolationStats(); s.Prepared != before.Prepared {
		t.Fatalf("a copy was made while another thread exists: %+v", s)
	}
}

const readyChildEnv = "PYBRIDGE_READY_CHILD_TEST"

// readyChildMain runs in a child test process: it makes a ready copy,
// prints its pid and waits to be killed.
func readyChildMain() {
	in, err := Start(Config{})
	if err != nil {
		panic(err)
	}
	pid, err := prepareOn(in)
	if err != nil {
		panic(err)
	}
	fmt.Println(pid)
	time.Sleep(time.Minute)
	os.Exit(3)
}

// The copy dies with pyaichat, even when pyaichat is killed.
func TestReadyCopyDiesWithParent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), readyChildEnv+"=1")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var pid int
	if _, err := fmt.Fscan(stdout, &pid); err != nil || pid <= 0 {
		t.Fatalf("no pid from the child process: %v", err)
	}
	if gone(pid) {
		t.Fatal("the ready copy is not running")
	}
	cmd.Process.Kill()
	cmd.Wait()
	waitGone(t, pid)
}

// At the call the copy gets the CPU backstop of an on-demand copy
// (timeout + 2 s), lowered from the one it waited with.
func TestReadyCopyCPULimit(t *testing.T) {
	loadReadyHelper(t)
	pid := prepare(t)
	limit := func() string {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Max cpu time") {
				return strings.Join(strings.Fields(l)[3:5], " ")
			}
		}
		return ""
	}
	// The copy sets its limits right after the fork.
	want := strconv.Itoa(readyCPUBackstop) + " " + strconv.Itoa(readyCPUBackstop)
	got := limit()
	for deadline := time.Now().Add(5 * time.Second); got != want && time.Now().Before(deadline); got = limit() {
		time.Sleep(2 * time.Millisecond)
	}
	if got != want {
		t.Fatalf("waiting copy: cpu limit %q, want %q", got, want)
	}
	done := make(chan error, 1)
	go func() {
		_, err := isolatedCall("_iso_test", "sleep", "", 1500*time.Millisecond)
		done <- err
	}()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if got = limit(); got == "3 3" {
			break
		}
	}
	if got != "3 3" {
		t.Errorf("copy at the call: cpu limit %q, want 3 3", got)
	}
	<-done
}

// BenchmarkIsolatedEval1GiB is an isolated evaluation in a session holding
// 1 GiB (touched, so every page is mapped): "fork" forks a copy for each
// call, "ready" finds a ready copy made beforehand (not timed).
//
//	go test ./pybridge -run '^$' -bench IsolatedEval -benchtime 30x
func BenchmarkIsolatedEval1GiB(b *testing.B) {
	loadReadyHelper(b)
	if _, err := testInterp.RunCommand("bm_gib = bytearray(2**30)\nfor _i in range(0, 2**30, 4096): bm_gib[_i] = 1\n"); err != nil {
		b.Fatal(err)
	}
	defer push(b, "del bm_gib")
	benchIsolatedEval(b)
}

// BenchmarkIsolatedEvalSmall is the same in a small session.
func BenchmarkIsolatedEvalSmall(b *testing.B) {
	loadReadyHelper(b)
	benchIsolatedEval(b)
}

func benchIsolatedEval(b *testing.B) {
	call := func(b *testing.B) {
		out, err := isolatedCall("_ready_test", "evaluate", "1 + 1", 5*time.Second)
		if err != nil || out != "2" {
			b.Fatal(out, err)
		}
	}
	b.Run("fork", func(b *testing.B) {
		before := testInterp.IsolationStats()
		for range b.N {
			call(b)
		}
		if s := testInterp.IsolationStats(); s.Forked-before.Forked != int64(b.N) {
			b.Fatalf("not all calls forked: %+v", s)
		}
	})
	b.Run("ready", func(b *testing.B) {
		before := testInterp.IsolationStats()
		for range b.N {
			b.StopTimer()
			prepare(b)
			// Time for the copy to finish setting up its guards (and the
			// last one to be torn down), as it has when a model's reply
			// separates two calls.
			time.Sleep(50 * time.Millisecond)
			b.StartTimer()
			call(b)
		}
		if s := testInterp.IsolationStats(); s.Used-before.Used != int64(b.N) {
			b.Fatalf("not all calls used a ready copy: %+v", s)
		}
	})
}
