package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

// pyRecords is the py records of a log.
func pyRecords(recs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["ev"] == "py" {
			out = append(out, r)
		}
	}
	return out
}

// outputOf is a py record's output as "kind:text" pieces.
func outputOf(r map[string]any) []string {
	parts, _ := r["output"].([]any)
	var out []string
	for _, p := range parts {
		p := p.(map[string]any)
		out = append(out, p["kind"].(string)+":"+p["text"].(string))
	}
	return out
}

// With --log-output each py> input's record carries what it printed,
// stdout, stderr, the value shown and the traceback apart, the key
// redacted and a long output cut at a character boundary with a marker;
// the terminal shows what it always did; /save at py> and sessions
// export write the outputs as nbformat outputs, and sessions show shows
// them.
func TestPTYSessionLogOutput(t *testing.T) {
	t.Parallel()
	fake := newChatFake(t)
	home := t.TempDir()
	s := startREPLNoWait(t, home, fake.env(), "--log-output")
	s.ExpectString("py> ")
	typeLine(t, s, `print("hello")`, "hello")
	typeLine(t, s, "40 + 2", "42")
	typeLine(t, s, `import sys; print("to stderr", file=sys.stderr)`, "to stderr")
	enter(s, "1/0")
	s.ExpectString("ZeroDivisionError: division by zero\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, `print("sk-e2e-session-" + "key-0123456789")`, "")
	typeLine(t, s, `print("a" + "é" * 40000, end=""); print()`, "")
	enter(s, "for i in range(2):")
	s.ExpectString("... ")
	enter(s, "    print('loop', i)")
	s.ExpectString("... ")
	typeLine(t, s, "", "loop 0\nloop 1")
	enter(s, "if True:")
	s.ExpectString("... ")
	enter(s, "    /save inside.md")
	s.ExpectString("SyntaxError: invalid syntax\r\n")
	s.ExpectString("py> ")
	saved := filepath.Join(home, "saved.ipynb")
	enter(s, "/save "+saved)
	s.ExpectString("saved this session to " + saved + "\r\n")
	s.ExpectString("py> ")
	s.Send("\x04")
	assertExit(t, s, 0)

	logs := logsOf(t, home)
	if len(logs) != 1 {
		t.Fatalf("%d logs", len(logs))
	}
	py := pyRecords(logs[0])
	if len(py) != 8 {
		t.Fatalf("%d py records, want 8 (not /save): %v", len(py), py)
	}
	want := [][]string{
		{"stdout:hello\n"},
		{"result:42\n"},
		{"stderr:to stderr\n"},
		{"error:Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nZeroDivisionError: division by zero\n"},
		{"stdout:[key]\n"},
		nil, // checked below
		{"stdout:loop 0\nloop 1\n"},
	}
	for i, w := range want {
		if w == nil {
			continue
		}
		if got := outputOf(py[i]); strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("input %q: output %q, want %q", py[i]["src"], got, w)
		}
	}
	if py[3]["exc"] != "ZeroDivisionError" {
		t.Errorf("1/0 logged as %v", py[3])
	}
	if got := outputOf(py[7]); len(got) != 1 || !strings.HasPrefix(got[0], "error:") || !strings.Contains(got[0], "SyntaxError: invalid syntax") || py[7]["exc"] != "SyntaxError" {
		t.Errorf("the block with /save inside was not Python's SyntaxError: %v", py[7])
	}
	if _, err := os.Stat(filepath.Join(home, "inside.md")); err == nil {
		t.Errorf("/save inside a block saved")
	}
	long := outputOf(py[5])
	if len(long) != 1 {
		t.Fatalf("the long output: %d parts", len(long))
	}
	text := strings.TrimPrefix(long[0], "stdout:")
	body, marker, _ := strings.Cut(text, "\n[output cut: ")
	// 65536 bytes would end inside an é.
	if !utf8.ValidString(body) || len(body) != 65535 || strings.Trim(body, "aé") != "" ||
		marker != "65535 bytes kept of 80002 written]" || py[5]["output_bytes"] != 80002.0 {
		t.Errorf("the long output: %d bytes, valid %v, marker %q, output_bytes %v", len(body), utf8.ValidString(body), marker, py[5]["output_bytes"])
	}
	paths, _ := filepath.Glob(filepath.Join(sessionsDirOf(home), "*.jsonl"))
	if data := readFile(t, paths[0]); strings.Contains(data, sessionKey) {
		t.Errorf("the API key is in the log")
	}

	cells := "code,code,code,code,code,code,code,code"
	validateNotebook(t, saved, cells)
	outs := notebookOutputs(t, saved)
	for i, w := range []string{"stream stdout hello\n", "execute_result 42", "stream stderr to stderr\n",
		"error ZeroDivisionError division by zero Traceback (most recent call last):|  File \"<stdin>\", line 1, in <module>|ZeroDivisionError: division by zero"} {
		if outs[i] != w {
			t.Errorf("cell %d outputs %q, want %q", i, outs[i], w)
		}
	}
	id := logs[0][0]["id"].(string)
	show := mustOK(t, home, "sessions", "show", id)
	for _, w := range []string{"py> print(\"hello\")\nhello\n", "py> 40 + 2\n42\n", "py> 1/0\nTraceback (most recent call last):\n",
		"ZeroDivisionError: division by zero\n    [raised ZeroDivisionError]\n"} {
		if !strings.Contains(show, w) {
			t.Errorf("sessions show lacks %q:\n%s", w, show)
		}
	}
	md := filepath.Join(home, "s.md")
	mustOK(t, home, "sessions", "export", id, md)
	if got := readFile(t, md); !strings.Contains(got, "```python\n40 + 2\n```\n\n```text\n42\n```\n") {
		t.Errorf("the Markdown export lacks the output:\n%.600s", got)
	}
	py3 := filepath.Join(home, "s.py")
	mustOK(t, home, "sessions", "export", id, py3)
	if got := readFile(t, py3); !strings.Contains(got, "print(\"hello\")\n# | hello\n") {
		t.Errorf("the script export lacks the output:\n%.600s", got)
	}
}

