package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// Ctrl-C and Ctrl-D at the prompt leave no ^C or ^D on the screen, as in
// python3.
func TestPTYCtrlCAndCtrlDLeaveNoMark(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	s.Send("half a line")
	s.ExpectCursorLine("py> half a line")
	s.Send(ptytest.CtrlC)
	s.ExpectString("KeyboardInterrupt")
	s.ExpectString("py> ")
	s.Send(ptytest.CtrlD)
	assertExit(t, s, 0)
	if out := s.Output(); strings.Contains(out, "^C") || strings.Contains(out, "^D") {
		t.Errorf("the output shows ^C or ^D:\n%s", s.Dump())
	}
	if !strings.Contains(s.Screen(), "py> half a line\nKeyboardInterrupt\npy>") {
		t.Errorf("screen:\n%s", s.Screen())
	}
}

// exit, quit, /exit and /quit at ai> leave pyaichat as exit() does at py>,
// without asking the model anything.
func TestPTYExitAtAIPrompt(t *testing.T) {
	for _, word := range []string{"exit", "quit", "/exit", "/quit"} {
		t.Run(word, func(t *testing.T) {
			t.Parallel()
			fake := newFakeOpenAI(t, "eval_expr", `{"expr":"1"}`)
			home := t.TempDir()
			s := startREPLNoWait(t, home, []string{"OPENAI_BASE_URL=" + fake.URL, "OPENAI_API_KEY=k"}, "-q")
			s.ExpectString("py> ")
			s.Send(ptytest.Tab)
			s.ExpectCursorLine("ai>")
			s.SendLine(word)
			assertExit(t, s, 0)
			if n := len(fake.requests()); n != 0 {
				t.Errorf("%q went to the model (%d requests)", word, n)
			}
		})
	}
}

// A pasted block shows what Python 3.13's REPL shows for it: the output of
// its statements and the value of its last one only.
func TestPTYPasteShowsLastValue(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	s.Paste("x = 11\nx\nx * 2\nprint('printed')\nx * 3\n")
	s.ExpectString("printed\r\n33\r\n")
	s.ExpectString("py> ")
	for _, hidden := range []string{"\r\n11\r\n", "\r\n22\r\n"} {
		if strings.Contains(s.Output(), hidden) {
			t.Errorf("the value of a statement before the last was shown (%q)\n%s", hidden, s.Dump())
		}
	}
}

// pyaichat -p in a pipeline: standard input goes with the question, the
// setup's output to stderr, and stdout carries the answer alone.
func TestOneShotInPipeline(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "eval_expr", `{"expr":"len(words)"}`)
	home := t.TempDir()
	cmd := exec.Command(binary, "-p", "why did this fail?", "-c", "words = 'a b c'.split(); print('setup output')")
	cmd.Env = append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=k")
	cmd.Stdin = strings.NewReader("Traceback: KeyError 'b'\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat -p: %v\nstderr: %s", err, stderr.String())
	}
	if strings.Contains(stdout.String(), "setup output") || !strings.Contains(stderr.String(), "setup output") {
		t.Errorf("the setup's output went to stdout:\nstdout %q\nstderr %q", stdout.String(), stderr.String())
	}
	reqs := fake.requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	body, _ := json.Marshal(reqs[0]["messages"])
	if !strings.Contains(string(body), "why did this fail?") || !strings.Contains(string(body), "Traceback: KeyError 'b'") {
		t.Errorf("the question did not carry standard input: %s", body)
	}
}

// pyaichat -p "q" > answer.txt from a terminal does not wait for the
// terminal's Ctrl-D: stdin goes with the question only when it is not a
// terminal, whatever stdout is.
func TestOneShotTerminalStdinRedirectedStdout(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t, fakemodel.Reply{Text: "forty-two", Usage: fakeUsage})
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	// A hang detector, not a timing assertion: without the fix pyaichat
	// reads the terminal until the test's context kills it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "-p", "what is the answer?")
	cmd.Env = append(testEnv(t.TempDir(), "xterm"), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=k")
	var stdout, stderr strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat -p with a terminal for stdin: %v (context: %v)\nstderr: %s", err, ctx.Err(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "forty-two") {
		t.Errorf("stdout %q lacks the answer", stdout.String())
	}
	body, _ := json.Marshal(fake.Requests()[0].JSON()["messages"])
	if !strings.Contains(string(body), "what is the answer?") {
		t.Errorf("the question was not sent: %s", body)
	}
}

