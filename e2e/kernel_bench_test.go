package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// BenchmarkKernelLineVersusConsole times a light line's round trip
// (`1+1` typed, its value and the next prompt back) through one ipykernel,
// typed at pyaichat --existing and at jupyter console --existing on the
// same kernel, each under a PTY: the medians of 30 lines a run, over b.N
// runs alternating which goes first (docs/kernels.md). No assertion:
// the machine is shared.
//
//	go test ./e2e -run '^$' -bench KernelLineVersusConsole -benchtime 3x
func BenchmarkKernelLineVersusConsole(b *testing.B) {
	home, runtime := kernelHome(b)
	file := startIPyKernel(b, runtime)
	progs := []struct {
		name   string
		argv   []string
		prompt string
	}{
		{"pyaichat", []string{binary, "--existing", file, "--no-log"}, "py> "},
		{"console", []string{"/usr/bin/python3", "-m", "jupyter_console", "--existing", file, "--ZMQTerminalInteractiveShell.confirm_exit=False"}, "In ["},
	}
	medians := map[string][]float64{}
	for i := 0; i < b.N; i++ {
		for j := range progs {
			p := progs[(i+j)%len(progs)]
			rtt, err := kernelLineRTT(p.argv, p.prompt, home, 30)
			if err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			medians[p.name] = append(medians[p.name], rtt)
		}
	}
	pa, co := median(medians["pyaichat"]), median(medians["console"])
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(pa, "pyaichat-line-ms")
	b.ReportMetric(co, "console-line-ms")
	b.ReportMetric(pa/co, "line-ratio")
	b.Logf("load average %s", loadavg())
}

// kernelLineRTT starts argv on a PTY, types `1+1` lines times after its
// first prompt, and returns the median round trip in milliseconds.
func kernelLineRTT(argv []string, prompt, home string, lines int) (float64, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	// prompt_toolkit (jupyter console) would otherwise ask the terminal for
	// the cursor position and wait for an answer no PTY here gives.
	cmd.Env = append(testEnv(home, "xterm"), "IPYTHONDIR="+filepath.Join(home, "ipython"), "PROMPT_TOOLKIT_NO_CPR=1")
	cmd.Dir = home
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		return 0, err
	}
	defer f.Close()
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	r := &ptyReader{f: f}
	if _, err := r.waitFor(0, prompt, "", kernelHang); err != nil {
		return 0, fmt.Errorf("first prompt: %w", err)
	}
	time.Sleep(300 * time.Millisecond) // let a prompt_toolkit prompt finish drawing
	var rtts []float64
	for i := 0; i < lines; i++ {
		off := r.len()
		t0 := time.Now()
		if _, err := f.WriteString("1+1\r"); err != nil {
			return 0, err
		}
		if _, err := r.waitFor(off, "2\r\n", prompt, 30*time.Second); err != nil {
			return 0, fmt.Errorf("line %d: %w", i+1, err)
		}
		rtts = append(rtts, float64(time.Since(t0))/1e6)
	}
	return median(rtts), nil
}
