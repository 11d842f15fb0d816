// Package e2e tests the built pyaichat binary from the outside: transcript
// tests against the real python3 (the oracle), PTY end-to-end tests and a
// side-by-side benchmark with python3 -q -i.
//
// TestMain builds ./cmd/pyaichat once per test binary.
package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pythonOracle is the interpreter of the libpython pyaichat embeds (its
// sys.executable), so that each Python version is held to its own python3
// -i; the python3 first on PATH may be another one (pyenv).
// PYAICHAT_E2E_PYTHON overrides it.
var pythonOracle string

// binary is the pyaichat built by TestMain.
var binary string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if p := os.Getenv("PYAICHAT_E2E_PYTHON"); p != "" {
		pythonOracle = p
	}
	dir, err := os.MkdirTemp("", "pyaichat-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "pyaichat")
	build := exec.Command("go", "build", "-o", binary, "./cmd/pyaichat")
	build.Dir = ".." // the module root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building pyaichat:", err)
		return 1
	}
	if err := syncFile(binary); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: writing pyaichat out:", err)
		return 1
	}
	if pythonOracle == "" {
		out, err := exec.Command(binary, "-I", "-c", "import sys; print(sys.executable)").Output()
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e: asking pyaichat for its interpreter:", err)
			return 1
		}
		pythonOracle = strings.TrimSpace(string(out))
	}
	fmt.Fprintln(os.Stderr, "e2e: the oracle is", pythonOracle)
	if _, err := os.Stat(pythonOracle); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: the oracle interpreter %s is missing: %v\n", pythonOracle, err)
		return 1
	}
	return m.Run()
}

// testEnv returns an environment for a child process: a private HOME and
// XDG directories under dir, a UTF-8 locale, no Python variables that change
// start-up, and TERM set to term (or removed when term is "").
func testEnv(dir, term string) []string {
	drop := map[string]bool{
		"HOME": true, "XDG_STATE_HOME": true, "XDG_CONFIG_HOME": true,
		"XDG_DATA_HOME": true, "XDG_CACHE_HOME": true, "TERM": true,
		"PYTHONSTARTUP": true, "PYTHONPATH": true, "PYTHONHOME": true,
		"PYTHONINSPECT": true, "PYTHONUNBUFFERED": true, "PYTHONIOENCODING": true,
		"PYTHONWARNINGS": true, "PYTHONDONTWRITEBYTECODE": true,
		"VIRTUAL_ENV": true, "LANG": true, "LC_ALL": true, "LC_CTYPE": true,
		"OPENAI_API_KEY": true, "OPENAI_BASE_URL": true, "PYAICHAT_MODEL": true,
		"COLUMNS": true, "LINES": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH":
			// The oracle's python3 first, as a user's PATH has the
			// python3 that pyaichat was built for.
			env = append(env, "PATH="+filepath.Dir(pythonOracle)+":"+v)
		case !drop[k]:
			env = append(env, kv)
		}
	}
	env = append(env,
		"HOME="+dir,
		"XDG_STATE_HOME="+filepath.Join(dir, ".local", "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, ".config"),
		"XDG_DATA_HOME="+filepath.Join(dir, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(dir, ".cache"),
		"LC_ALL=C.UTF-8",
		"PYTHONDONTWRITEBYTECODE=1",
	)
	if term != "" {
		env = append(env, "TERM="+term)
	}
	return env
}

// syncFile writes path's pages out to the disk. Until the kernel does so
// by itself (half a minute later), the pages of a file just written count
// as Private_Dirty in every process that maps it: a benchmark measuring
// pyaichat's private memory right after the build read 15 MiB of its
// binary as its own.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
