package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The tests run the built binary: --capability starts its own interpreter,
// and only one can exist per process.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pyaichat")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/pyaichat/pyaichat/cmd/pyaichat").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type capOut struct {
	Capability string
	OK         bool
	Result     map[string]any
	Error      *struct{ Type, Message string }
}

func runBin(t *testing.T, bin string, args ...string) (capOut, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--capability"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var out capOut
	if code != 2 {
		dec := json.NewDecoder(&stdout)
		if err := dec.Decode(&out); err != nil {
			t.Fatalf("%v: stdout is not one JSON object: %v\nstdout: %s\nstderr: %s", args, err, stdout.String(), stderr.String())
		}
		if dec.More() {
			t.Errorf("%v: more than one JSON value on stdout", args)
		}
	} else if stdout.Len() != 0 {
		t.Errorf("%v: usage error wrote to stdout: %q", args, stdout.String())
	}
	return out, stderr.String(), code
}

func TestCapabilityCommand(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "s.py")
	if err := os.WriteFile(script, []byte("import sys\nprint('from the script')\nargs = sys.argv\ndata = {'k': [1, 2]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out, stderr, code := runBin(t, bin, "get_repr", "data", "-c", "x = 1", "-c", "print('setup')", script, "a1")
	if code != 0 || !out.OK || out.Capability != "get_repr" || out.Result["repr"] != "{'k': [1, 2]}" {
		t.Fatalf("got %d %+v\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "setup") || !strings.Contains(stderr, "from the script") {
		t.Errorf("setup output should go to stderr: %q", stderr)
	}

	out, _, code = runBin(t, bin, "eval_expr", "(args, x)", "-c", "x = 2", script, "a1", "a2")
	if code != 0 || out.Result["repr"] != "(['"+script+"', 'a1', 'a2'], 2)" {
		t.Errorf("sys.argv: %d %+v", code, out)
	}
	out, _, code = runBin(t, bin, "eval_expr", "__import__('sys').argv", "-c", "pass")
	if code != 0 || out.Result["repr"] != "['-c']" {
		t.Errorf("-c argv: %d %+v", code, out)
	}

	out, stderr, code = runBin(t, bin, "get_last_exception", "-c", "def f(n):\n    return n / 0\nf(3)")
	if code != 0 || !strings.Contains(stderr, "ZeroDivisionError") {
		t.Fatalf("got %d %+v\n%s", code, out, stderr)
	}
	exc := out.Result["exception"].(map[string]any)
	frames := exc["frames"].([]any)
	if exc["type"] != "ZeroDivisionError" || frames[len(frames)-1].(map[string]any)["function"] != "f" {
		t.Errorf("%+v", exc)
	}

	out, _, code = runBin(t, bin, "get_type", "missing")
	if code != 1 || out.OK || out.Error == nil || out.Error.Type != "NameError" {
		t.Errorf("NameError: %d %+v", code, out)
	}

	for _, args := range [][]string{{}, {"nope"}, {"get_repr"}, {"get_repr", "-c", "x=1"}, {"get_repr", "x", "-z"}} {
		_, stderr, code := runBin(t, bin, args...)
		if code != 2 || !strings.Contains(stderr, "usage") {
			t.Errorf("%v: want usage error, got %d %q", args, code, stderr)
		}
	}
}
