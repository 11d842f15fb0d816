// Package kernel is a client of a Jupyter kernel over the Jupyter
// messaging protocol: it reads a connection file, signs and checks
// messages with the file's HMAC key, runs code with execute_request and
// hands back the kernel's stream, result and error messages as they come,
// interrupts and shuts a kernel down. It is pure Go (ZeroMQ through
// go-zeromq/zmq4), so attaching to a kernel needs no Python on this side.
package kernel

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ConnectionInfo is what a kernel's connection file says: where its five
// sockets listen and the key its messages are signed with.
type ConnectionInfo struct {
	Transport       string `json:"transport"`
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	ControlPort     int    `json:"control_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name"`
}

// ReadConnectionFile reads and checks a kernel's connection file.
func ReadConnectionFile(path string) (ConnectionInfo, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ConnectionInfo{}, fmt.Errorf("kernel connection file: %w", err)
	}
	var info ConnectionInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return ConnectionInfo{}, fmt.Errorf("kernel connection file %s: %w", path, err)
	}
	if err := info.check(); err != nil {
		return ConnectionInfo{}, fmt.Errorf("kernel connection file %s: %w", path, err)
	}
	return info, nil
}

func (c ConnectionInfo) check() error {
	if c.Transport == "" {
		return errors.New("no transport")
	}
	if c.Transport != "tcp" && c.Transport != "ipc" {
		return fmt.Errorf("transport %q is neither tcp nor ipc", c.Transport)
	}
	if c.IP == "" {
		return errors.New("no ip")
	}
	for name, port := range map[string]int{"shell_port": c.ShellPort, "iopub_port": c.IOPubPort, "control_port": c.ControlPort} {
		if port <= 0 || port > 65535 {
			return fmt.Errorf("%s %d is not a port", name, port)
		}
	}
	// HMAC-SHA256 is the only scheme this client signs with; an empty key
	// means the kernel checks no signatures, which the protocol allows.
	if c.Key != "" && c.SignatureScheme != "hmac-sha256" {
		return fmt.Errorf("signature scheme %q is not hmac-sha256", c.SignatureScheme)
	}
	return nil
}

// endpoint is the ZeroMQ address of one of the kernel's sockets.
func (c ConnectionInfo) endpoint(port int) string {
	if c.Transport == "ipc" {
		// jupyter_client names ipc sockets "<ip>-<port>".
		return fmt.Sprintf("ipc://%s-%d", c.IP, port)
	}
	return fmt.Sprintf("tcp://%s:%d", c.IP, port)
}

// RuntimeDir is where Jupyter keeps the connection files of running
// kernels, found as jupyter_core finds it.
func RuntimeDir() string {
	if dir := os.Getenv("JUPYTER_RUNTIME_DIR"); dir != "" {
		return dir
	}
	if dir := os.Getenv("JUPYTER_DATA_DIR"); dir != "" {
		return filepath.Join(dir, "runtime")
	}
	if dir := os.Getenv("XDG_DATA_HOME"); dir != "" {
		return filepath.Join(dir, "jupyter", "runtime")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".local", "share", "jupyter", "runtime")
}

// LatestConnectionFile is the newest kernel-*.json in dir, the file
// `jupyter console --existing` attaches to when none is named.
func LatestConnectionFile(dir string) (string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "kernel-*.json"))
	if err != nil {
		return "", fmt.Errorf("kernel runtime directory %s: %w", dir, err)
	}
	type dated struct {
		path  string
		mtime int64
	}
	var files []dated
	for _, path := range paths {
		st, err := os.Stat(path)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		files = append(files, dated{path, st.ModTime().UnixNano()})
	}
	if len(files) == 0 {
		return "", fmt.Errorf("no running kernel's connection file (kernel-*.json) in %s", dir)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mtime > files[j].mtime })
	return files[0].path, nil
}

// ResolveConnectionFile finds the file a user named as jupyter_client
// does: a path as given, else a name (with or without "kernel-" and
// ".json") in the runtime directory; an empty name is the latest kernel.
func ResolveConnectionFile(name string) (string, error) {
	dir := RuntimeDir()
	if name == "" {
		return LatestConnectionFile(dir)
	}
	if _, err := os.Stat(name); err == nil {
		return name, nil
	}
	candidates := []string{filepath.Join(dir, name)}
	if !strings.HasSuffix(name, ".json") {
		candidates = append(candidates, filepath.Join(dir, name+".json"), filepath.Join(dir, "kernel-"+name+".json"))
	}
	for _, path := range candidates {
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("no kernel connection file %q here or in %s", name, dir)
}