// pyaichat -p "q" -c CODE --json gives --json to CODE's sys.argv, as
// python3 gives it everything after -c CODE, and says so on stderr in one
// line.
func TestOneShotWarnsOfOwnOptionsAfterCode(t *testing.T) {
	t.Parallel()
	answer := fakemodel.Reply{Text: "forty-two", Usage: fakeUsage}
	fake := fakemodel.New(t, answer, answer)
	cmd := exec.Command(binary, "-p", "what is x?", "-c", "import sys; x = 1; print(sys.argv)", "--json", "--model=m")
	cmd.Env = append(testEnv(t.TempDir(), ""), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=k")
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat -p: %v\nstderr: %s", err, stderr.String())
	}
	const warning = "pyaichat: --json, --model went to the script's sys.argv; pyaichat's own options go before -c, -m or FILE\n"
	if strings.Count(stderr.String(), warning) != 1 {
		t.Errorf("stderr lacks the one-line warning %q:\n%s", warning, stderr.String())
	}
	if !strings.Contains(stderr.String(), "['-c', '--json', '--model=m']") {
		t.Errorf("the setup code's sys.argv is not python3's:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "forty-two") || strings.HasPrefix(stdout.String(), "{") {
		t.Errorf("stdout %q is not the answer as prose", stdout.String())
	}

	// Before -c, the same options are pyaichat's and nothing is said.
	cmd = exec.Command(binary, "-p", "what is x?", "--json", "-c", "x = 1")
	cmd.Env = append(testEnv(t.TempDir(), ""), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=k")
	cmd.Stdin = strings.NewReader("")
	stdout.Reset()
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat -p --json: %v\nstderr: %s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "sys.argv") || !strings.HasPrefix(stdout.String(), "{") {
		t.Errorf("--json before -c: stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// A base URL without its scheme is refused in one line that says what is
// missing, not in url.Parse's words.
func TestBaseURLWithoutScheme(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "--base-url", "127.0.0.1:9/v1", "-p", "hello?")
	cmd.Env = append(testEnv(t.TempDir(), ""), "OPENAI_API_KEY=k")
	var stdout, stderr strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("status: %v, want exit status 2", err)
	}
	const want = "pyaichat: base URL \"127.0.0.1:9/v1\" must start with http:// or https://\n"
	if stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// A key rejected under --provider names the preset's variable, the one
// the key was read from, not OPENAI_API_KEY.
func TestRejectedKeyNamesThePresetsVariable(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t, fakemodel.Reply{Status: http.StatusUnauthorized, Error: "Incorrect API key provided: sk-or-***"})
	cmd := exec.Command(binary, "--provider", "openrouter", "--base-url", fake.URL, "-p", "hello?")
	cmd.Env = append(testEnv(t.TempDir(), ""), "OPENROUTER_API_KEY=sk-or-wrong")
	var stdout, stderr strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("status: %v, want exit status 1", err)
	}
	if !strings.Contains(stderr.String(), "(HTTP 401); check OPENROUTER_API_KEY\n") || strings.Contains(stderr.String(), "OPENAI_API_KEY") {
		t.Errorf("stderr does not name OPENROUTER_API_KEY alone:\n%s", stderr.String())
	}
}

// The exit statuses of pyaichat -p: 2 for a bad command line or
// configuration, 1 when the question fails, 130 for Ctrl-C.
func TestOneShotExitStatuses(t *testing.T) {
	t.Parallel()
	failing := fakemodel.New(t, fakemodel.Reply{Status: http.StatusNotFound, Error: "the model is not here"})
	// Never answers: it waits for the client to leave.
	hanging := fakemodel.New(t, fakemodel.Reply{Before: make(chan struct{})})
	run := func(env []string, interruptAfter time.Duration, args ...string) int {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(testEnv(t.TempDir(), ""), env...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if interruptAfter > 0 {
			time.AfterFunc(interruptAfter, func() { cmd.Process.Signal(syscall.SIGINT) })
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 0
	}
	if got := run(nil, 0, "-p", "hello?"); got != 2 {
		t.Errorf("not configured: status %d, want 2", got)
	}
	if got := run(nil, 0, "--venv", "/nonexistent", "-p", "hello?"); got != 2 {
		t.Errorf("a --venv that does not exist: status %d, want 2", got)
	}
	if got := run([]string{"OPENAI_BASE_URL=" + failing.URL, "OPENAI_API_KEY=k"}, 0, "-p", "hello?"); got != 1 {
		t.Errorf("a server error: status %d, want 1", got)
	}
	if got := run([]string{"OPENAI_BASE_URL=" + hanging.URL, "OPENAI_API_KEY=k"}, time.Second, "-p", "hello?"); got != 130 {
		t.Errorf("Ctrl-C: status %d, want 130", got)
	}
}

// name?? shows the source of a function (decorated too), a method or a
// class defined at the prompt, from the input that defined it, while
// a traceback through that function shows what python3 -i shows: before
// 3.13, no source lines for "<stdin>".
func TestHelpShowsSourceTypedAtPrompt(t *testing.T) {
	t.Parallel()
	define := "def fib(n):\n    \"Fibonacci.\"\n    return n if n < 2 else fib(n-1) + fib(n-2)\n\n" +
		"old = fib\n" +
		"class Point:\n    def norm(self):\n        return 0\n\n" +
		"def fib(n):\n    return -n\n\n" +
		"p = Point()\n" +
		"import functools\ndef deco(f):\n    @functools.wraps(f)\n    def inner(*a):\n        return f(*a)\n    return inner\n\n" +
		"@deco\ndef tripled(x):\n    return x * 3\n\n"
	crash := "def boom(x):\n    return 1 / x\n\nboom(0)\n"
	dir := t.TempDir()
	r := runWith(t, dir, binary, []string{"-q"}, define+"fib??\nold??\nPoint??\nPoint.norm??\np.norm??\ntripled??\n"+crash)
	// Each source is followed by the Type line (3.13, whose inputs are
	// in linecache, puts a File line between).
	for _, want := range []string{
		"def fib(n):\n    return -n\n",
		"def fib(n):\n    \"Fibonacci.\"\n    return n if n < 2 else fib(n-1) + fib(n-2)\n",
		"class Point:\n    def norm(self):\n        return 0\n",
		"    def norm(self):\n        return 0\n",
		"@deco\ndef tripled(x):\n    return x * 3\n",
	} {
		if !regexp.MustCompile(regexp.QuoteMeta(want) + `(File: .*\n)?Type: `).MatchString(r.stdout) {
			t.Errorf("stdout lacks %q then the type:\n%s", want, r.stdout)
		}
	}
	if n := strings.Count(r.stdout, "    def norm(self):\n        return 0\n"); n != 3 {
		t.Errorf("Point??, Point.norm?? and p.norm?? show the method's source %d times, want 3:\n%s", n, r.stdout)
	}
	py := runWith(t, dir, pythonOracle, []string{"-q", "-i"}, crash)
	if got, want := stripPrompts(r.stderr), stripPrompts(py.stderr); !strings.HasSuffix(got, want) {
		t.Errorf("the traceback differs from python3's:\n%s\nwant it to end with\n%s", got, want)
	}
}

// obj? and obj?? show what IPython shows (signature, docstring, type; the
// source), for lines that are otherwise a SyntaxError.
func TestHelpOnObjects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runWith(t, dir, binary, []string{"-q"}, "import math, json\nmath.sqrt?\njson.dumps??\nnosuch?\nx = [1]\nx?\n[1, 2]\n")
	for _, want := range []string{
		"Signature: math.sqrt(x, /)\nDocstring: Return the square root of x.\nType:      builtin_function_or_method\n",
		"def dumps(obj, *, skipkeys=False",
		"File:      ",
		"Object `nosuch` not found.\n",
		"Docstring: Built-in mutable sequence.",
		"Type:      list\n",
		"[1, 2]\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stderr, "Error") {
		t.Errorf("stderr: %s", r.stderr)
	}
}