// notebookOutputs is each code cell's outputs, read by nbformat, as one
// line: type, then name or ename and evalue, then text (traceback lines
// joined by |).
func notebookOutputs(t *testing.T, path string) []string {
	t.Helper()
	script := `import nbformat, sys, json
nb = nbformat.read(sys.argv[1], as_version=4)
out = []
for c in nb.cells:
    if c.cell_type != "code":
        continue
    s = []
    for o in c.outputs:
        if o.output_type == "stream":
            s.append("stream %s %s" % (o.name, o.text))
        elif o.output_type == "execute_result":
            s.append("execute_result %s" % o.data["text/plain"])
        else:
            s.append("error %s %s %s" % (o.ename, o.evalue, "|".join(o.traceback)))
    out.append(";".join(s))
print(json.dumps(out))`
	data, err := exec.Command("/usr/bin/python3", "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("nbformat: %v\n%s", err, data)
	}
	var out []string
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return out
}

// A log past half its bound keeps no more output and says so once; the
// inputs are still logged.
func TestPTYSessionLogOutputBound(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeConfig(t, home, "log_output = true\nlog_max_bytes = 200000\n")
	s := startREPLNoWait(t, home, nil)
	s.ExpectString("py> ")
	for i := 0; i < 3; i++ {
		typeLine(t, s, `print("x" * 60000)`, "")
	}
	typeLine(t, s, `print("after")`, "after")
	s.Send("\x04")
	assertExit(t, s, 0)
	recs := logsOf(t, home)[0]
	var evs []string
	for _, r := range recs {
		e := r["ev"].(string)
		if e == "py" {
			e += "(" + strings.Join(outputOf(r), "")[:min(len(strings.Join(outputOf(r), "")), 12)] + ")"
		}
		evs = append(evs, e)
	}
	want := "start,py(stdout:xxxxx),py(),output_off,py(),py(),end"
	if strings.Join(evs, ",") != want {
		t.Errorf("events %s, want %s", strings.Join(evs, ","), want)
	}
	if !strings.Contains(recs[3]["text"].(string), "100000 bytes") {
		t.Errorf("output_off record %v", recs[3])
	}
	show := mustOK(t, home, "sessions", "show", recs[0]["id"].(string))
	if !strings.Contains(show, "[the log passed 100000 bytes, half its bound; Python's output is no longer kept]") {
		t.Errorf("sessions show:\n%s", show)
	}
}

// kill -9 with output captured, while an input prints, leaves a log whose
// whole lines are read back, outputs and all (the input that never ended
// is not in it).
func TestPTYSessionLogOutputSurvivesKill(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startREPLNoWait(t, home, nil, "--log-output")
	s.ExpectString("py> ")
	typeLine(t, s, `print("before the kill")`, "before the kill")
	typeLine(t, s, `"kept"`, "'kept'")
	enter(s, `while True: print("spam")`)
	s.ExpectString("... ")
	s.SendLine("")
	s.ExpectString("spam\r\nspam\r\n")
	syscall.Kill(s.Pid(), syscall.SIGKILL)
	s.ExpectSignaled()
	recs := logsOf(t, home)[0]
	py := pyRecords(recs)
	if len(py) != 2 || strings.Join(outputOf(py[0]), "") != "stdout:before the kill\n" || strings.Join(outputOf(py[1]), "") != "result:'kept'\n" {
		t.Errorf("py records after kill -9: %v", py)
	}
	show := mustOK(t, home, "sessions", "show", recs[0]["id"].(string))
	if !strings.Contains(show, "py> print(\"before the kill\")\nbefore the kill\n") || !strings.Contains(show, "'kept'") {
		t.Errorf("sessions show after kill -9:\n%s", show)
	}
}

