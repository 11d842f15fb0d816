package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// versusPython is what the benchmarks compare: python3 -q -i and pyaichat.
func versusPython() []replProg {
	return []replProg{
		{name: "python3", argv: []string{pythonOracle, "-q", "-i"}, prompt: ">>> "},
		{name: "pyaichat", argv: []string{binary}, prompt: "py> "},
	}
}

// BenchmarkVersusPython measures pyaichat beside Debian's `python3 -q -i`
// (same libpython) in one run, each under a fresh PTY
// (docs/performance.md): time to the first prompt, resident memory (VmRSS)
// after 50 lines, and the round trip of `1+1` (median of the 50 lines of a
// run). Memory is read again after the REPL sat idle at the prompt for
// idleSettle, as a user leaves it, with the anonymous (private) part of it
// beside the total. Every iteration runs both programs once, alternating which goes
// first; the figures are medians over the b.N iterations. Run it with
//
//	go test ./e2e -run '^$' -bench VersusPython -benchtime 7x
//
// (make bench). There is no timing assertion: the machine is shared.
func BenchmarkVersusPython(b *testing.B) {
	results := alternateREPLs(b, versusPython())
	med := func(name string, f func(replRun) float64) float64 { return medianOf(results[name], f) }
	startup := func(r replRun) float64 { return float64(r.startup) / 1e6 }
	rss := func(r replRun) float64 { return r.rssKiB / 1024 }
	idle := func(r replRun) float64 { return r.idleRSSKiB / 1024 }
	idleAnon := func(r replRun) float64 { return r.idleAnonKiB / 1024 }
	rtt := func(r replRun) float64 { return float64(r.rtt) / 1e6 }
	pyS, paS := med("python3", startup), med("pyaichat", startup)
	pyM, paM := med("python3", rss), med("pyaichat", rss)
	pyR, paR := med("python3", rtt), med("pyaichat", rtt)
	pyI, paI := med("python3", idle), med("pyaichat", idle)
	pyA, paA := med("python3", idleAnon), med("pyaichat", idleAnon)
	b.ReportMetric(0, "ns/op") // the per-op time means nothing here
	b.ReportMetric(paS, "pyaichat-prompt-ms")
	b.ReportMetric(pyS, "python3-prompt-ms")
	b.ReportMetric(paS/pyS, "prompt-ratio")
	b.ReportMetric(paM, "pyaichat-rss-MiB")
	b.ReportMetric(pyM, "python3-rss-MiB")
	b.ReportMetric(paM/pyM, "rss-ratio")
	b.ReportMetric(paI, "pyaichat-idle-rss-MiB")
	b.ReportMetric(pyI, "python3-idle-rss-MiB")
	b.ReportMetric(paR, "pyaichat-1+1-ms")
	b.ReportMetric(pyR, "python3-1+1-ms")
	var sb strings.Builder
	fmt.Fprintf(&sb, "medians of %d runs each (PTY 24x80, TERM=xterm, fresh HOME):\n", b.N)
	fmt.Fprintf(&sb, "  %-34s %10s %10s %7s  %s\n", "figure", "python3", "pyaichat", "ratio", "target")
	fmt.Fprintf(&sb, "  %-34s %10.1f %10.1f %6.2fx  %s\n", "time to first prompt (ms)", pyS, paS, paS/pyS, "<= 1.3x")
	fmt.Fprintf(&sb, "  %-34s %10.1f %10.1f %6.2fx  %s\n", "VmRSS after 50 lines (MiB)", pyM, paM, paM/pyM, "<= 1.5x")
	fmt.Fprintf(&sb, "  %-34s %10.1f %10.1f %6.2fx  %s\n", fmt.Sprintf("  then idle %s: VmRSS", idleSettle), pyI, paI, paI/pyI, "")
	fmt.Fprintf(&sb, "  %-34s %10.1f %10.1f %6.2fx  %s\n", "               of which RssAnon", pyA, paA, paA/pyA, "")
	fmt.Fprintf(&sb, "  %-34s %10.3f %10.3f %6.2fx  %s\n", "round trip of 1+1 (ms)", pyR, paR, paR/pyR, "< 0.5 ms")
	fmt.Fprintf(&sb, "  load average: %s", loadavg())
	if b.N > 1 { // the N=1 warm-up round the testing package runs first says nothing
		b.Log("\n" + sb.String())
	}
}

// alternateREPLs runs measureREPL (50 lines) b.N times for each program,
// each going first in turn, and returns the runs by name.
func alternateREPLs(b *testing.B, progs []replProg) map[string][]replRun {
	home := b.TempDir()
	results := map[string][]replRun{}
	for i := 0; i < b.N; i++ {
		// Each takes its turn first.
		k := i % len(progs)
		order := append(append([]replProg(nil), progs[k:]...), progs[:k]...)
		for _, p := range order {
			r, err := measureREPL(p, home, 50)
			if err != nil {
				b.Fatalf("%s, run %d: %v", p.name, i+1, err)
			}
			results[p.name] = append(results[p.name], r)
		}
	}
	return results
}

