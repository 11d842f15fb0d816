package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ipythonOracle is Debian's IPython, for the system Python the suite is
// built against (scripts/deps.sh installs it).
const ipythonOracle = "/usr/bin/ipython3"

// magicLines runs inputs, one a line, through program from a pipe and
// returns its output lines with the prompts and IPython's Out[N]
// markers taken off, blank lines and timeit's "slowest run" warning left
// out, and times made T (their figures differ from run to run).
func magicLines(t *testing.T, home string, argv []string, inputs []string) []string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = append(testEnv(home, ""), "PYTHONIOENCODING=utf-8"), home
	cmd.Stdin = strings.NewReader(strings.Join(inputs, "\n") + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", argv[0], err, out)
	}
	prompt := regexp.MustCompile(`^((py|\.\.\.)> |In \[\d+\]: |Out\[\d+\]: )+`)
	// IPython's "%.3g" writes 999.9 µs as 1e+03 µs.
	times := regexp.MustCompile(`[\d.]+(e[+-]?\d+)? (ns|µs|ms|s)\b`)
	var lines []string
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimRight(prompt.ReplaceAllString(line, ""), " ")
		if line == "" || strings.HasPrefix(line, "The slowest run took") || strings.HasPrefix(line, "Do you really want to exit") {
			continue
		}
		lines = append(lines, times.ReplaceAllString(line, "T"))
	}
	return lines
}

// IPython's common line magics print what IPython prints for them.
func TestMagicsAsIPython(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(ipythonOracle); err != nil {
		t.Fatalf("the oracle %s is missing (scripts/deps.sh installs ipython3): %v", ipythonOracle, err)
	}
	home := t.TempDir()
	dir := filepath.Join(home, "work dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	inputs := []string{
		"y = 3", "z = 'a'", "%who",
		"!echo hi there",
		"%env PYAICHAT_TEST_VAR=bar", "%env PYAICHAT_TEST_VAR", "%env PYAICHAT_NO_SUCH_VAR",
		"%cd " + dir,
		"%nope",
		"%time 6 * 7",
		"%timeit -n 100 -r 3 sum(range(10))",
		"%timeit -n 1 -r 1 sum(range(10))",
	}
	want := magicLines(t, home, []string{ipythonOracle, "--simple-prompt", "--no-banner", "--colors=NoColor", "--HistoryManager.enabled=False"}, inputs)
	got := magicLines(t, home, []string{binary, "-q"}, inputs)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("pyaichat:\n%s\n\nIPython:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// With magics = false in the config file, a magic is the SyntaxError it
// is in python3.
func TestMagicsOff(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".config", "pyaichat", "config.toml"), "magics = false\n")
	cmd := exec.Command(binary, "-q")
	cmd.Env = testEnv(home, "")
	cmd.Stdin = strings.NewReader("%who\n!ls\n")
	out, _ := cmd.CombinedOutput()
	if n := strings.Count(string(out), "SyntaxError: invalid syntax"); n != 2 {
		t.Errorf("magics off: %d SyntaxErrors, want 2:\n%s", n, out)
	}
}

// A magic's traceback shows the user's frames only, as IPython's does:
// none of pyaichat's helper nor the runpy frames %run goes through.
func TestMagicTracebacksShowUserFrames(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	script := filepath.Join(home, "fails.py")
	writeFile(t, script, "raise ValueError('from the script')\n")
	cmd := exec.Command(binary, "-q")
	cmd.Env = testEnv(home, "")
	cmd.Stdin = strings.NewReader("%time 1/0\n%run " + script + "\n")
	out, _ := cmd.CombinedOutput()
	want := "Traceback (most recent call last):\n  File \"<timed eval>\", line 1, in <module>\nZeroDivisionError: division by zero\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("%%time 1/0 did not show\n%s\nin:\n%s", want, out)
	}
	want = "Traceback (most recent call last):\n  File \"" + script + "\", line 1, in <module>\n    raise ValueError('from the script')\nValueError: from the script\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("%%run did not show\n%s\nin:\n%s", want, out)
	}
}
