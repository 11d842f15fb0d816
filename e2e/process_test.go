package e2e

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// The process as python3's: what happens to the process as a whole
// (signals at the prompt, exit), each checked against python3 -q -i of the
// same version, under a PTY and from a pipe.

// handlerBound bounds the wait for a signal handler's output: a bound on a
// hang, not a measure of speed (the machine may be loaded).
const handlerBound = 10 * time.Second

// oracleArgs are the arguments that make program an interactive
// interpreter: python3 needs -i (its stdin may be a pipe), pyaichat is one.
func oracleArgs(program string, args ...string) []string {
	if program == pythonOracle {
		return append([]string{"-i"}, args...)
	}
	return args
}

// promptOf is the program's primary prompt.
func promptOf(program string) string {
	if program == pythonOracle {
		return ">>> "
	}
	return "py> "
}

// idleSession starts program on a PTY, runs setup at its prompt and waits
// until it is idle at the next prompt.
func idleSession(t *testing.T, program string, setup ...string) *ptytest.Proc {
	t.Helper()
	// 3.13's new REPL draws its line its own way: the basic one, as
	// earlier versions', is the one compared with; no colours in
	// tracebacks.
	s := startProgram(t, program, "", []string{"PYTHON_BASIC_REPL=1", "PYTHON_COLORS=0"}, oracleArgs(program, "-q")...)
	prompt := promptOf(program)
	s.ExpectString(prompt)
	for _, line := range setup {
		s.SendLine(line)
		s.ExpectString(line + "\r\n")
		if strings.HasPrefix(line, "def ") {
			s.ExpectString("... ")
		} else {
			s.ExpectString(prompt)
		}
	}
	promptWaits(t, s)
	return s
}

// mainThreadWaits waits until the main thread of process pid, python3's
// only one and pyaichat's interpreter thread, is blocked waiting for input
// or jobs, as at an idle prompt. A signal that came just before that wait
// began would be seen only at the next key, in python3 too (its handler
// runs when the read is interrupted).
func mainThreadWaits(t *testing.T, pid int) {
	t.Helper()
	if err := threadWaits(pid); err != nil {
		t.Fatal(err)
	}
}

// promptWaits is mainThreadWaits for a program on a terminal, whose
// screen and end say more when it never waits.
func promptWaits(t *testing.T, s *ptytest.Proc) {
	t.Helper()
	if err := threadWaits(s.Pid()); err != nil {
		t.Fatalf("%v\n%s", err, s.Dump())
	}
}

// threadWaits is mainThreadWaits's wait: an error when the process ended
// or never waited.
func threadWaits(pid int) error {
	deadline := time.Now().Add(ptytest.DefaultTimeout)
	path := fmt.Sprintf("/proc/%d/task/%d/wchan", pid, pid)
	for {
		wchan, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("process %d ended before it waited for input", pid)
		}
		for _, w := range []string{"pipe_read", "poll_schedule_timeout", "do_select", "wait_woken"} {
			if strings.Contains(string(wchan), w) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d never waited for input (its main thread is in %q)", pid, wchan)
		}
		time.Sleep(time.Millisecond)
	}
}

// A signal's Python handler runs at once while the interpreter waits at
// its prompt, as in python3, for each signal a user may handle: sent by
// another process, by signal.alarm, and by a thread of the user's.
func TestSignalHandlersAtThePrompt(t *testing.T) {
	for _, program := range []string{pythonOracle, binary} {
		t.Run(promptOf(program), func(t *testing.T) {
			t.Parallel()
			s := idleSession(t, program,
				"import os, signal, threading",
				"def h(n, f): print('handled', signal.Signals(n).name)",
				"")
			for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGALRM} {
				name := signalName(sig)
				enter(s, "old = signal.signal(signal."+name+", h)")
				s.ExpectString(promptOf(program))
				promptWaits(t, s)
				sent := time.Now()
				if err := syscall.Kill(s.Pid(), sig); err != nil {
					t.Fatal(err)
				}
				s.ExpectStringTimeout("handled "+name+"\r\n", handlerBound)
				t.Logf("%s handled %v after it was sent", name, time.Since(sent).Round(time.Microsecond))
			}
			s.SendLine("signal.alarm(1)")
			s.ExpectStringTimeout("handled SIGALRM\r\n", handlerBound)
			s.SendLine("threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR1)).start()")
			s.ExpectStringTimeout("handled SIGUSR1\r\n", handlerBound)
			s.SendLine("'alive'")
			s.ExpectString("'alive'\r\n")
		})
	}
}

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGUSR1:
		return "SIGUSR1"
	case syscall.SIGALRM:
		return "SIGALRM"
	}
	return sig.String()
}