// medianOf is the median of one figure over runs.
func medianOf(runs []replRun, f func(replRun) float64) float64 {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = f(r)
	}
	return median(xs)
}

type replProg struct {
	name   string
	argv   []string
	prompt string
}

type replRun struct {
	startup time.Duration // fork to the first prompt
	rtt     time.Duration // median round trip of one line
	rssKiB  float64       // VmRSS after the lines
	// VmRSS, RssAnon and Private_Dirty after idleSettle more at the prompt
	idleRSSKiB, idleAnonKiB, idlePrivateKiB float64
}

// idleSettle is how long a run leaves the REPL at its prompt before the
// idle memory reading.
const idleSettle = 1500 * time.Millisecond

// ptyReader reads a child's PTY output on the benchmark's own goroutine,
// so that the harness adds no hand-off of its own to a round trip.
type ptyReader struct {
	f   *os.File
	buf []byte
}

// readWithin reads what is there within d, or fails with
// os.ErrDeadlineExceeded. It polls rather than setting a read deadline:
// pty.StartWithSize takes the descriptor (File.Fd) to size the window,
// which makes it blocking, and a blocking file ignores deadlines.
func (r *ptyReader) readWithin(p []byte, d time.Duration) (int, error) {
	fds := []unix.PollFd{{Fd: int32(r.f.Fd()), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(max(d, 0)/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("poll: %w", err)
		}
		if n == 0 {
			return 0, os.ErrDeadlineExceeded
		}
		return r.f.Read(p)
	}
}

// waitFor reads until first, then (if not "") then after it, appear in the
// output after offset from; it returns the offset after the match.
func (r *ptyReader) waitFor(from int, first, then string, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	p := make([]byte, 32<<10)
	for {
		out := r.buf[from:]
		if i := bytes.Index(out, []byte(first)); i >= 0 {
			end := i + len(first)
			if then == "" {
				return from + end, nil
			}
			if j := bytes.Index(out[end:], []byte(then)); j >= 0 {
				return from + end + j + len(then), nil
			}
		}
		n, err := r.readWithin(p, time.Until(deadline))
		r.buf = append(r.buf, p[:n]...)
		if err != nil {
			tail := string(r.buf[max(0, len(r.buf)-300):])
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return 0, fmt.Errorf("timed out after %v waiting for %q then %q; output ends %q", timeout, first, then, tail)
			}
			return 0, fmt.Errorf("waiting for %q then %q: %w; output ends %q", first, then, err, tail)
		}
	}
}

func (r *ptyReader) len() int { return len(r.buf) }

// measureREPL starts p on a PTY, times the first prompt, types `1+1` lines
// times, reads VmRSS and leaves with Ctrl-D.
func measureREPL(p replProg, home string, lines int) (replRun, error) {
	var res replRun
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Env = testEnv(home, "xterm")
	cmd.Dir = home
	start := time.Now()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		return res, err
	}
	defer f.Close()
	defer func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	r := &ptyReader{f: f}
	if _, err := r.waitFor(0, p.prompt, "", 30*time.Second); err != nil {
		return res, fmt.Errorf("first prompt: %w", err)
	}
	res.startup = time.Since(start)
	var rtts []float64
	for i := 0; i < lines; i++ {
		off := r.len()
		t0 := time.Now()
		if _, err := f.WriteString("1+1\r"); err != nil {
			return res, err
		}
		if _, err := r.waitFor(off, "2\r\n", p.prompt, 10*time.Second); err != nil {
			return res, fmt.Errorf("line %d: %w", i+1, err)
		}
		rtts = append(rtts, float64(time.Since(t0)))
	}
	res.rtt = time.Duration(median(rtts))
	if res.rssKiB, err = procStatus(cmd.Process.Pid, "VmRSS"); err != nil {
		return res, err
	}
	time.Sleep(idleSettle)
	if res.idleRSSKiB, err = procStatus(cmd.Process.Pid, "VmRSS"); err != nil {
		return res, err
	}
	if res.idleAnonKiB, err = procStatus(cmd.Process.Pid, "RssAnon"); err != nil {
		return res, err
	}
	if res.idlePrivateKiB, err = privateDirty(cmd.Process.Pid); err != nil {
		return res, err
	}
	if _, err := f.WriteString("\x04"); err != nil {
		return res, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return res, fmt.Errorf("exit after Ctrl-D: %w", err)
		}
	case <-time.After(10 * time.Second):
		return res, fmt.Errorf("no exit 10s after Ctrl-D")
	}
	return res, nil
}

