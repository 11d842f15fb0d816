package kernel

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestKernelInAnotherNetworkNamespace stands for a kernel on another
// machine: it runs in its own network namespace (unshare -n, as root),
// reachable only over a veth pair, and the client knows of it only by
// the connection file, whose ip is the namespace's own address.
func TestKernelInAnotherNetworkNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test makes a network namespace and a veth pair: run it as root")
	}
	id := os.Getpid() % 250
	host, guest := fmt.Sprintf("vkh%d", os.Getpid()), "vkg0"
	hostIP, guestIP := fmt.Sprintf("10.235.%d.1", id), fmt.Sprintf("10.235.%d.2", id)
	dir := t.TempDir()
	file := filepath.Join(dir, "kernel-remote.json")
	// The kernel's side says it is in its namespace, then waits for a line
	// on stdin: the veth end must be moved into the namespace (which exists
	// only once unshare has run) before it is configured and the kernel binds.
	script := fmt.Sprintf("echo ready && read go && ip link set lo up && ip addr add %s/24 dev %s && ip link set %s up && exec /usr/bin/python3 -m ipykernel_launcher --ip=%s -f %s",
		guestIP, guest, guest, guestIP, file)
	cmd := exec.Command("unshare", "-n", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "IPYTHONDIR="+filepath.Join(dir, "ipython"))
	ready := &firstWrite{done: make(chan struct{})}
	cmd.Stdout = ready
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited; _ = exec.Command("ip", "link", "del", host).Run() })
	select {
	case <-ready.done:
	case <-exited:
		t.Fatalf("the namespace's side ended: %s", stderr.String())
	case <-time.After(hang):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("the namespace's side did not start: %s", stderr.String())
	}
	ipRun(t, "link", "add", host, "type", "veth", "peer", "name", guest, "netns", fmt.Sprint(cmd.Process.Pid))
	ipRun(t, "addr", "add", hostIP+"/24", "dev", host)
	ipRun(t, "link", "set", host, "up")
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(hang); ; time.Sleep(50 * time.Millisecond) {
		if _, err := ReadConnectionFile(file); err == nil {
			break
		}
		select {
		case <-exited:
			t.Fatalf("the kernel's side of the namespace ended: %s", stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("the kernel in the namespace wrote no connection file in %s: %s", hang, stderr.String())
		}
	}
	info, err := ReadConnectionFile(file)
	if err != nil || info.IP != guestIP {
		t.Fatalf("connection file: %+v, %v", info, err)
	}
	c := dial(t, file)
	ours, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	reply, outs := run(t, c, "import os\nos.readlink('/proc/self/ns/net')")
	if reply.Status != "ok" || len(outs) != 1 || !strings.HasPrefix(outs[0].Text, "'net:[") || strings.Contains(outs[0].Text, ours) {
		t.Fatalf("the kernel's network namespace: %+v %+v (ours %s)", reply, outs, ours)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if info, err := c.KernelInfo(ctx); err != nil || info.LanguageInfo.Name != "python" {
		t.Fatalf("kernel_info: %+v, %v", info, err)
	}
}

func ipRun(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// firstWrite closes done at the first output written to it, and drops
// the output.
type firstWrite struct {
	once sync.Once
	done chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.done) })
	return len(p), nil
}
