package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runConfig is pyaichat config ARGS in home: stdout, stderr, status.
func runConfig(t *testing.T, home string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"config"}, args...)...)
	cmd.Dir = home
	cmd.Env = append(testEnv(home, ""), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	status := 0
	switch {
	case errors.As(err, &exit):
		status = exit.ExitCode()
	case err != nil:
		t.Fatalf("pyaichat config %v: %v", args, err)
	}
	return result{stdout.String(), stderr.String(), status}
}

func configPath(home string) string {
	return filepath.Join(home, ".config", "pyaichat", "config.toml")
}

// config path is where pyaichat reads its settings, $XDG_CONFIG_HOME's.
func TestConfigPath(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	r := runConfig(t, home, nil, "path")
	if r.status != 0 || r.stdout != configPath(home)+"\n" || r.stderr != "" {
		t.Errorf("config path: status %d stdout %q stderr %q, want %s", r.status, r.stdout, r.stderr, configPath(home))
	}
	for _, args := range [][]string{{}, {"frob"}, {"path", "x"}} {
		if r := runConfig(t, home, nil, args...); r.status != 2 || r.stderr == "" {
			t.Errorf("config %v: status %d stderr %q, want 2 and a message", args, r.status, r.stderr)
		}
	}
}

// config show prints every setting in force with where it came from, the
// key masked; a flag or variable beats the file.
func TestConfigShow(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	const key = "sk-file-abcdefghijklmnop9876"
	writeFiles(t, filepath.Dir(configPath(home)), map[string]string{
		"config.toml": "model = \"file-model\"\napi_key = \"" + key + "\"\nsuggest = false\nlog_keep = 7\nprice_in = 0.5\nprice_out = 1.5\n",
	})
	r := runConfig(t, home, []string{"OPENAI_BASE_URL=http://127.0.0.1:9/v1"}, "show", "--model", "flag-model")
	if r.status != 0 || r.stderr != "" {
		t.Fatalf("config show: status %d, stderr %q", r.status, r.stderr)
	}
	want := map[string][2]string{
		"provider":       {`""`, "none"},
		"base_url":       {`"http://127.0.0.1:9/v1"`, "env OPENAI_BASE_URL"},
		"model":          {`"flag-model"`, "flag --model"},
		"api_key":        {`"sk-****9876"`, "config file"},
		"share":          {`"redacted"`, "default"},
		"suggest":        {"false", "config file"},
		"log_keep":       {"7", "config file"},
		"log":            {"true", "default"},
		"log_output":     {"false", "default"},
		"context_window": {"0", "default: the server's model list or known models"},
		"price_in":       {"0.5", "config file"},
		"price_out":      {"1.5", "config file"},
		// The user's capability modules, none by default.
		"capability_modules": {"[]", "default"},
	}
	got := map[string][2]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		k, rest, _ := strings.Cut(line, "=")
		v, origin, _ := strings.Cut(rest, "#")
		got[strings.TrimSpace(k)] = [2]string{strings.TrimSpace(v), strings.TrimSpace(origin)}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q\n%s", k, got[k], w, r.stdout)
		}
	}
	if strings.Contains(r.stdout, key[3:len(key)-4]) {
		t.Errorf("config show printed the key:\n%s", r.stdout)
	}
	if !strings.HasPrefix(r.stdout, "# "+configPath(home)+"\n") {
		t.Errorf("first line: %q", strings.SplitN(r.stdout, "\n", 2)[0])
	}
	writeFiles(t, filepath.Dir(configPath(home)), map[string]string{"config.toml": "modle = \"x\"\n"})
	if r := runConfig(t, home, nil, "show"); r.status != 1 || !strings.Contains(r.stderr, `unknown key "modle"`) {
		t.Errorf("config show of a bad file: status %d stderr %q", r.status, r.stderr)
	}
}

// config edit makes a private file from a commented template, runs
// $EDITOR on it, and checks what the editor left.
func TestConfigEdit(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	editor := filepath.Join(home, "editor.sh")
	writeFiles(t, home, map[string]string{"editor.sh": "#!/bin/sh\necho \"$EDIT_LINE\" >> \"$1\"\n"})
	if err := os.Chmod(editor, 0o755); err != nil {
		t.Fatal(err)
	}
	r := runConfig(t, home, []string{"EDITOR=" + editor, "VISUAL=", "EDIT_LINE=model = \"edited\""}, "edit")
	if r.status != 0 || r.stderr != "" {
		t.Fatalf("config edit: status %d stderr %q", r.status, r.stderr)
	}
	st, err := os.Stat(configPath(home))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the new config file's mode is %04o, want 0600", st.Mode().Perm())
	}
	text := readFile(t, configPath(home))
	if !strings.HasPrefix(text, "# pyaichat's settings") || !strings.HasSuffix(text, "\nmodel = \"edited\"\n") {
		t.Errorf("the edited file:\n%s", text)
	}
	if r := runConfig(t, home, nil, "show"); !strings.Contains(r.stdout, `"edited"`) {
		t.Errorf("config show after the edit:\n%s%s", r.stdout, r.stderr)
	}
	// An edit that breaks the file is reported, with the way back.
	r = runConfig(t, home, []string{"EDITOR=" + editor, "VISUAL=", "EDIT_LINE=model = ["}, "edit")
	if r.status != 1 || !strings.Contains(r.stderr, configPath(home)) || !strings.Contains(r.stderr, "pyaichat config edit opens it again") {
		t.Errorf("a broken edit: status %d stderr %q", r.status, r.stderr)
	}
	// An editor that fails is one line, not silence.
	r = runConfig(t, home, []string{"EDITOR=false", "VISUAL="}, "edit")
	if r.status != 1 || !strings.Contains(r.stderr, "the editor (false) failed") {
		t.Errorf("a failing editor: status %d stderr %q", r.status, r.stderr)
	}
}
