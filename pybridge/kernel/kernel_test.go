package kernel

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hang bounds how long a test waits for the kernel before calling it a
// hang; it measures nothing.
const hang = 60 * time.Second

// startKernel runs Debian's ipykernel (the system python3's) writing its
// connection file in a temporary runtime directory, and returns the file.
func startKernel(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "kernel-test.json")
	cmd := exec.Command("/usr/bin/python3", "-m", "ipykernel_launcher", "-f", file)
	cmd.Env = append(os.Environ(), "JUPYTER_RUNTIME_DIR="+dir, "IPYTHONDIR="+filepath.Join(dir, "ipython"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting ipykernel: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	awaitConnectionFile(t, file)
	return file
}

// awaitConnectionFile waits until a starting kernel has written a whole
// connection file.
func awaitConnectionFile(t testing.TB, file string) {
	t.Helper()
	for deadline := time.Now().Add(hang); ; time.Sleep(50 * time.Millisecond) {
		if _, err := ReadConnectionFile(file); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kernel wrote no connection file %s in %s", file, hang)
		}
	}
}

func dial(t *testing.T, file string) *Client {
	t.Helper()
	info, err := ReadConnectionFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	c, err := Dial(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func run(t *testing.T, c *Client, code string) (Reply, []Output) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	var outs []Output
	reply, err := c.Execute(ctx, code, ExecuteOptions{StoreHistory: true}, func(o Output) { outs = append(outs, o) })
	if err != nil {
		t.Fatalf("executing %q: %v", code, err)
	}
	return reply, outs
}

func TestKernelRunsCodeAndShowsWhatItSends(t *testing.T) {
	c := dial(t, startKernel(t))
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	info, err := c.KernelInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.LanguageInfo.Name != "python" || !strings.HasPrefix(info.LanguageInfo.Version, "3.") || info.Implementation != "ipython" {
		t.Fatalf("kernel_info_reply: %+v", info)
	}

	reply, outs := run(t, c, "import sys\nprint('out'); print('err', file=sys.stderr)\nx = 6 * 7\nx")
	if reply.Status != "ok" {
		t.Fatalf("reply %+v", reply)
	}
	var got []string
	for _, o := range outs {
		got = append(got, map[OutputKind]string{Stream: "stream:" + o.Name, Result: "result"}[o.Kind]+"="+o.Text)
	}
	want := []string{"stream:stdout=out\n", "stream:stderr=err\n", "result=42"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("outputs %q, want %q", got, want)
	}
	if outs[2].Count != reply.ExecutionCount {
		t.Fatalf("Out[%d] in a reply counted %d", outs[2].Count, reply.ExecutionCount)
	}

	reply, outs = run(t, c, "1/0")
	if reply.Status != "error" || reply.EName != "ZeroDivisionError" || len(outs) != 1 || outs[0].Kind != Error {
		t.Fatalf("1/0: reply %+v, outputs %+v", reply, outs)
	}
	if tb := strings.Join(outs[0].Traceback, "\n"); !strings.Contains(tb, "ZeroDivisionError") || !strings.Contains(tb, "division by zero") {
		t.Fatalf("traceback %q", tb)
	}

	// A silent execution changes the namespace but shows nothing.
	if _, outs = run(t, c, "silent_name = 1\nsilent_name"); len(outs) != 1 {
		t.Fatalf("outputs %+v", outs)
	}
	var quiet []Output
	if _, err := c.Execute(ctx, "print('hidden')", ExecuteOptions{Silent: true}, func(o Output) { quiet = append(quiet, o) }); err != nil {
		t.Fatal(err)
	}
	if len(quiet) != 1 || quiet[0].Text != "hidden\n" {
		t.Fatalf("silent execution's outputs %+v", quiet)
	}
}

func TestKernelInterruptStopsASleep(t *testing.T) {
	c := dial(t, startKernel(t))
	done := make(chan Reply, 1)
	started := make(chan struct{})
	var once sync.Once
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hang)
		defer cancel()
		reply, _ := c.Execute(ctx, "import time\nprint('sleeping', flush=True)\ntime.sleep(30)", ExecuteOptions{}, func(o Output) {
			if o.Kind == Stream {
				once.Do(func() { close(started) })
			}
		})
		done <- reply
	}()
	select {
	case <-started:
	case reply := <-done:
		t.Fatalf("the sleep ended before it was interrupted: %+v", reply)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if err := c.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	reply := <-done
	if reply.Status != "error" || reply.EName != "KeyboardInterrupt" {
		t.Fatalf("interrupted sleep's reply %+v", reply)
	}
	if r, outs := run(t, c, "'still here'"); r.Status != "ok" || len(outs) != 1 || outs[0].Text != "'still here'" {
		t.Fatalf("after the interrupt: %+v %+v", r, outs)
	}
}

