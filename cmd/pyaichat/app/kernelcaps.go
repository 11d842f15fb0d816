package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/pybridge/kernel"
	"github.com/pyaichat/pyaichat/python"
)

// kernelCaps is the capabilities' session when py> runs in a Jupyter
// kernel: pyaichat's helper code is sent there once as a silent
// execution, and each call runs in a fork()ed copy of the kernel process
// (python/kernel.py), evaluated as a user expression so that it leaves
// no trace in the kernel's history or execution count.
type kernelCaps struct {
	client *kernel.Client
	mu     sync.Mutex
	booted bool
}

// kernelSlack is how much longer than a call's own deadline pyaichat
// waits for the kernel's answer: the kernel kills the copy at the
// deadline and says so; past the slack the kernel itself is stuck.
const kernelSlack = 10 * time.Second

// pyLiteral is s as a Python string literal: a JSON string from Go's
// encoder is one (it escapes no character Python reads otherwise).
func pyLiteral(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

const kernelModule = `__import__("sys").modules["_pyaichat_kernel"]`

// boot sends the kernel support code, once.
func (k *kernelCaps) boot(ctx context.Context) error {
	if k.booted {
		return nil
	}
	code := fmt.Sprintf(`__import__("builtins").exec(__import__("builtins").compile(%s, "<pyaichat kernel>", "exec"), __import__("sys").modules.setdefault("_pyaichat_kernel", __import__("types").ModuleType("_pyaichat_kernel")).__dict__)`,
		pyLiteral(python.Kernel))
	if _, err := k.client.EvaluateAfter(ctx, code, "None"); err != nil {
		return fmt.Errorf("sending pyaichat's support code to the kernel: %w", err)
	}
	k.booted = true
	return nil
}

// LoadModule loads one of pyaichat's helper modules in the kernel.
func (k *kernelCaps) LoadModule(name, source string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), kernelAnswer)
	defer cancel()
	if err := k.boot(ctx); err != nil {
		return err
	}
	_, err := k.run(ctx, fmt.Sprintf("%s.load(%s, %s)", kernelModule, pyLiteral(name), pyLiteral(source)))
	if err != nil {
		return fmt.Errorf("loading %s in the kernel: %w", name, err)
	}
	return nil
}

// Call runs module.fn(arg) in a copy of the kernel process, isolated
// (no file read either) for pybridge.CallIsolated; ctx must have a
// deadline, which the kernel enforces by killing the copy.
func (k *kernelCaps) Call(ctx context.Context, kind pybridge.CallKind, module, fn, arg string) (string, error) {
	d, ok := ctx.Deadline()
	if !ok {
		return "", &pybridge.Error{Type: pybridge.ErrTypeIsolation, Message: "a call in the kernel needs a deadline"}
	}
	ms := max(time.Until(d).Milliseconds(), 1)
	isolated := "False"
	if kind == pybridge.CallIsolated {
		isolated = "True"
	}
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Until(d)+kernelSlack)
	defer cancel()
	type answer struct {
		out string
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := k.run(wait, fmt.Sprintf("%s.call(%s, %s, %s, %d, %s)", kernelModule, pyLiteral(module), pyLiteral(fn), pyLiteral(arg), ms, isolated))
		done <- answer{out, err}
	}()
	select {
	case a := <-done:
		return a.out, a.err
	case <-ctx.Done():
		// The kernel kills the copy at its deadline; a cancelled
		// question does not wait for that.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			a := <-done // the kernel's own Timeout, said in its words
			return a.out, a.err
		}
		return "", &pybridge.Error{Type: pybridge.ErrTypeCanceled, Message: "canceled: the evaluation in the kernel was given up; the session is unchanged"}
	}
}

// run evaluates expr (one of kernel.py's entry points) and reads its
// envelope: base64 of {"ok": text} or {"error": {"type", "message"}}.
func (k *kernelCaps) run(ctx context.Context, expr string) (string, error) {
	value, err := k.client.EvaluateAfter(ctx, "", expr)
	if err != nil {
		return "", &pybridge.Error{Type: pybridge.ErrTypeIsolation, Message: "the kernel: " + err.Error()}
	}
	raw, err := base64.StdEncoding.DecodeString(strings.Trim(value, `'"`))
	if err != nil {
		return "", &pybridge.Error{Type: pybridge.ErrTypeIsolation, Message: fmt.Sprintf("the kernel's answer %.80q is not pyaichat's", value)}
	}
	var env struct {
		OK    *string         `json:"ok"`
		Error *pybridge.Error `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || (env.OK == nil && env.Error == nil) {
		return "", &pybridge.Error{Type: pybridge.ErrTypeIsolation, Message: "the kernel's answer is not pyaichat's envelope"}
	}
	if env.Error != nil {
		return "", env.Error
	}
	return *env.OK, nil
}

// PrepareIsolated does nothing: each call in the kernel forks its copy.
func (k *kernelCaps) PrepareIsolated() {}

// DiscardIsolated does nothing either: no copy is kept.
func (k *kernelCaps) DiscardIsolated() {}

// recentContext is the assistant's automatic context from the kernel's
// own history: the last inputs run there, from any client (a notebook's
// cells too), with their outputs when the kernel keeps them.
func (k *kernelCaps) recentContext() string {
	ctx, cancel := context.WithTimeout(context.Background(), kernelAnswer)
	defer cancel()
	entries, err := k.client.History(ctx, recentInputs)
	if err != nil {
		return ""
	}
	var lines []string
	for _, e := range entries {
		lines = append(lines, ">>> "+strings.ReplaceAll(e.Input, "\n", "\n... "))
		if e.Output != "" {
			lines = append(lines, "    "+clipText(e.Output, 300))
		}
	}
	return strings.Join(lines, "\n")
}

// recentInputs is how many of the kernel's inputs the automatic context
// shows, as many as the embedded Python's (python/repl.py keeps 6).
const recentInputs = 6

func clipText(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "..."
	}
	return s
}

// runKernelCapability is --capability NAME [EXPR] --existing FILE: one
// capability on a running kernel, which is left running.
func runKernelCapability(std stdio, call capabilityCall) int {
	if call.file != "" || len(call.commands) > 0 {
		std.warn("--capability with --existing takes no -c or FILE: run setup code in the kernel")
		return exitUsage
	}
	ks, err := connectKernel(cmdline{attach: true, existing: call.existing})
	if err != nil {
		std.warn(err.Error())
		return 1
	}
	defer ks.close()
	return printCapability(std, call, &kernelCaps{client: ks.client})
}