// What a handler raises at the prompt is shown as python3's prompt shows
// it: the line being typed goes, the traceback comes, sys.last_* are set;
// and SystemExit exits with its status.
func TestSignalHandlerErrorsAtThePrompt(t *testing.T) {
	for _, program := range []string{pythonOracle, binary} {
		t.Run(promptOf(program), func(t *testing.T) {
			t.Parallel()
			prompt := promptOf(program)
			s := idleSession(t, program,
				"import signal, sys",
				"def boom(n, f): raise RuntimeError('boom')",
				"",
				"old = signal.signal(signal.SIGUSR1, boom)",
				"old = signal.signal(signal.SIGTERM, lambda n, f: sys.exit(3))")
			s.Send("half a line")
			s.ExpectString("half a line")
			promptWaits(t, s)
			if err := syscall.Kill(s.Pid(), syscall.SIGUSR1); err != nil {
				t.Fatal(err)
			}
			s.ExpectStringTimeout("Traceback (most recent call last):\r\n", handlerBound)
			s.ExpectString(", in boom\r\n")
			s.ExpectString("RuntimeError: boom\r\n")
			s.ExpectString(prompt)
			s.SendLine("sys.last_type.__name__, str(sys.last_value)")
			s.ExpectString("('RuntimeError', 'boom')\r\n")
			s.ExpectString(prompt)
			promptWaits(t, s)
			if err := syscall.Kill(s.Pid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if got := s.ExpectExit(); got != 3 {
				t.Errorf("exit status %d after a handler's sys.exit(3), want 3\n%s", got, s.Dump())
			}
		})
	}
}

// From a pipe, a handler runs while the interpreter waits for the next
// line, and what it raises is shown before the next prompt; the lines
// after it run. python3 and pyaichat print the same.
func TestSignalHandlersFromAPipe(t *testing.T) {
	setup := "import os, signal, sys\n" +
		"def h(n, f): print('handled', signal.Signals(n).name, flush=True)\n\n" +
		"def boom(n, f): raise RuntimeError('boom')\n\n" +
		"old = signal.signal(signal.SIGHUP, h)\n" +
		"old = signal.signal(signal.SIGUSR1, boom)\n" +
		"old = signal.signal(signal.SIGTERM, lambda n, f: sys.exit(3))\n" +
		"print('ready', flush=True)\n"
	type run struct {
		stdout, stderr string
		status         int
	}
	drive := func(t *testing.T, program string) run {
		cmd := exec.Command(program, oracleArgs(program, "-q")...)
		cmd.Env = testEnv(t.TempDir(), "")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var out []string
		await := func(want string) {
			t.Helper()
			deadline := time.After(handlerBound)
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("%s: stdout ended waiting for %q:\n%s\nstderr:\n%s", program, want, strings.Join(out, "\n"), stderr.String())
					}
					out = append(out, l)
					if l == want {
						return
					}
				case <-deadline:
					t.Fatalf("%s: no %q on stdout within %v:\n%s", program, want, handlerBound, strings.Join(out, "\n"))
				}
			}
		}
		io.WriteString(stdin, setup)
		await("ready")
		mainThreadWaits(t, cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGHUP)
		await("handled SIGHUP")
		mainThreadWaits(t, cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGUSR1)
		// The traceback comes before the line after it runs.
		time.Sleep(300 * time.Millisecond)
		io.WriteString(stdin, "print(sys.last_type.__name__, flush=True)\n")
		await("RuntimeError")
		mainThreadWaits(t, cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGTERM)
		for l := range lines {
			out = append(out, l)
		}
		err = cmd.Wait()
		r := run{stdout: strings.Join(out, "\n"), stderr: stripPrompts(stderr.String())}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.status = ee.ExitCode()
		}
		return r
	}
	want := drive(t, pythonOracle)
	got := drive(t, binary)
	if got != want {
		t.Errorf("python3 -i:\nstatus %d\nstdout:\n%s\nstderr:\n%s\npyaichat:\nstatus %d\nstdout:\n%s\nstderr:\n%s\n%s",
			want.status, want.stdout, want.stderr, got.status, got.stdout, got.stderr, lineDiff(want.stderr, got.stderr))
	}
}

