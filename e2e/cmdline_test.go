package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// On a terminal, the first prompt follows python3 -i's banner for the same
// Python, and one line on the assistant; -q leaves both out, as it does
// python3's.
func TestPTYBanner(t *testing.T) {
	t.Parallel()
	py := startProgram(t, pythonOracle, "", nil, "-i")
	py.ExpectString(">>> ")
	want := strings.SplitN(py.Screen(), "\n", 3)
	if len(want) < 3 {
		t.Fatalf("python3's banner: %q", py.Screen())
	}
	s := startREPL(t, "")
	lines := strings.Split(s.Screen(), "\n")
	if len(lines) != 4 || lines[0] != want[0] || lines[1] != want[1] || !strings.Contains(lines[2], "press TAB") || lines[3] != "py>" {
		t.Errorf("screen before the first prompt:\n%s\nwant python3's banner\n%s\n%s\nthen the assistant's line and the prompt", s.Screen(), want[0], want[1])
	}
	q := startREPL(t, "", "-q")
	if got := q.Screen(); got != "py>" {
		t.Errorf("with -q the screen is %q, want only the prompt", got)
	}
}

// python3's options mean what they mean to python3, and what it refuses
// pyaichat refuses with the same words and status.
func TestPython3OptionsAgainstPython(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mymod.py"), []byte("import sys\nprint('module', sys.argv, __name__)\nvalue = 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	show := "import sys; print(value if 'value' in dir() else None, sys.path[0] if sys.path else None, sys.flags.optimize, " +
		"sys.flags.dont_write_bytecode, sys.flags.no_user_site, sys.flags.no_site, sys.flags.ignore_environment, sys.flags.isolated, " +
		"sys.flags.bytes_warning, sys.flags.quiet, sys.warnoptions, sys._xoptions)\n"
	cases := [][]string{
		{"-q", "-m", "mymod", "a", "b"},
		{"-q", "-OO", "-B", "-s", "-S", "-bb", "-Wignore", "-X", "dev", "-c", "value = 1"},
		{"-qE", "-c", "value = 2", "x"},
		{"-q", "-I", "-c", "pass"},
		{"-q", "-m", "no_such_module"},
		{"-q", "-z"},
		{"-q", "-W"},
		{"-q", "--frobnicate"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want := runWith(t, dir, pythonOracle, append([]string{"-i"}, args...), show)
			got := runWith(t, dir, binary, args, show)
			// Usage errors name the program.
			want.stderr = strings.ReplaceAll(want.stderr, "usage: "+pythonOracle, "usage: pyaichat")
			want.stderr = strings.ReplaceAll(want.stderr, "`python -h'", "`pyaichat -h'")
			// runpy names the interpreter: python3's path, or the
			// libpython's own for pyaichat.
			got.stderr = strings.ReplaceAll(got.stderr, realExecutable(t), pythonOracle)
			if got.stdout != want.stdout || got.status != want.status || stripPrompts(got.stderr) != stripPrompts(want.stderr) {
				t.Errorf("python3 -i %v:\nstatus %d\nstdout:\n%s\nstderr:\n%s\npyaichat:\nstatus %d\nstdout:\n%s\nstderr:\n%s",
					args, want.status, want.stdout, want.stderr, got.status, got.stdout, got.stderr)
			}
		})
	}
}

type result struct {
	stdout, stderr string
	status         int
}

func runWith(t *testing.T, dir, program string, args []string, stdin string) result {
	t.Helper()
	cmd := exec.Command(program, args...)
	cmd.Dir = dir
	cmd.Env = testEnv(dir, "")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	return resultOf(t, cmd.Run(), out.String(), errb.String())
}

