package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// Piped input that cannot be written down in a transcript file: invalid
// UTF-8, CRLF, a 2 MB line, a long output. python3 -q -i is the oracle, as for
// the transcripts. (NUL bytes are not compared: python3 -i cuts the line at
// the NUL and glues the next line to it; see TestPipedNULByte.)
func TestPipedBadInput(t *testing.T) {
	cases := []struct{ name, input string }{
		{"invalid_utf8_in_string", "s = '\xff\xfe'\n'after'\n"},
		{"invalid_utf8_in_comment", "# \xff\n'after'\n"},
		{"crlf_line_endings", "x = 2\r\nx * 3\r\n"},
		{"two_megabyte_line", "x = '" + strings.Repeat("a", 2<<20) + "'\nlen(x)\n"},
		{"long_output", "for i in range(20000): print(i, 'x' * 50)\n\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := transcript{file: "piped_test.go", name: c.name, input: c.input}
			pyDir, paDir := t.TempDir(), t.TempDir()
			want := runPiped(pyDir, b, pythonOracle, "-q", "-i")
			got := runPiped(paDir, b, binary)
			want.stdout, want.stderr = normalise(want.stdout, pyDir), normalise(want.stderr, pyDir)
			got.stdout, got.stderr = normalise(got.stdout, paDir), normalise(got.stderr, paDir)
			if len(b.input) > 4096 {
				b.input = b.input[:200] + "...(" + itoa(len(b.input)) + " bytes)\n"
			}
			if len(want.stdout) > 4096 && want.stdout == got.stdout {
				want.stdout, got.stdout = "(same long output)", "(same long output)"
			}
			compareRuns(t, b, want, got)
		})
	}
}

// A NUL byte in a line: python3 -i's own behaviour is no oracle (it truncates
// the line at the NUL and joins the next line to it); pyaichat gives a
// clear message, does not crash, and the session goes on.
func TestPipedNULByte(t *testing.T) {
	dir := t.TempDir()
	r := runPiped(dir, transcript{input: "x = 1\nprint('a\x00b')\nx + 1\n"}, binary)
	if r.err != nil || r.status != 0 {
		t.Fatalf("status %d, err %v; stderr:\n%s", r.status, r.err, r.stderr)
	}
	if r.stdout != "2\n" {
		t.Errorf("stdout %q, want %q (the line after the NUL line runs)", r.stdout, "2\n")
	}
	if !strings.Contains(r.stderr, "null") || strings.Contains(r.stderr, "panic") {
		t.Errorf("want one clear message about the NUL byte; stderr:\n%s", r.stderr)
	}
}