// exitNotice is the line pyaichat adds while exit waits for long.
var exitNotice = regexp.MustCompile(`pyaichat: waiting for Python's (non-daemon threads to end|atexit handlers to finish) \(Ctrl-C stops the wait\)\n`)

// Exit waits for non-daemon threads and then runs every atexit handler,
// for as long as they take, as python3 does; pyaichat says what it waits
// for after a few seconds.
func TestExitWaitsAsPython(t *testing.T) {
	cases := map[string]struct{ input, notice string }{
		"a slow atexit handler": {
			"import atexit, time\n" +
				"atexit.register(lambda: (time.sleep(5), print('atexit done'))) and None\n",
			"atexit handlers to finish"},
		"a non-daemon thread, then atexit": {
			"import atexit, threading, time\n" +
				"atexit.register(print, 'atexit ran') and None\n" +
				"threading.Thread(target=lambda: (time.sleep(5), print('thread done'))).start()\n",
			"non-daemon threads to end"},
		"no thread, a quick handler": {
			"import atexit\natexit.register(print, 'bye') and None\n", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			want := runWith(t, dir, pythonOracle, []string{"-q", "-i"}, c.input)
			got := runWith(t, dir, binary, []string{"-q"}, c.input)
			notices := exitNotice.FindAllStringSubmatch(got.stderr, -1)
			switch {
			case c.notice == "" && len(notices) > 0:
				t.Errorf("pyaichat said it waited where nothing waits:\n%s", got.stderr)
			case c.notice != "" && (len(notices) != 1 || notices[0][1] != c.notice):
				t.Errorf("pyaichat did not say once that it waits for %s:\n%s", c.notice, got.stderr)
			}
			got.stderr = exitNotice.ReplaceAllString(got.stderr, "")
			if got.stdout != want.stdout || got.status != want.status || stripPrompts(got.stderr) != stripPrompts(want.stderr) {
				t.Errorf("python3 -i:\nstatus %d\nstdout:\n%s\nstderr:\n%s\npyaichat:\nstatus %d\nstdout:\n%s\nstderr:\n%s",
					want.status, want.stdout, want.stderr, got.status, got.stdout, got.stderr)
			}
		})
	}
}

// Ctrl-C while exit waits for a thread stops that wait as in python3: a
// KeyboardInterrupt reported as ignored, then the atexit handlers run.
func TestPTYCtrlCStopsTheWaitAtExit(t *testing.T) {
	var outputs [2]string
	for i, program := range []string{pythonOracle, binary} {
		s := idleSession(t, program,
			"import atexit, threading, time",
			"f = atexit.register(print, 'atexit ran')",
			"threading.Thread(target=time.sleep, args=(60,)).start()")
		s.Send(ptytest.CtrlD)
		// A Ctrl-C is a signal at once, ahead of the Ctrl-D still queued:
		// it is sent once exit waits in the thread's lock.
		waitsInLock(t, s.Pid())
		s.Send(ptytest.CtrlC)
		s.ExpectString("atexit ran\r\n")
		if got := s.ExpectExit(); got != 0 {
			t.Errorf("%s: exit status %d after Ctrl-C at exit, want 0\n%s", program, got, s.Dump())
		}
		// From the report of the KeyboardInterrupt (3.13's names no
		// "Exception ignored").
		out := s.Output()
		from := strings.Index(out, "Traceback")
		if j := strings.Index(out, "Exception ignored"); j >= 0 && (from < 0 || j < from) {
			from = j
		}
		if from < 0 {
			t.Fatalf("%s: no KeyboardInterrupt reported after Ctrl-C at exit\n%s", program, s.Dump())
		}
		outputs[i] = out[from:]
	}
	if outputs[0] != outputs[1] {
		t.Errorf("after Ctrl-C at exit, python3 -i printed\n%s\npyaichat\n%s", outputs[0], outputs[1])
	}
}

