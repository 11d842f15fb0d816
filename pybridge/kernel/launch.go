package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Spec is a kernelspec: how to start a kernel of one kind (kernel.json).
type Spec struct {
	Name        string
	Dir         string
	Argv        []string `json:"argv"`
	DisplayName string   `json:"display_name"`
	Language    string   `json:"language"`
	Env         map[string]string
}

// specDirs are the directories Jupyter looks for kernelspecs in, first
// match wins, as jupyter_client's KernelSpecManager orders them: the
// user's data directory, then the system-wide ones.
func specDirs() []string {
	var dirs []string
	if dir := os.Getenv("JUPYTER_DATA_DIR"); dir != "" {
		dirs = append(dirs, filepath.Join(dir, "kernels"))
	}
	if dir := os.Getenv("XDG_DATA_HOME"); dir != "" {
		dirs = append(dirs, filepath.Join(dir, "jupyter", "kernels"))
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".local", "share", "jupyter", "kernels"))
	}
	for _, dir := range filepath.SplitList(os.Getenv("JUPYTER_PATH")) {
		if dir != "" {
			dirs = append(dirs, filepath.Join(dir, "kernels"))
		}
	}
	return append(dirs, "/usr/local/share/jupyter/kernels", "/usr/share/jupyter/kernels")
}

// FindSpec reads the kernelspec called name.
func FindSpec(name string) (Spec, error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return Spec{}, fmt.Errorf("kernel name %q is not a kernelspec's name", name)
	}
	dirs := specDirs()
	for _, dir := range dirs {
		file := filepath.Join(dir, name, "kernel.json")
		raw, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return Spec{}, fmt.Errorf("kernelspec %s: %w", name, err)
		}
		var s struct {
			Spec
			Env map[string]string `json:"env"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return Spec{}, fmt.Errorf("kernelspec %s: %w", file, err)
		}
		if len(s.Argv) == 0 {
			return Spec{}, fmt.Errorf("kernelspec %s: no argv", file)
		}
		s.Spec.Name, s.Spec.Dir, s.Spec.Env = name, filepath.Dir(file), s.Env
		return s.Spec, nil
	}
	return Spec{}, fmt.Errorf("no kernelspec %q in %s (jupyter kernelspec list shows those installed)", name, strings.Join(dirs, ", "))
}

// Owned is a kernel this process started, and ends.
type Owned struct {
	ConnectionFile string
	cmd            *exec.Cmd
	exited         chan struct{}
}

// Launch starts a kernel of spec with its connection file in the runtime
// directory, and returns once the kernel has written the file (the kernel
// picks its own ports, so none is raced for).
func Launch(ctx context.Context, spec Spec) (*Owned, error) {
	dir := RuntimeDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("kernel runtime directory: %w", err)
	}
	file := filepath.Join(dir, "kernel-pyaichat-"+newID()+".json")
	args := make([]string, len(spec.Argv))
	for i, a := range spec.Argv {
		a = strings.ReplaceAll(a, "{connection_file}", file)
		args[i] = strings.ReplaceAll(a, "{resource_dir}", spec.Dir)
	}
	cmd := exec.Command(args[0], args[1:]...)
	// As jupyter_client: the kernel watches this process and ends when it
	// goes, so that a pyaichat killed before it could shut the kernel
	// down leaves no kernel behind.
	cmd.Env = append(os.Environ(), fmt.Sprintf("JPY_PARENT_PID=%d", os.Getpid()))
	for k, v := range spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Its own process group: a Ctrl-C at pyaichat's terminal is for
	// pyaichat, which passes it on as an interrupt_request.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting kernel %s: %w", spec.Name, err)
	}
	k := &Owned{ConnectionFile: file, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(k.exited) }()
	for {
		if _, err := ReadConnectionFile(file); err == nil {
			return k, nil
		}
		select {
		case <-k.exited:
			return nil, fmt.Errorf("kernel %s (%s) exited before it wrote its connection file", spec.Name, args[0])
		case <-ctx.Done():
			k.Kill()
			return nil, fmt.Errorf("kernel %s wrote no connection file: %w", spec.Name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Wait waits for the kernel's process to end, at most until ctx ends,
// then kills it; the connection file goes with it.
func (k *Owned) Wait(ctx context.Context) {
	select {
	case <-k.exited:
	case <-ctx.Done():
		k.Kill()
	}
	_ = os.Remove(k.ConnectionFile)
}

// Kill ends the kernel's process now.
func (k *Owned) Kill() {
	_ = k.cmd.Process.Kill()
	<-k.exited
	_ = os.Remove(k.ConnectionFile)
}
