package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// kernelHang bounds a wait on an ipykernel: a hang, not a measure (one
// takes seconds to start on a loaded machine).
const kernelHang = 90 * time.Second

// startIPyKernel runs Debian's ipykernel with its connection file in
// runtime (a Jupyter runtime directory), as a notebook server would, and
// returns the file once the kernel has written it.
func startIPyKernel(t testing.TB, runtime string) string {
	t.Helper()
	_, file := startIPyKernelProcess(t, runtime, "kernel-e2e.json")
	return file
}

// startIPyKernelProcess is startIPyKernel with the kernel's process, and
// its file's name.
func startIPyKernelProcess(t testing.TB, runtime, name string) (*exec.Cmd, string) {
	t.Helper()
	file := filepath.Join(runtime, name)
	cmd := exec.Command("/usr/bin/python3", "-m", "ipykernel_launcher", "-f", file)
	cmd.Env = append(os.Environ(), "IPYTHONDIR="+filepath.Join(runtime, "ipython"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting ipykernel: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(kernelHang); ; time.Sleep(50 * time.Millisecond) {
		if raw, err := os.ReadFile(file); err == nil && strings.Contains(string(raw), "shell_port") {
			return cmd, file
		}
		if time.Now().After(deadline) {
			t.Fatalf("ipykernel wrote no connection file %s", file)
		}
	}
}

// kernelHome is a test's home directory, with a Jupyter runtime
// directory in it.
func kernelHome(t testing.TB) (home, runtime string) {
	t.Helper()
	home = t.TempDir()
	runtime = filepath.Join(home, "runtime")
	if err := os.MkdirAll(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	return home, runtime
}

// kernelPiped runs pyaichat with py> in a kernel and input on a pipe.
func kernelPiped(t *testing.T, home, input string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(testEnv(home, ""), "JUPYTER_RUNTIME_DIR="+filepath.Join(home, "runtime"),
		"IPYTHONDIR="+filepath.Join(home, "ipython"))
	cmd.Stdin = strings.NewReader(input)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("pyaichat %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out.String(), errb.String())
		}
	case <-time.After(kernelHang):
		_ = cmd.Process.Kill()
		t.Fatalf("pyaichat %s hung\nstdout: %s\nstderr: %s", strings.Join(args, " "), out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// TestKernelAttachOnATerminal attaches to a running kernel as jupyter
// console --existing does (the latest in the runtime directory): code
// runs there, a traceback is the kernel's, a block is gathered line by
// line, Ctrl-C interrupts a sleep, and exit leaves the kernel running
// with its namespace, which a second pyaichat finds by the file's name.
func TestKernelAttachOnATerminal(t *testing.T) {
	home, runtime := kernelHome(t)
	file := startIPyKernel(t, runtime)
	p := startREPLNoWait(t, home, []string{"JUPYTER_RUNTIME_DIR=" + runtime}, "--existing")
	hostname, _ := os.Hostname()
	p.ExpectStringTimeout(" on "+hostname+" (127.0.0.1)", kernelHang)
	p.ExpectString("IPython's semantics")
	p.ExpectString("exit leaves the kernel running")
	p.ExpectString("py> ")
	p.SendLine("x = 6 * 7")
	p.ExpectString("py> ")
	p.SendLine("x")
	p.ExpectString("42")
	p.SendLine("1/0")
	p.ExpectString("ZeroDivisionError")
	p.ExpectString("py> ")
	p.SendLine("for i in range(3):")
	p.ExpectString("... ")
	p.SendLine("    print(i * 10)")
	p.ExpectString("... ")
	p.SendLine("")
	p.ExpectString("20")
	p.ExpectString("py> ")
	p.SendLine(`import time; print("sleep" + "ing", flush=True); time.sleep(30)`)
	p.ExpectString("sleeping")
	p.Send("\x03")
	p.ExpectString("KeyboardInterrupt")
	p.ExpectString("py> ")
	p.SendLine("exit")
	if status := p.ExpectExit(); status != 0 {
		t.Fatalf("exit: status %d", status)
	}
	out, _ := kernelPiped(t, home, "print(x + 1)\n", "--existing", filepath.Base(file), "--no-log")
	if out != "43\n" {
		t.Fatalf("the attached kernel's namespace after exit: stdout %q, want 43", out)
	}
}

// TestKernelOwnedIsShutDownOnExit starts a kernel of a kernelspec
// (--kernel python3) and, on exit, shuts it down: its process ends and
// its connection file is gone.
func TestKernelOwnedIsShutDownOnExit(t *testing.T) {
	home := t.TempDir()
	out, _ := kernelPiped(t, home, "import os\nprint(os.getpid())\n", "--kernel", "python3", "--no-log")
	awaitGone(t, kernelPid(t, out))
	left, _ := filepath.Glob(filepath.Join(home, "runtime", "kernel-*.json"))
	if len(left) != 0 {
		t.Fatalf("connection files left behind: %v", left)
	}
}

// TestKernelOwnedEndsWithPyaichat: an owned kernel ends with pyaichat,
// as with jupyter console, even when exit(keep_kernel=True) asks
// otherwise, and even when pyaichat is killed (the kernel watches its
// parent, JPY_PARENT_PID).
func TestKernelOwnedEndsWithPyaichat(t *testing.T) {
	home := t.TempDir()
	out, errOut := kernelPiped(t, home, "import os\nprint(os.getpid())\nexit(keep_kernel=True)\n", "--kernel", "python3", "--no-log")
	awaitGone(t, kernelPid(t, out))
	if !strings.Contains(errOut, "pyaichat started this kernel, which ends with it") {
		t.Fatalf("stderr does not say why the kernel was not kept: %q", errOut)
	}

	p := startREPLNoWait(t, home, []string{"JUPYTER_RUNTIME_DIR=" + filepath.Join(home, "runtime")}, "--kernel", "python3")
	p.ExpectStringTimeout("py> ", kernelHang)
	p.SendLine("import os; print('pid', os.getpid())")
	m := p.ExpectRegexp(regexp.MustCompile(`pid (\d+)`))
	pid := kernelPid(t, m[1])
	_ = syscall.Kill(p.Pid(), syscall.SIGKILL)
	awaitGone(t, pid)
}

func kernelPid(t *testing.T, text string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(text))
	if err != nil {
		t.Fatalf("the kernel's pid: %q", text)
	}
	return pid
}

// awaitGone waits for a process to end (kernelHang bounds a hang).
func awaitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(kernelHang); ; time.Sleep(50 * time.Millisecond) {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the owned kernel (pid %d) still runs", pid)
		}
	}
}

// TestKernelRefusesWhatDoesNotGo: a kernel that is not there, and options
// that need the embedded Python, are one line each.
func TestKernelRefusesWhatDoesNotGo(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--existing"}, "no running kernel's connection file"},
		{[]string{"--kernel", "nosuchkernel"}, `no kernelspec "nosuchkernel"`},
		{[]string{"--kernel", "python3", "-c", "pass"}, "take no -c, -m or FILE"},
		{[]string{"--existing", "--kernel", "python3"}, "give one of them"},
	} {
		cmd := exec.Command(binary, c.args...)
		cmd.Env = append(testEnv(home, ""), "JUPYTER_RUNTIME_DIR="+filepath.Join(home, "runtime"))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Errorf("pyaichat %s: %v, output %q; want one line with %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
}

// TestKernelDoctorAsksTheKernel: doctor --existing says whether the
// kernel answers a kernel_info_request, and fails for one that is gone.
func TestKernelDoctorAsksTheKernel(t *testing.T) {
	home, runtime := kernelHome(t)
	file := startIPyKernel(t, runtime)
	cmd := exec.Command(binary, "doctor", "--existing", file)
	cmd.Env = testEnv(home, "")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "answers kernel_info_request: ipython") {
		t.Fatalf("doctor --existing %s:\n%s", file, out)
	}
	if err := os.WriteFile(filepath.Join(runtime, "kernel-gone.json"), []byte(`{"transport": "tcp", "ip": "127.0.0.1",
		"shell_port": 1, "iopub_port": 2, "stdin_port": 3, "control_port": 4, "hb_port": 5, "key": "k", "signature_scheme": "hmac-sha256"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(binary, "doctor", "--existing", filepath.Join(runtime, "kernel-gone.json"))
	cmd.Env = testEnv(home, "")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "FAIL  kernel") {
		t.Fatalf("doctor on a kernel that is not there: %v\n%s", err, out)
	}
}

// TestKernelSessionIsLoggedWithTheKernel: a session on a kernel is in the
// log as a local one is, its start naming the kernel, and its export
// says so.
func TestKernelSessionIsLoggedWithTheKernel(t *testing.T) {
	home, runtime := kernelHome(t)
	startIPyKernel(t, runtime)
	p := startREPLNoWait(t, home, []string{"JUPYTER_RUNTIME_DIR=" + runtime}, "--existing")
	p.ExpectStringTimeout("py> ", kernelHang)
	p.SendLine("answer = 6 * 7")
	p.ExpectString("py> ")
	p.SendLine("exit")
	p.ExpectExit()
	logs, _ := filepath.Glob(filepath.Join(home, ".local", "state", "pyaichat", "sessions", "*"))
	if len(logs) != 1 {
		t.Fatalf("session logs: %v, want one", logs)
	}
	id := strings.SplitN(filepath.Base(logs[0]), ".", 2)[0]
	show := exec.Command(binary, "sessions", "show", id)
	show.Env = testEnv(home, "")
	out, err := show.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "py> on the Jupyter kernel") || !strings.Contains(string(out), "answer = 6 * 7") {
		t.Fatalf("sessions show: %v\n%s", err, out)
	}
	export := exec.Command(binary, "sessions", "export", id, filepath.Join(home, "out.ipynb"))
	export.Env = testEnv(home, "")
	if out, err := export.CombinedOutput(); err != nil {
		t.Fatalf("sessions export: %v\n%s", err, out)
	}
	var nb struct {
		Metadata struct {
			Pyaichat struct{ Kernel string } `json:"pyaichat"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(home, "out.ipynb"))), &nb); err != nil || !strings.Contains(nb.Metadata.Pyaichat.Kernel, "kernel-e2e.json") {
		t.Fatalf("the exported notebook's metadata names no kernel: %v %+v", err, nb.Metadata)
	}
}

// TestKernelAssistantReadsADataFrame: at ai>, the model's tool calls
// read a pandas DataFrame that lives in the kernel, through the
// capabilities run in a copy of the kernel process; the automatic
// context is the kernel's own history.
func TestKernelAssistantReadsADataFrame(t *testing.T) {
	fake := newFakeOpenAI(t, "get_repr", `{"expr":"prices"}`)
	home, runtime := kernelHome(t)
	startIPyKernel(t, runtime)
	p := startREPLNoWait(t, home, []string{"JUPYTER_RUNTIME_DIR=" + runtime, "OPENAI_BASE_URL=" + fake.URL,
		"OPENAI_API_KEY=sk-e2e-secret-key", "PYAICHAT_MODEL=fake-model"}, "--existing")
	p.ExpectStringTimeout("py> ", kernelHang)
	p.SendLine(`import pandas as pd; prices = pd.DataFrame({"fruit": ["apple", "pear"], "price": [1.25, 2.5]})`)
	p.ExpectStringTimeout("py> ", kernelHang)
	p.Send("\t")
	p.ExpectString("ai> ")
	p.SendLine("what is in prices?")
	p.ExpectStringTimeout("The tool said: ", kernelHang)
	p.ExpectString("pear")
	p.ExpectString("ai> ")
	reqs := fake.requests()
	if len(reqs) != 2 {
		t.Fatalf("the fake server saw %d requests, want 2", len(reqs))
	}
	if first, _ := json.Marshal(reqs[0]); !strings.Contains(string(first), "prices = pd.DataFrame") {
		t.Errorf("the first request does not carry the kernel's history as context: %s", first)
	}
	p.Send("\t")
	p.ExpectString("py> ")
	p.SendLine("exit")
	p.ExpectExit()
}

// TestKernelCapabilitiesLeaveTheNamespace: an eval_expr that assigns,
// one that reads a property with a side effect, and one that writes to
// shared memory run in a copy: the kernel's namespace and memory are as
// they were, and the property's side effect never happened there; what
// the copy may not do is refused.
func TestKernelCapabilitiesLeaveTheNamespace(t *testing.T) {
	home, runtime := kernelHome(t)
	file := startIPyKernel(t, runtime)
	setup := "class Meter:\n    reads = 0\n    @property\n    def value(self):\n        Meter.reads += 1\n        return 7\n\nm = Meter()\nn = 1\nimport mmap\nshared = mmap.mmap(-1, 16)\n"
	kernelPiped(t, home, setup, "--existing", file, "--no-log")
	capability := func(args ...string) string {
		cmd := exec.Command(binary, append(append([]string{"--capability"}, args...), "--existing", file)...)
		cmd.Env = testEnv(home, "")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := capability("eval_expr", "(n := n + 41)"); !strings.Contains(out, `"repr":"42"`) {
		t.Fatalf("eval_expr (n := n + 41): %s", out)
	}
	if out := capability("eval_expr", "m.value"); !strings.Contains(out, `"repr":"7"`) {
		t.Fatalf("eval_expr m.value: %s", out)
	}
	if out := capability("eval_expr", "open('written', 'w')"); !strings.Contains(out, `"Refused"`) {
		t.Fatalf("eval_expr open('written', 'w') was not refused: %s", out)
	}
	if out := capability("eval_expr", "len(bytearray(2**31))"); !strings.Contains(out, `"MemoryError"`) {
		t.Fatalf("eval_expr allocating 2 GiB, over the copy's budget: %s", out)
	}
	// Shared memory is read-only in the copy: the write kills it.
	if out := capability("eval_expr", "shared.__setitem__(0, 7)"); !strings.Contains(out, `"Crashed"`) {
		t.Fatalf("eval_expr writing to a shared mapping: %s", out)
	}
	out, _ := kernelPiped(t, home, "print(n, Meter.reads, shared[0])\n", "--existing", file, "--no-log")
	if out != "1 0 0\n" {
		t.Fatalf("the kernel after the capabilities: n, Meter.reads, shared[0] = %q, want 1 0 0", out)
	}
}

// TestKernelInAnotherNetworkNamespace stands for a kernel on another
// machine: it runs in a network namespace of its own, bound to that
// namespace's address on a veth pair, and pyaichat knows of it only by
// its connection file. py> and a capability both reach it.
func TestKernelInAnotherNetworkNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test makes a network namespace and a veth pair: run it as root")
	}
	id := os.Getpid() % 250
	ns, host := fmt.Sprintf("pyaichat-e2e-%d", os.Getpid()), fmt.Sprintf("vpe%d", os.Getpid())
	hostIP, guestIP := fmt.Sprintf("10.236.%d.1", id), fmt.Sprintf("10.236.%d.2", id)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ip("link", "add", host, "type", "veth", "peer", "name", "vguest", "netns", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", host).Run() })
	ip("addr", "add", hostIP+"/24", "dev", host)
	ip("link", "set", host, "up")
	ip("-n", ns, "addr", "add", guestIP+"/24", "dev", "vguest")
	ip("-n", ns, "link", "set", "vguest", "up")
	ip("-n", ns, "link", "set", "lo", "up")

	home := t.TempDir()
	file := filepath.Join(home, "kernel-remote.json")
	kernel := exec.Command("ip", "netns", "exec", ns, "/usr/bin/python3", "-m", "ipykernel_launcher", "--ip="+guestIP, "-f", file)
	kernel.Env = append(os.Environ(), "IPYTHONDIR="+filepath.Join(home, "ipython"))
	if err := kernel.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kernel.Process.Kill(); _ = kernel.Wait() })
	for deadline := time.Now().Add(kernelHang); ; time.Sleep(50 * time.Millisecond) {
		if raw, err := os.ReadFile(file); err == nil && strings.Contains(string(raw), guestIP) && strings.Contains(string(raw), "shell_port") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the kernel in %s wrote no connection file", ns)
		}
	}
	out, _ := kernelPiped(t, home, "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]))\nanswer = 42\n", "--existing", file, "--no-log")
	if out != "['lo', 'vguest']\n" {
		t.Fatalf("the kernel's network interfaces: %q, want the namespace's ['lo', 'vguest']", out)
	}
	cmd := exec.Command(binary, "--capability", "eval_expr", "answer + 1", "--existing", file)
	cmd.Env = testEnv(home, "")
	res, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(res), `"repr":"43"`) {
		t.Fatalf("a capability on the kernel in %s: %v: %s", ns, err, res)
	}
}