// waitsInLock waits until the main thread of process pid waits for a
// lock (a futex): exit waits there for a thread.
func waitsInLock(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(ptytest.DefaultTimeout)
	path := fmt.Sprintf("/proc/%d/task/%d/wchan", pid, pid)
	for {
		wchan, _ := os.ReadFile(path)
		if strings.Contains(string(wchan), "futex") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never waited for a lock (its main thread is in %q)", pid, wchan)
		}
		time.Sleep(time.Millisecond)
	}
}

// When the standard streams cannot be flushed at exit, the status is 120,
// as python3's.
func TestExitStatusWhenStdoutCannotBeFlushed(t *testing.T) {
	for _, args := range [][]string{{"-q"}, {"-q", "-c", "print(1)"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			run := func(program string) result {
				full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer full.Close()
				cmd := exec.Command(program, oracleArgs(program, args...)...)
				cmd.Env = testEnv(t.TempDir(), "")
				cmd.Stdin = strings.NewReader("print(2)\n")
				cmd.Stdout = full
				var stderr strings.Builder
				cmd.Stderr = &stderr
				err = cmd.Run()
				return resultOf(t, err, "", stripPrompts(stderr.String()))
			}
			want, got := run(pythonOracle), run(binary)
			if got != want {
				t.Errorf("stdout on /dev/full: python3 -i ended with %d:\n%s\npyaichat with %d:\n%s", want.status, want.stderr, got.status, got.stderr)
			}
		})
	}
}

// Under -P and -I, a directory or zip file run as the script still goes
// first on sys.path, as python3 puts it there to import its __main__; a
// file does not.
func TestSafePathRunsDirectoryAndZip(t *testing.T) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	if err := os.Mkdir(app, 0o755); err != nil {
		t.Fatal(err)
	}
	main := "import sys; print('main', sys.path[0])\n"
	if err := os.WriteFile(filepath.Join(app, "__main__.py"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(dir, "app.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	w, err := zw.Create("__main__.py")
	if err == nil {
		_, err = io.WriteString(w, main)
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := zf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-q", "-I", "app"}, {"-q", "-P", "app.zip"}, {"-q", "-P", "app"}, {"-q", "-I", "app/__main__.py"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want := runWith(t, dir, pythonOracle, append([]string{"-i"}, args...), "")
			got := runWith(t, dir, binary, args, "")
			if got.stdout != want.stdout || got.status != want.status || stripPrompts(got.stderr) != stripPrompts(want.stderr) {
				t.Errorf("python3 -i %v:\nstatus %d\nstdout:\n%s\nstderr:\n%s\npyaichat:\nstatus %d\nstdout:\n%s\nstderr:\n%s",
					args, want.status, want.stdout, want.stderr, got.status, got.stdout, got.stderr)
			}
		})
	}
}

// At exit, __main__'s objects are destroyed before the modules they
// need, as in python3: an open multiprocessing.Pool closes quietly.
func TestMainObjectsDestroyedFirstAtExit(t *testing.T) {
	cases := map[string]string{
		"an open Pool": "import multiprocessing\np = multiprocessing.Pool(2)\n",
		"a __del__ that uses a module": "import json\n" +
			"class A:\n" +
			"    def __del__(self):\n" +
			"        print('del', json.dumps([1]))\n\n" +
			"a = A()\n",
	}
	for name, input := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			want := runWith(t, dir, pythonOracle, []string{"-q", "-i"}, input)
			got := runWith(t, dir, binary, []string{"-q"}, input)
			if got.stdout != want.stdout || got.status != want.status || stripPrompts(got.stderr) != stripPrompts(want.stderr) {
				t.Errorf("python3 -i:\nstatus %d\nstdout:\n%s\nstderr:\n%s\npyaichat:\nstatus %d\nstdout:\n%s\nstderr:\n%s",
					want.status, want.stdout, want.stderr, got.status, got.stdout, got.stderr)
			}
		})
	}
}