// procStatus reads one figure in KiB, such as VmRSS, from /proc/PID/status.
func procStatus(pid int, field string) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.ParseFloat(f[0], 64)
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// privateDirty is the process's private, written memory in KiB
// (Private_Dirty in /proc/PID/smaps_rollup): what it costs the machine
// beyond the clean file pages (code) that the kernel can drop and share.
func privateDirty(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Private_Dirty:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return strconv.ParseFloat(f[0], 64)
			}
		}
	}
	return 0, fmt.Errorf("no Private_Dirty in /proc/%d/smaps_rollup", pid)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// BenchmarkPrintVersusPython times printing 200,000 lines of 67 characters
// at each REPL's prompt, the PTY read as fast as it comes, and reports the
// medians of b.N runs each (`make bench-repl`).
func BenchmarkPrintVersusPython(b *testing.B) {
	home := b.TempDir()
	progs := versusPython()
	times := map[string][]float64{}
	for i := 0; i < b.N; i++ {
		for _, p := range progs {
			d, err := measurePrint(p, home)
			if err != nil {
				b.Fatalf("%s, run %d: %v", p.name, i+1, err)
			}
			times[p.name] = append(times[p.name], d.Seconds())
		}
	}
	py, pa := median(times["python3"]), median(times["pyaichat"])
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(py, "python3-print-s")
	b.ReportMetric(pa, "pyaichat-print-s")
	b.ReportMetric(pa/py, "print-ratio")
}

// measurePrint starts p on a PTY and times a loop printing 200,000 lines,
// from sending it to reading its last output.
func measurePrint(p replProg, home string) (time.Duration, error) {
	f, r, stop, err := spawnREPL(p, home)
	if err != nil {
		return 0, err
	}
	defer stop()
	const done = "printed-all" // the loop's last line, not in its echo
	start := time.Now()
	if _, err := f.WriteString("for i in range(200000): print(i, 'x' * 60)\r\rprint('printed' + '-all')\r"); err != nil {
		return 0, err
	}
	deadline := time.Now().Add(60 * time.Second)
	var tail []byte
	buf := make([]byte, 64<<10)
	for !bytes.Contains(tail, []byte(done)) {
		n, err := r.readWithin(buf, time.Until(deadline))
		if err != nil {
			return 0, fmt.Errorf("reading the output: %w", err)
		}
		tail = append(tail[max(0, len(tail)-len(done)):], buf[:n]...)
	}
	return time.Since(start), nil
}

// BenchmarkLogCost is what the session log adds to a py> line's round
// trip: pyaichat as users run it (each input logged), with --log-output
// (each input's output kept too) and with --no-log, alternating which
// goes first, medians of the runs' medians. make bench-repl runs it, or
//
//	go test ./e2e -run '^$' -bench LogCost -benchtime 7x
func BenchmarkLogCost(b *testing.B) {
	progs := []replProg{
		{name: "logged", argv: []string{binary}, prompt: "py> "},
		{name: "output", argv: []string{binary, "--log-output"}, prompt: "py> "},
		{name: "no-log", argv: []string{binary, "--no-log"}, prompt: "py> "},
	}
	results := alternateREPLs(b, progs)
	rtt := func(r replRun) float64 { return float64(r.rtt) / 1e6 }
	logged, output, plain := medianOf(results["logged"], rtt), medianOf(results["output"], rtt), medianOf(results["no-log"], rtt)
	// Printing 200,000 lines in one input: --log-output copies the first
	// 68 KiB of it and counts the rest.
	prints := map[string][]float64{}
	home := b.TempDir()
	for i := 0; i < b.N; i++ {
		for _, p := range progs {
			d, err := measurePrint(p, home)
			if err != nil {
				b.Fatalf("%s, run %d: %v", p.name, i+1, err)
			}
			prints[p.name] = append(prints[p.name], d.Seconds())
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(logged, "logged-1+1-ms")
	b.ReportMetric(output, "log-output-1+1-ms")
	b.ReportMetric(plain, "no-log-1+1-ms")
	b.ReportMetric(median(prints["output"]), "log-output-print-s")
	b.ReportMetric(median(prints["no-log"]), "no-log-print-s")
	if b.N > 1 {
		b.Logf("printing 200,000 lines, medians of %d runs: logged %.3f s, --log-output %.3f s, --no-log %.3f s", b.N, median(prints["logged"]), median(prints["output"]), median(prints["no-log"]))
		b.Logf("round trip of 1+1, medians of %d runs: logged %.3f ms, --log-output %.3f ms, --no-log %.3f ms (load average %s)", b.N, logged, output, plain, loadavg())
	}
}