func TestKernelRefusesAClientWithTheWrongKey(t *testing.T) {
	info, err := ReadConnectionFile(startKernel(t))
	if err != nil {
		t.Fatal(err)
	}
	info.Key = "not-the-key"
	// The kernel drops every message signed with another key, so the
	// client hears nothing back and gives up when its context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if c, err := Dial(ctx, info); err == nil {
		c.Close()
		t.Fatal("a client with the wrong key was answered")
	}
}

func TestKernelShutdownEndsAnOwnedKernel(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kernel-owned.json")
	cmd := exec.Command("/usr/bin/python3", "-m", "ipykernel_launcher", "-f", file)
	cmd.Env = append(os.Environ(), "IPYTHONDIR="+filepath.Join(dir, "ipython"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	awaitConnectionFile(t, file)
	c := dial(t, file)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(hang):
		t.Fatal("the kernel did not end after shutdown_request")
	}
}

func TestKernelSaysWhetherInputIsComplete(t *testing.T) {
	c := dial(t, startKernel(t))
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	for code, want := range map[string]Completeness{
		"x = 1":              {Status: "complete"},
		"for i in range(3):": {Status: "incomplete", Indent: "    "},
		"1 +* 2":             {Status: "invalid"},
	} {
		got, err := c.IsComplete(ctx, code)
		if err != nil || got != want {
			t.Errorf("IsComplete(%q) = %+v, %v; want %+v", code, got, err, want)
		}
	}
}

// BenchmarkKernelLightLine is a light line's round trip through a local
// kernel: execute_request to the reply and the idle status, with the
// result shown on the way. PYAICHAT_KERNEL_FILE names a running kernel
// to measure instead, to compare with `jupyter console` on the same one.
func BenchmarkKernelLightLine(b *testing.B) {
	file := os.Getenv("PYAICHAT_KERNEL_FILE")
	if file == "" {
		file = startKernel(b)
	}
	info, err := ReadConnectionFile(file)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	c, err := Dial(ctx, info)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Execute(ctx, "1 + 1", ExecuteOptions{StoreHistory: true}, func(Output) {}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestKernelHistoryIsWhatRanThere(t *testing.T) {
	c := dial(t, startKernel(t))
	run(t, c, "a = 2")
	run(t, c, "a * 21")
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	// Silent executions (the client's own helpers) stay out of history.
	if _, err := c.Execute(ctx, "hidden = 1", ExecuteOptions{Silent: true}, func(Output) {}); err != nil {
		t.Fatal(err)
	}
	entries, err := c.History(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Input+"=>"+e.Output)
	}
	// IPython logs no outputs unless told to (db_log_output).
	if want := []string{"a = 2=>", "a * 21=>"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("history %q, want %q", got, want)
	}
}

// TestKernelHeartbeatSaysWhetherItLives: the heartbeat is answered while
// the kernel runs code, and fails once the kernel is gone.
func TestKernelHeartbeatSaysWhetherItLives(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kernel-hb.json")
	cmd := exec.Command("/usr/bin/python3", "-m", "ipykernel_launcher", "-f", file)
	cmd.Env = append(os.Environ(), "IPYTHONDIR="+filepath.Join(dir, "ipython"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	awaitConnectionFile(t, file)
	c := dial(t, file)
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	running := make(chan struct{})
	go func() {
		_, _ = c.Execute(ctx, "import time; print('busy', flush=True); time.sleep(60)", ExecuteOptions{}, func(o Output) {
			if o.Kind == Stream {
				close(running)
			}
		})
	}()
	<-running
	if err := c.Heartbeat(ctx); err != nil {
		t.Fatalf("the heartbeat of a kernel running code: %v", err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
	defer cancelShort()
	if err := c.Heartbeat(short); err == nil {
		t.Fatal("the heartbeat of a killed kernel was answered")
	}
}