// runBounded is runWith with stdin empty, killing the program if it has
// not ended within a minute (a hang).
func runBounded(t *testing.T, dir, program string, args []string) result {
	t.Helper()
	cmd := exec.Command(program, args...)
	cmd.Dir = dir
	cmd.Env = testEnv(dir, "")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Fatalf("%s %v did not end within a minute:\nstdout:\n%s\nstderr:\n%s", program, args, out.String(), errb.String())
	}
	return resultOf(t, err, out.String(), errb.String())
}

// A process forked in an atexit handler goes on with its parent's exit
// and ends, as python3's does (test_threading's test_fork_at_exit hung).
func TestForkAtExit(t *testing.T) {
	dir := t.TempDir()
	script := "import atexit, os, sys\n" +
		"def handler():\n" +
		"    pid = os.fork()\n" +
		"    if pid == 0:\n" +
		"        print('child ok', flush=True)\n" +
		"    else:\n" +
		"        print('child status', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)\n" +
		"atexit.register(handler)\n"
	if err := os.WriteFile(filepath.Join(dir, "forks.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	want := runBounded(t, dir, pythonOracle, []string{"-q", "-i", "forks.py"})
	got := runBounded(t, dir, binary, []string{"-q", "forks.py"})
	// 3.12 refuses to fork at exit, naming the handler.
	address := regexp.MustCompile(` at 0x[0-9a-f]+`)
	want.stderr, got.stderr = address.ReplaceAllString(want.stderr, ""), address.ReplaceAllString(got.stderr, "")
	got.stderr = withoutForkWarning(got.stderr)
	if got.stdout != want.stdout || got.status != want.status || stripPrompts(got.stderr) != stripPrompts(want.stderr) {
		t.Errorf("python3 -i:\nstatus %d\nstdout:\n%s\nstderr:\n%s\npyaichat:\nstatus %d\nstdout:\n%s\nstderr:\n%s",
			want.status, want.stdout, want.stderr, got.status, got.stdout, got.stderr)
	}
}

// forkWarning is 3.12's and later's DeprecationWarning for a fork in a
// process of several threads, with the line it quotes: Go's runtime has
// threads of its own, so pyaichat's fork always gets it (see README).
var forkWarning = regexp.MustCompile(`(?m)^.*DeprecationWarning: This process \(pid=\d+\) is multi-threaded, use of fork\(\) may lead to deadlocks in the child\.\n(  .*\n)?`)

func withoutForkWarning(s string) string { return forkWarning.ReplaceAllString(s, "") }

// A process forked while FILE or -c runs waits for its threads and runs
// its atexit handlers when it ends, as python3's does. (python3's child
// would then read the terminal as a second REPL; pyaichat's ends with the
// script and says so.)
func TestForkInScriptExitsAsPython(t *testing.T) {
	dir := t.TempDir()
	script := "import atexit, os, threading, time\n" +
		"pid = os.fork()\n" +
		"if pid == 0:\n" +
		"    atexit.register(print, 'child atexit', flush=True)\n" +
		"    threading.Thread(target=lambda: (time.sleep(0.5), print('child thread done', flush=True))).start()\n" +
		"else:\n" +
		"    os.waitpid(pid, 0)\n" +
		"    print('parent waited', flush=True)\n"
	if err := os.WriteFile(filepath.Join(dir, "forks.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-q", "forks.py"}, {"-q", "-c", script}} {
		t.Run(args[1], func(t *testing.T) {
			want := runBounded(t, dir, pythonOracle, append([]string{"-i"}, args...))
			got := runBounded(t, dir, binary, args)
			const ends = "pyaichat: the process forked by this statement ends here"
			if got.stdout != want.stdout || got.status != want.status || strings.Count(got.stderr, ends) != 1 || strings.Contains(got.stderr, "Traceback") {
				t.Errorf("python3 -i:\nstatus %d\nstdout:\n%s\nstderr:\n%s\npyaichat:\nstatus %d\nstdout:\n%s\nstderr:\n%s",
					want.status, want.stdout, want.stderr, got.status, got.stdout, got.stderr)
			}
		})
	}
}

// sys.ps1 and sys.ps2 are python3's, so code.interact() prompts as it
// does in python3.
func TestPromptsInSysAsPython(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := "import sys; print(repr(sys.ps1), repr(sys.ps2))\n"
	want := runWith(t, dir, pythonOracle, []string{"-q", "-i"}, input)
	got := runWith(t, dir, binary, []string{"-q"}, input)
	if got.stdout != want.stdout {
		t.Errorf("sys.ps1, sys.ps2: python3 -i %q, pyaichat %q", want.stdout, got.stdout)
	}
	s := startREPL(t, "", "-q")
	enter(s, "import code; code.interact(banner='', local={'y': 5})")
	s.ExpectString(">>> ")
	s.SendLine("y * 2")
	s.ExpectString("10\r\n>>> ")
	s.Send(ptytest.CtrlD)
	s.ExpectString("py> ")
}

// From a pipe, sys.stdin has what python3's TextIOWrapper has there:
// mode, line_buffering, write_through, reconfigure(). (Reading it is not
// compared: python3's prompt and sys.stdin buffer the pipe apart, and
// whichever reads first takes what the other would have read.)
func TestPipedStdinAsPython(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := "import sys\n" +
		"print(sys.stdin.mode, sys.stdin.line_buffering, sys.stdin.write_through, sys.stdin.encoding, sys.stdin.errors, sys.stdin.newlines)\n" +
		"sys.stdin.reconfigure(errors='replace')\n" +
		"print(sys.stdin.errors)\n"
	want := runWith(t, dir, pythonOracle, []string{"-q", "-i"}, input)
	got := runWith(t, dir, binary, []string{"-q"}, input)
	if got.stdout != want.stdout || stripPrompts(got.stderr) != stripPrompts(want.stderr) {
		t.Errorf("python3 -i:\nstdout:\n%s\nstderr:\n%s\npyaichat:\nstdout:\n%s\nstderr:\n%s", want.stdout, want.stderr, got.stdout, got.stderr)
	}
	// The errors set apply to the lines read after.
	read := runWith(t, dir, binary, []string{"-q"}, "import sys\nsys.stdin.reconfigure(errors='replace')\nprint(repr(sys.stdin.readline()))\n\xff\xfeabc\n")
	if read.stdout != "'\ufffd\ufffdabc\\n'\n" {
		t.Errorf("a line read after reconfigure(errors='replace'): %q, want the two bytes replaced\n%s", read.stdout, read.stderr)
	}
}

// Under -u python3 reads a piped stdin unbuffered: what follows the line
// it took is still in the pipe for os.read(0) or a child; without -u its
// buffer took it.
func TestUnbufferedPipedStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	input := "import os\nprint(os.read(0, 100))\nrest\n"
	for _, args := range [][]string{{"-q", "-u"}, {"-q"}} {
		want := runWith(t, dir, pythonOracle, append([]string{"-i"}, args...), input)
		got := runWith(t, dir, binary, args, input)
		if got.stdout != want.stdout || stripPrompts(got.stderr) != stripPrompts(want.stderr) {
			t.Errorf("python3 -i %v:\nstdout:\n%s\nstderr:\n%s\npyaichat:\nstdout:\n%s\nstderr:\n%s", args, want.stdout, want.stderr, got.stdout, got.stderr)
		}
	}
}

// A trace or profile function sees the user's code only, as in python3,
// whose loop is C: not pyaichat's REPL helper, nor the suggester that
// runs while a line is typed.
func TestTraceSeesUserCodeOnly(t *testing.T) {
	t.Parallel()
	lines := []string{
		"import sys",
		"calls = []",
		// 3.13's python3 -i registers each input's source from Python
		// (_register_code), which its trace sees: left out.
		"tr = lambda frame, event, arg: None if frame.f_code.co_name == '_register_code' else calls.append(event + ' ' + frame.f_code.co_name)",
		"sys.settrace(tr)",
		"x = sorted([2, 1])",
		"sys.settrace(None)",
		"sys.setprofile(tr)",
		"y = sorted([2, 1])",
		"sys.setprofile(None)",
	}
	dir := t.TempDir()
	input := strings.Join(lines, "\n") + "\nprint(calls)\n"
	want := runWith(t, dir, pythonOracle, []string{"-q", "-i"}, input)
	got := runWith(t, dir, binary, []string{"-q"}, input)
	if got.stdout != want.stdout {
		t.Errorf("from a pipe, python3 -i traced:\n%s\npyaichat:\n%s", want.stdout, got.stdout)
	}
	var screens [2]string
	for i, program := range []string{pythonOracle, binary} {
		s := idleSession(t, program, lines...)
		s.SendLine("print(calls)")
		screens[i] = s.ExpectString("]\r\n")
	}
	if !strings.HasSuffix(screens[1], screens[0][strings.LastIndex(screens[0], "["):]) {
		t.Errorf("typed at the prompt, python3 -i traced:\n%s\npyaichat:\n%s", screens[0], screens[1])
	}
}

// python3's options that pyaichat used to refuse: -x, -R, -d, -v,
// --check-hash-based-pycs and the --help-* texts.
func TestMorePython3Options(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "launcher.py"), []byte("@echo off & python -x %0\nprint('ran')\n1/0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"-q", "-x", "launcher.py"},
		{"-q", "-R", "-d", "-c", "import sys; print(sys.flags.hash_randomization, sys.flags.debug)"},
		{"-q", "--check-hash-based-pycs", "always", "-c", "import _imp; print(_imp.check_hash_based_pycs)"},
		{"-q", "--check-hash-based-pycs", "sometimes"},
		{"--help-env"},
		{"--help-xoptions"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want := runWith(t, dir, pythonOracle, append([]string{"-i"}, args...), "")
			got := runWith(t, dir, binary, args, "")
			want.stderr = strings.ReplaceAll(want.stderr, "usage: "+pythonOracle, "usage: pyaichat")
			want.stderr = strings.ReplaceAll(want.stderr, "`python -h'", "`pyaichat -h'")
			if got.stdout != want.stdout || got.status != want.status || stripPrompts(got.stderr) != stripPrompts(want.stderr) {
				t.Errorf("python3 -i %v:\nstatus %d\nstdout:\n%s\nstderr:\n%s\npyaichat:\nstatus %d\nstdout:\n%s\nstderr:\n%s",
					args, want.status, want.stdout, want.stderr, got.status, got.stdout, got.stderr)
			}
		})
	}
	got := runWith(t, dir, binary, []string{"-q", "-v", "-c", "import sys; print(sys.flags.verbose)"}, "")
	if got.stdout != "1\n" || !strings.Contains(got.stderr, "# installing zipimport hook") {
		t.Errorf("-v: stdout %q, want 1, and the import log on stderr:\n%s", got.stdout, got.stderr)
	}
}