// resultOf is how a program ended: its output and the exit status in
// err, which fails the test if the program could not be run at all.
func resultOf(t *testing.T, err error, stdout, stderr string) result {
	t.Helper()
	r := result{stdout: stdout, stderr: stderr}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func stripPrompts(s string) string {
	for _, p := range []string{">>> ", "py> "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

// realExecutable is sys.executable inside pyaichat.
func realExecutable(t *testing.T) string {
	t.Helper()
	r := runWith(t, t.TempDir(), binary, []string{"-c", "import sys; print(sys.executable)"}, "")
	return strings.TrimSpace(r.stdout)
}

// A python3 on PATH of another version than the embedded one gets a
// one-line warning at start, with the command that builds for it.
func TestPTYWarnsOfAnotherPython3(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	bin := filepath.Join(home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(bin, "python3.9")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range testEnv(home, "xterm") {
		if strings.HasPrefix(kv, "PATH=") {
			kv = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
		env = append(env, kv)
	}
	s := ptytest.Start(t, binary, ptytest.Options{Args: []string{"-q"}, Env: env, Dir: home})
	s.ExpectString("is Python 3.9, but pyaichat embeds Python 3.")
	s.ExpectString("make build PYTHON=")
	s.ExpectString("py> ")
	quiet := startREPL(t, "", "-q")
	if strings.Contains(quiet.Output(), "embeds Python") {
		t.Errorf("warned with the embedded version's python3 on PATH:\n%s", quiet.Dump())
	}
}

// Tracebacks are coloured on a terminal exactly when that version's
// python3 -i colours them (3.13 does, unless NO_COLOR or PYTHON_COLORS=0
// say otherwise).
func TestPTYTracebackColourAsPython(t *testing.T) {
	t.Parallel()
	for _, extra := range [][]string{nil, {"NO_COLOR=1"}, {"PYTHON_COLORS=0"}, {"FORCE_COLOR=1"}} {
		coloured := func(program string, args []string, prompt string) bool {
			s := startProgram(t, program, "", extra, args...)
			s.ExpectString(prompt)
			s.SendLine("1/0")
			tail := s.ExpectString("ZeroDivisionError")
			s.ExpectString(prompt)
			return strings.Contains(tail+s.Unmatched(), "\x1b[3") || strings.Contains(tail, "\x1b[1;3")
		}
		want := coloured(pythonOracle, []string{"-q", "-i"}, ">>> ")
		got := coloured(binary, []string{"-q"}, "py> ")
		if got != want {
			t.Errorf("with %v: python3 -i coloured the traceback: %v, pyaichat: %v", extra, want, got)
		}
	}
}

// A build without cgo has no Python: it says so at start-up, in one line,
// rather than failing at the first line of Python.
func TestNoCgoBuildSaysWhy(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "pyaichat-nocgo")
	build := exec.Command("go", "build", "-o", bin, "./cmd/pyaichat")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	r := runWith(t, t.TempDir(), bin, []string{"-c", "print(42)"}, "")
	if r.status != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "built without cgo") {
		t.Errorf("status %d, stdout %q, stderr %q; want one line on stderr and status 1", r.status, r.stdout, r.stderr)
	}
}

// pyaichat's own modules leave no trace the user's code can see: a FILE
// (run as python3 -i runs one) finds the modules python3 has loaded and
// no more (but _pyaichat), and classes where CPython lists subclasses
// once, not again from private copies of the modules pyaichat's helpers
// use. (At the prompt, the transcripts check the same.)
func TestScriptSeesPython3Modules(t *testing.T) {
	dir := t.TempDir()
	script := "import sys\n" +
		"print(sorted(m for m in sys.modules if m != '_pyaichat'))\n" +
		"print(int.__subclasses__())\n"
	if err := os.WriteFile(filepath.Join(dir, "show.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	want := runWith(t, dir, pythonOracle, []string{"-i", "show.py"}, "")
	got := runWith(t, dir, binary, []string{"show.py"}, "")
	if got.stdout != want.stdout || got.status != want.status || stripPrompts(got.stderr) != stripPrompts(want.stderr) {
		t.Errorf("python3 show.py:\n%+v\npyaichat show.py:\n%+v", want, got)
	}
}
