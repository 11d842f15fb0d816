package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// completionScript writes pyaichat completion SHELL to a file in dir.
func completionScript(t *testing.T, dir, shell string) string {
	t.Helper()
	cmd := exec.Command(binary, "completion", shell)
	cmd.Env = testEnv(dir, "")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pyaichat completion %s: %v", shell, err)
	}
	path := filepath.Join(dir, "pyaichat."+shell)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// shellOutput runs script in shell (argv) in dir and returns its output.
func shellOutput(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = testEnv(dir, "")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
	return string(out)
}

// bash parses the script, registers it for pyaichat, and completing a
// subcommand, its words, an option's values and files gives what pyaichat
// takes.
func TestCompletionBash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := completionScript(t, dir, "bash")
	shellOutput(t, dir, "bash", "-n", script)
	writeFiles(t, dir, map[string]string{"conf.py": "", "venvs/a/pyvenv.cfg": ""})
	cases := map[string]string{
		"pyaichat con":                "config conf.py",
		"pyaichat config s":           "show",
		"pyaichat completion ":        "bash zsh fish",
		"pyaichat --provider ol":      "ollama",
		"pyaichat --capability get_r": "get_repr",
		"pyaichat --json":             "--json --json-stream",
		"pyaichat doctor --venv ven":  "venvs",
		"pyaichat --model ":           "",
	}
	for line, want := range cases {
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		prog := "source " + script + "\ncomplete -p pyaichat\n" +
			"COMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n" +
			"_pyaichat; echo \"[${COMPREPLY[*]}]\"\n"
		out := shellOutput(t, dir, "bash", "--norc", "--noprofile", "-c", prog)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if lines[0] != "complete -o filenames -F _pyaichat pyaichat" {
			t.Errorf("complete -p pyaichat: %q", lines[0])
		}
		if got := lines[len(lines)-1]; got != "["+want+"]" {
			t.Errorf("%q completes to %s, want [%s]", line, got, want)
		}
	}
}

// zsh parses its script and, loaded after compinit, binds _pyaichat to
// pyaichat.
func TestCompletionZsh(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := completionScript(t, dir, "zsh")
	shellOutput(t, dir, "zsh", "-n", script)
	out := shellOutput(t, dir, "zsh", "-f", "-c", "autoload -Uz compinit && compinit -D -u && source "+script+" && print -r -- $_comps[pyaichat]")
	if strings.TrimSpace(out) != "_pyaichat" {
		t.Errorf("after loading the zsh script, pyaichat completes with %q, want _pyaichat", out)
	}
}

// fish parses its script and completes subcommands, their words and
// option values with it.
func TestCompletionFish(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := completionScript(t, dir, "fish")
	shellOutput(t, dir, "fish", "-n", script)
	cases := map[string]string{
		"pyaichat con":           "config",
		"pyaichat config ":       "edit path show",
		"pyaichat --provider ol": "ollama",
	}
	for line, want := range cases {
		out := shellOutput(t, dir, "fish", "--no-config", "-c", "source "+script+"; complete -C '"+line+"'")
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			word, _, _ := strings.Cut(l, "\t")
			got = append(got, word)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("fish completes %q to %q, want %q", line, got, want)
		}
	}
}

// A shell pyaichat has no script for is a usage error.
func TestCompletionUnknownShell(t *testing.T) {
	t.Parallel()
	r := runWith(t, t.TempDir(), binary, []string{"completion", "tcsh"}, "")
	if r.status != 2 || !strings.Contains(r.stderr, "usage: pyaichat completion bash|zsh|fish") {
		t.Errorf("completion tcsh: status %d stderr %q", r.status, r.stderr)
	}
}
