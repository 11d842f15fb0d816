package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Setup code: `pyaichat FILE ARGS` and `pyaichat -c CODE` against
// `python3 -q -i FILE ARGS` and `python3 -q -i -c CODE`, each in a directory
// holding the same files, then the same lines piped to the REPL. What the
// script sees (__file__, sys.argv, sys.path[0]), what is left of it in
// __main__, how its errors show, and that a SystemExit from it is shown and
// the REPL goes on, as python3 -i does, are python3's to decide.
func TestSetupCodeAgainstPython(t *testing.T) {
	// After the setup code: what the REPL sees of it, then an exit that
	// only the REPL's own SystemExit makes.
	const after = "sorted(k for k in dir() if not k.startswith('__'))\n" +
		"type(__loader__).__name__\n" +
		"__file__\n__cached__\nimport sys; sys.argv, sys.path[0]\n" +
		"sys.last_type.__name__ if hasattr(sys, 'last_type') else None\n" +
		"raise SystemExit(4)\n"
	files := map[string]string{
		"ok.py":           "import sys\nx = 1\nprint('ran', __name__, __file__, __cached__, sys.argv)\n",
		"raises.py":       "x = 1\n\ndef f():\n    1/0\n\nf()\n",
		"exits.py":        "import sys\nx = 1\nprint('before')\nsys.exit(3)\n",
		"exits_msg.py":    "raise SystemExit('message from the script')\n",
		"syntax.py":       "x = 1\ndef f(:\n    pass\n",
		"indent.py":       "if True:\nprint(1)\n",
		"non_utf8.py":     "x = 1\ny = '\xff\xfe'\n",
		"latin1.py":       "# -*- coding: latin-1 -*-\ns = '\xe9'\nprint(len(s))\n",
		"bad_cookie.py":   "# coding: utf-8\ns = '\xff'\n",
		"uses_module.py":  "import helper\nx = helper.VALUE\n",
		"helper.py":       "VALUE = 'helper next to the script'\n",
		"app/__main__.py": "import sys\ny = 5\nprint('app', __name__, __file__, sys.argv)\n",
		"bad/__main__.py": "y = 1\n1/0\n",
	}
	cases := []struct{ name, input string }{
		{"file", "ok.py a b"},
		{"file_raises", "raises.py"},
		{"file_exits", "exits.py"},
		{"file_exits_with_message", "exits_msg.py"},
		{"file_syntax_error", "syntax.py"},
		{"file_indentation_error", "indent.py"},
		{"file_not_utf8", "non_utf8.py"},
		{"file_latin1_declared", "latin1.py"},
		{"file_declared_utf8_not_utf8", "bad_cookie.py"},
		{"file_imports_next_to_it", "uses_module.py"},
		{"file_missing", "missing.py x"},
		{"directory_with_main", "app arg"},
		{"directory_main_raises", "bad"},
		{"command", "-c|x = 2; print('ran', __name__)"},
		{"command_syntax_error", "-c|def f(:"},
		{"command_exits", "-c|import sys; x = 1; sys.exit(5)"},
		{"command_exits_none", "-c|raise SystemExit"},
		{"command_raises", "-c|x = 1; 1/0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := strings.Fields(c.input)
			if code, ok := strings.CutPrefix(c.input, "-c|"); ok {
				args = []string{"-c", code}
			}
			pyDir, paDir := t.TempDir(), t.TempDir()
			for _, dir := range []string{pyDir, paDir} {
				writeFiles(t, dir, files)
			}
			b := transcript{file: "setup_test.go", name: c.name, input: after}
			want := runPiped(pyDir, b, append([]string{pythonOracle, "-q", "-i"}, args...)...)
			got := runPiped(paDir, b, append([]string{binary}, args...)...)
			want.stdout, want.stderr = normalise(want.stdout, pyDir), normalise(want.stderr, pyDir)
			got.stdout, got.stderr = normalise(got.stdout, paDir), normalise(got.stderr, paDir)
			// python3 names itself in "can't open file"; pyaichat does too.
			want.stderr = strings.ReplaceAll(want.stderr, pythonOracle+": ", "pyaichat: ")
			b.input = "(args: " + strings.Join(args, " ") + ")\n" + after
			compareRuns(t, b, want, got)
		})
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// PYTHONSTARTUP runs before the first prompt of a bare session, with its
// errors shown and the session going on, and not with FILE or -c.
func TestStartupFileAgainstPython(t *testing.T) {
	files := map[string]string{
		"startup.py":        "S = 1\nprint('startup ran', __file__)\n",
		"startup_raises.py": "S = 2\n1/0\n",
		"startup_exits.py":  "S = 3\nraise SystemExit(7)\n",
		"script.py":         "x = 1\n",
	}
	const after = "S\n__file__\n"
	cases := []struct{ name, startup, args string }{
		{"runs", "startup.py", ""},
		{"raises", "startup_raises.py", ""},
		{"exits", "startup_exits.py", ""},
		{"missing", "missing.py", ""},
		{"not_with_file", "startup.py", "script.py"},
		{"not_with_command", "startup.py", "-c|x = 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var args []string
			if code, ok := strings.CutPrefix(c.args, "-c|"); ok {
				args = []string{"-c", code}
			} else if c.args != "" {
				args = []string{c.args}
			}
			pyDir, paDir := t.TempDir(), t.TempDir()
			writeFiles(t, pyDir, files)
			writeFiles(t, paDir, files)
			b := transcript{file: "setup_test.go", name: c.name, input: after, env: []string{"PYTHONSTARTUP=" + c.startup}}
			want := runPiped(pyDir, b, append([]string{pythonOracle, "-q", "-i"}, args...)...)
			got := runPiped(paDir, b, append([]string{binary}, args...)...)
			want.stdout, want.stderr = normalise(want.stdout, pyDir), normalise(want.stderr, pyDir)
			got.stdout, got.stderr = normalise(got.stdout, paDir), normalise(got.stderr, paDir)
			b.input = "(PYTHONSTARTUP=" + c.startup + ", args: " + strings.Join(args, " ") + ")\n" + after
			compareRuns(t, b, want, got)
		})
	}
}