// TestKernelOneShotQuestion: pyaichat --existing FILE -p QUESTION answers
// on stdout, its tool call made on the kernel.
func TestKernelOneShotQuestion(t *testing.T) {
	fake := newFakeOpenAI(t, "eval_expr", `{"expr":"len(words)"}`)
	home, runtime := kernelHome(t)
	file := startIPyKernel(t, runtime)
	kernelPiped(t, home, "words = 'a b c'.split()\n", "--existing", file, "--no-log")
	cmd := exec.Command(binary, "--existing", file, "-p", "how many words?")
	cmd.Env = append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=sk-e2e", "PYAICHAT_MODEL=fake-model")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat --existing -p: %v\nstderr: %s", err, stderr.String())
	}
	if want := `The tool said: {"repr":"3",`; !strings.HasPrefix(stdout.String(), want) {
		t.Fatalf("the answer: %q", stdout.String())
	}
}

// TestKernelThatDiesLeavesThePrompt: a kernel killed while an input runs
// stops answering its heartbeat; pyaichat says so and the prompt comes
// back, from which exit leaves.
func TestKernelThatDiesLeavesThePrompt(t *testing.T) {
	home, runtime := kernelHome(t)
	kernel, _ := startIPyKernelProcess(t, runtime, "kernel-doomed.json")
	p := startREPLNoWait(t, home, []string{"JUPYTER_RUNTIME_DIR=" + runtime}, "--existing")
	p.ExpectStringTimeout("py> ", kernelHang)
	p.SendLine(`import time; print("sleep" + "ing", flush=True); time.sleep(300)`)
	p.ExpectString("sleeping")
	_ = kernel.Process.Kill()
	p.ExpectStringTimeout("the kernel stopped answering its heartbeat", kernelHang)
	p.ExpectString("py> ")
	p.SendLine("exit")
	p.ExpectExit()
}