// Capturing output changes nothing on the terminal: the same inputs,
// among them a repr that raises (whose traceback must not gain a frame),
// output left mid-line, a write to fd 1 and a SyntaxError, write the same
// bytes between prompts with --log-output as with --no-log (the line
// editor's drawing, which follows the keys' timing, left out).
func TestPTYLogOutputLeavesTerminalAlone(t *testing.T) {
	t.Parallel()
	inputs := []string{
		`print("a")`, "40 + 2", `import sys; print("e", file=sys.stderr)`, "1/0",
		"class R:", "    def __repr__(self): raise ValueError('no')", "",
		"R()", `print("mid", end="")`, `import os; n = os.write(1, b"fd\n")`, "1 +", "len?",
		`print("x" * 70000)`, `sys.stdout.write("w\n")`,
	}
	run := func(flag string) string {
		home := t.TempDir()
		writeConfig(t, home, "suggest = false\n")
		s := startREPLNoWait(t, home, nil, flag)
		s.ExpectString("py> ")
		for _, in := range inputs {
			enter(s, in)
			s.ExpectRegexp(regexp.MustCompile(`(py> |\.\.\. )$`))
		}
		s.Send("\x04")
		assertExit(t, s, 0)
		return editorless.ReplaceAllString(s.Output(), "<prompt>")
	}
	plain, captured := run("--no-log"), run("--log-output")
	if plain != captured {
		i := 0
		for i < len(plain) && i < len(captured) && plain[i] == captured[i] {
			i++
		}
		t.Errorf("the terminal differs with --log-output, from byte %d:\n--no-log:     %q\n--log-output: %q", i, around(plain, i), around(captured, i))
	}
	if !strings.Contains(plain, "in __repr__\r\nValueError: no\r\n") || !strings.Contains(plain, "<prompt>w\r\n2\r\n") {
		t.Errorf("the output lacks the repr's traceback or the write's count: %q", around(plain, len(plain)))
	}
}

// editorless matches the line editor's part of a PTY's output: from
// bracketed paste on to bracketed paste off.
var editorless = regexp.MustCompile(`(?s)\x1b\[\?2004h.*?\x1b\[\?2004l`)

// around is s from 200 bytes before i to 200 after.
func around(s string, i int) string { return s[max(0, i-200):min(len(s), i+200)] }

// An input's output is what it wrote while it ran: not what the
// assistant's tools made Python write (a __repr__ that prints, called by
// get_repr), nor what a thread wrote between inputs.
func TestPTYLogOutputKeepsOnlyTheInputs(t *testing.T) {
	t.Parallel()
	fake := newChatFake(t)
	home := t.TempDir()
	s := startREPLNoWait(t, home, fake.env(), "--log-output")
	s.ExpectString("py> ")
	enter(s, "class P:")
	s.ExpectString("... ")
	enter(s, `    def __repr__(self): print("from repr"); return "P()"`)
	s.ExpectString("... ")
	typeLine(t, s, "", "")
	typeLine(t, s, "p = P()", "")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "what is p?")
	s.ExpectString("Answer 1")
	s.ExpectString("ai> ")
	s.Send("\t")
	s.ExpectString("py> ")
	typeLine(t, s, `import threading; threading.Timer(0.1, print, ["late"]).start()`, "")
	s.ExpectString("late")
	typeLine(t, s, `print("next")`, "next")
	s.Send("\x04")
	assertExit(t, s, 0)
	if res := toolMessagesOf(fake.requests()[1]); len(res) != 1 || !strings.Contains(res[0], "P()") {
		t.Fatalf("get_repr did not call the __repr__: %q", res)
	}
	py := pyRecords(logsOf(t, home)[0])
	if got := strings.Join(outputOf(py[len(py)-1]), "|"); got != "stdout:next\n" {
		t.Errorf("the input after the question logged %q", got)
	}
}

// TestPTYLogOutputWithoutALogSaysSo: --log-output in a session that is
// not logged would keep nothing; pyaichat says so instead of ignoring it.
func TestPTYLogOutputWithoutALogSaysSo(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startREPLNoWait(t, home, nil, "--no-log", "--log-output")
	s.ExpectString("pyaichat: --log-output does nothing: this session is not logged")
	s.ExpectString("py> ")
	s.Send("\x04")
	assertExit(t, s, 0)
	if logs := logsOf(t, home); len(logs) != 0 {
		t.Errorf("a --no-log session wrote %d logs", len(logs))
	}
}