// Modules in the working directory named like the standard ones pyaichat
// uses itself (code.py is a common file name) must not break the REPL or
// the capabilities. Each shadow says so on stdout and fails, so using one
// shows. (python3 -i itself trips over some: its interactive hook imports
// rlcompleter, which imports inspect, ast, linecache and tokenize; those are
// left out of the comparison with it.)
func TestStdlibNamesInWorkingDirectory(t *testing.T) {
	t.Parallel()
	shadows := func(names ...string) map[string]string {
		files := map[string]string{}
		for _, name := range names {
			files[name+".py"] = "print('the working directory has " + name + ".py')\nraise ImportError('shadow')\n"
		}
		return files
	}
	input := "1+1\nif 1:\n    x = (2,\n\n    3)\n\nx\ndef f(:\n1/0\nprint('done')\n"
	b := transcript{file: "piped_test.go", name: "stdlib_names_in_cwd", input: input}
	pyDir, paDir := t.TempDir(), t.TempDir()
	replShadows := shadows("code", "codeop", "traceback", "reprlib", "json")
	writeFiles(t, pyDir, replShadows)
	writeFiles(t, paDir, replShadows)
	want := runPiped(pyDir, b, pythonOracle, "-q", "-i")
	got := runPiped(paDir, b, binary)
	want.stdout, want.stderr = normalise(want.stdout, pyDir), normalise(want.stderr, pyDir)
	got.stdout, got.stderr = normalise(got.stdout, paDir), normalise(got.stderr, paDir)
	compareRuns(t, b, want, got)

	capDir := t.TempDir()
	writeFiles(t, capDir, shadows("inspect", "dis", "json", "ast", "linecache", "tokenize", "keyword", "opcode"))
	for _, c := range [][]string{{"get_doc", "f"}, {"get_type", "x"}, {"eval_expr", "x[0] + 1"}} {
		cmd := exec.Command(binary, "--capability", c[0], c[1], "-c", "def f(a):\n    'doc of f'\nx = [1]")
		cmd.Dir, cmd.Env = capDir, testEnv(capDir, "")
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "working directory") || !strings.Contains(string(out), `"ok":true`) {
			t.Errorf("--capability %s %s in a directory of shadows: %v\n%s", c[0], c[1], err, out)
		}
	}

	// A module the user imported before the capabilities' helper loaded is
	// theirs: the helper must not use it (that would run their code in the
	// session on pyaichat's behalf).
	userDir := t.TempDir()
	writeFiles(t, userDir, map[string]string{"json.py": "import sys\n" +
		"def dumps(*a, **k):\n    sys.stderr.write('the user json.py ran\\n')\n    return '\"from the user json.py\"'\n" +
		"loads = dumps\n"})
	cmd := exec.Command(binary, "--capability", "get_type", "x", "-c", "import json\nx = 1")
	cmd.Dir, cmd.Env = userDir, testEnv(userDir, "")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "user json.py") || !strings.Contains(string(out), `"type":"int"`) {
		t.Errorf("--capability after the user imported their own json: %v\n%s", err, out)
	}
}

// A process forked by a statement at the prompt cannot go on as a REPL (the
// Go runtime's threads are not in it): it ends with that statement, saying
// so, instead of hanging; the parent goes on.
func TestForkAtPromptEndsChild(t *testing.T) {
	t.Parallel()
	input := "import os\npid = os.fork()\nprint('child' if pid == 0 else 'parent')\n" +
		"if pid: os.waitpid(pid, 0)[1]\n\nprint('still here')\n"
	r := runPiped(t.TempDir(), transcript{input: input}, binary)
	if r.err != nil || r.status != 0 {
		t.Fatalf("status %d, err %v; stderr:\n%s", r.status, r.err, r.stderr)
	}
	if want := "parent\n0\nstill here\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	if !strings.Contains(r.stderr, "the process forked by this statement ends here") {
		t.Errorf("the child did not say why it ended; stderr:\n%s", r.stderr)
	}

	// A child that raises SystemExit ends with its status, as in python3.
	b := transcript{file: "piped_test.go", name: "fork_child_exits", input: "import os, sys\nif os.fork() == 0: sys.exit(3)\n\nos.wait()[1] >> 8\n"}
	want := runPiped(t.TempDir(), b, pythonOracle, "-q", "-i")
	got := runPiped(t.TempDir(), b, binary)
	compareRuns(t, b, want, got)
}

// Signals the caller ignores (nohup ignores SIGHUP, a shell's trap ” any)
// stay ignored, as python3 keeps them.
func TestInheritedIgnoredSignals(t *testing.T) {
	t.Parallel()
	input := "import signal\n[signal.getsignal(s) for s in (signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM)]\n"
	b := transcript{file: "piped_test.go", name: "inherited_ignored_signals", input: input}
	ignoring := []string{"/bin/sh", "-c", `trap '' HUP USR1; exec "$0" "$@"`}
	pyDir, paDir := t.TempDir(), t.TempDir()
	want := runPiped(pyDir, b, append(ignoring, pythonOracle, "-q", "-i")...)
	got := runPiped(paDir, b, append(ignoring, binary)...)
	if !strings.Contains(want.stdout, "SIG_IGN") {
		t.Fatalf("python3 did not inherit the ignored signals, so this test shows nothing: %q", want.stdout)
	}
	compareRuns(t, b, want, got)
}