// After sys.stdin.close() on a terminal, input() raises as in python3
// rather than read the terminal.
func TestPTYInputAfterStdinClosed(t *testing.T) {
	for _, program := range []string{pythonOracle, binary} {
		s := idleSession(t, program, "import sys; sys.stdin.close()")
		s.SendLine("input('x: ')")
		s.ExpectString("ValueError: I/O operation on closed file.\r\n")
		s.SendLine("print('alive')")
		s.ExpectString("alive\r\n")
	}
}

// A standard stream whose descriptor is closed at start is None in sys,
// as in python3 (Go's runtime opens /dev/null there before pyaichat
// starts).
func TestClosedStandardStreamsAreNone(t *testing.T) {
	cases := map[string]struct{ redirect, code string }{
		"stdin":  {"<&-", "import sys, os; os.write(1, repr((sys.stdin, sys.__stdin__)).encode() + b'\\n')"},
		"stdout": {">&- </dev/null", "import sys, os; os.write(2, repr((sys.stdout, sys.__stdout__)).encode() + b'\\n')"},
		"stderr": {"2>&- </dev/null", "import sys, os; os.write(1, repr((sys.stderr, sys.__stderr__)).encode() + b'\\n')"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var outs [2]string
			for i, program := range []string{pythonOracle, binary} {
				args := strings.Join(oracleArgs(program, "-q", "-c", "\"$0\""), " ")
				cmd := exec.Command("sh", "-c", "exec "+program+" "+args+" "+c.redirect, c.code)
				cmd.Env = testEnv(t.TempDir(), "")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", program, err, out)
				}
				outs[i] = strings.SplitN(string(out), "\n", 2)[0]
			}
			if outs[0] != outs[1] {
				t.Errorf("%s closed at start: python3 -i has %s, pyaichat %s", name, outs[0], outs[1])
			}
		})
	}
}

// At the prompt, a Ctrl-C or a SIGINT from another process does what the
// user's code set SIGINT to do, as at python3's prompt: under SIG_IGN
// nothing (the line stays), under SIG_DFL the process dies by it.
func TestSIGINTAtThePromptAsSet(t *testing.T) {
	for _, program := range []string{pythonOracle, binary} {
		t.Run(promptOf(program), func(t *testing.T) {
			t.Parallel()
			s := idleSession(t, program, "import signal", "old = signal.signal(signal.SIGINT, signal.SIG_IGN)")
			s.Send("12")
			s.ExpectString("12")
			promptWaits(t, s)
			s.Send(ptytest.CtrlC)
			if err := syscall.Kill(s.Pid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			s.SendLine("3")
			s.ExpectString("123\r\n")
			enter(s, "old = signal.signal(signal.SIGINT, signal.SIG_DFL)")
			s.ExpectString(promptOf(program))
			promptWaits(t, s)
			if err := syscall.Kill(s.Pid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			if sig := s.ExpectSignaled(); sig != syscall.SIGINT {
				t.Errorf("ended by signal %v after SIGINT under SIG_DFL, want SIGINT\n%s", sig, s.Dump())
			}
		})
	}
	s := idleSession(t, binary, "import signal", "old = signal.signal(signal.SIGINT, signal.SIG_DFL)")
	s.Send(ptytest.CtrlC)
	if sig := s.ExpectSignaled(); sig != syscall.SIGINT {
		t.Errorf("pyaichat ended by signal %v after Ctrl-C under SIG_DFL, want SIGINT\n%s", sig, s.Dump())
	}
	if d := s.TermiosChanges(); d != "" {
		t.Errorf("the terminal was not restored: %s", d)
	}
}

// A handler the user's code set for SIGINT runs on Ctrl-C at the prompt,
// as in python3: when it returns, the line being typed goes on; when it
// raises, its traceback shows and the line is dropped.
func TestSIGINTHandlerAtThePrompt(t *testing.T) {
	for _, program := range []string{pythonOracle, binary} {
		t.Run(promptOf(program), func(t *testing.T) {
			t.Parallel()
			s := idleSession(t, program, "import signal", "old = signal.signal(signal.SIGINT, lambda n, f: print('handled', n))")
			s.Send("print(12")
			s.ExpectString("print(12")
			promptWaits(t, s)
			s.Send(ptytest.CtrlC)
			s.ExpectString("handled 2\r\n")
			s.Send("3 * 2)\r")
			s.ExpectString("246\r\n")
			enter(s, "old = signal.signal(signal.SIGINT, lambda n, f: 1 / 0)")
			s.ExpectString(promptOf(program))
			s.Send("45")
			s.ExpectString("45")
			promptWaits(t, s)
			s.Send(ptytest.CtrlC)
			s.ExpectString("ZeroDivisionError: division by zero\r\n")
			s.ExpectString(promptOf(program))
			s.Send("-7 + 100\r")
			s.ExpectString("93\r\n") // 138 had the line been kept
		})
	}
}

// faulthandler's report is python3's, with no line on extension modules
// (pyaichat's own bridge module is not one there).
func TestFaulthandlerReportAsPython(t *testing.T) {
	script := "import ctypes, faulthandler, sys\nfaulthandler.enable(file=sys.stdout)\nprint('before', flush=True)\nctypes.string_at(0)\n"
	want := runScript(t, pythonOracle, script)
	got := runScript(t, binary, script)
	thread := regexp.MustCompile(`Current thread 0x[0-9a-f]+`)
	scriptPath := regexp.MustCompile(`"[^"]*/script\.py"`)
	clean := func(s string) string {
		return scriptPath.ReplaceAllString(thread.ReplaceAllString(s, "Current thread"), `"script.py"`)
	}
	want.stdout, got.stdout = clean(want.stdout), clean(got.stdout)
	if got != want {
		t.Errorf("python3 -i ended with signal %d:\n%s\npyaichat with signal %d:\n%s", want.signal, want.stdout, got.signal, got.stdout)
	}
}
