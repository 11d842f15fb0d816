package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/repl/interp"
)

// fakePython is the interpreter of an interactive session without
// CPython: "exit()" and "raise SystemExit(N)" leave with status 0 and N,
// any other line runs without output. It keeps what it was asked to do.
type fakePython struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakePython) did(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakePython) done() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakePython) Push(line string) (interp.Outcome, error) {
	f.did("push " + line)
	if line == "exit()" {
		return interp.Outcome{Exit: true}, nil
	}
	if arg, ok := strings.CutPrefix(line, "raise SystemExit("); ok {
		status, err := strconv.Atoi(strings.TrimSuffix(arg, ")"))
		return interp.Outcome{Exit: true, Status: status}, err
	}
	return interp.Outcome{}, nil
}

func (f *fakePython) PushEOF() (interp.Outcome, error) { return interp.Outcome{}, nil }
func (f *fakePython) RunBlock(source string) (interp.Outcome, error) {
	return f.Push(source)
}
func (f *fakePython) ResetBlock() error                         { return nil }
func (f *fakePython) Interrupt()                                {}
func (f *fakePython) Busy() bool                                { return false }
func (f *fakePython) MoreLines(source string) bool              { return strings.HasSuffix(source, ":") }
func (f *fakePython) Stuck(time.Duration) bool                  { return false }
func (f *fakePython) Interrupts() <-chan struct{}               { return nil }
func (f *fakePython) SignalErrors() <-chan struct{}             { return nil }
func (f *fakePython) ShowSignalError() (interp.Outcome, error)  { return interp.Outcome{}, nil }
func (f *fakePython) SIGINT() interp.SIGINTAction               { return interp.SIGINTRaises }
func (f *fakePython) DieBySIGINT()                              {}
func (f *fakePython) RunSIGINTHandler() bool                    { return false }
func (f *fakePython) SIGINTToUser(bool)                         {}
func (f *fakePython) PrepareIsolated()                          {}
func (f *fakePython) DiscardIsolated()                          {}
func (f *fakePython) RecentContext() (string, error)            { return "", nil }
func (f *fakePython) SetMagics(bool) error                      { return nil }
func (f *fakePython) Host(func()) error                         { return errors.New("the fake hosts no prompt") }
func (f *fakePython) CanHost() bool                             { return false }
func (f *fakePython) SetDisplay(pybridge.Display)               {}
func (f *fakePython) SetFigureDir(string) error                 { return nil }
func (f *fakePython) CaptureOutput(int) error                   { return nil }
func (f *fakePython) TakeOutput() ([]pybridge.OutputPart, int)  { return nil, 0 }
func (f *fakePython) StopCapture()                              {}
func (f *fakePython) SkipSourceFirstLine() error                { return nil }
func (f *fakePython) RunCommand(string) (interp.Outcome, error) { return interp.Outcome{}, nil }
func (f *fakePython) RunModule(string) (interp.Outcome, error)  { return interp.Outcome{}, nil }
func (f *fakePython) RunFile(string) (interp.Outcome, error)    { return interp.Outcome{}, nil }
func (f *fakePython) RunStartup(string) (interp.Outcome, error) { return interp.Outcome{}, nil }
func (f *fakePython) AwaitInput([]int, *interp.ReadAhead) (bool, error) {
	return false, errors.New("the fake awaits no input")
}

func (f *fakePython) LoadModule(name, _ string) error {
	f.did("load " + name)
	return nil
}

func (f *fakePython) Call(_ context.Context, _ pybridge.CallKind, module, fn, _ string) (string, error) {
	f.did("call " + module + "." + fn)
	return "", nil
}

func (f *fakePython) Exit(status int, _ time.Duration, _ func(string)) int {
	f.did("exit")
	return status
}

// start is a pythonStarter that hands out f.
func (f *fakePython) start(cmdline, pybridge.LineReader, bool, func(string)) (sessionPython, error) {
	return f, nil
}

// inTempHome points pyaichat's files (config, state, cache) at an empty
// home of the test's, and PATH at an empty directory (no python3 of
// another version to warn about).
func inTempHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "OPENAI_API_KEY"} {
		t.Setenv(v, "")
	}
	t.Setenv("PATH", t.TempDir())
}

// runPiped runs pyaichat with args over f, its stdin the lines given and
// its stdout and stderr files; it returns the status and what each said.
func runPiped(t *testing.T, f *fakePython, input string, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	go func() {
		io.WriteString(inW, input)
		inW.Close()
	}()
	out, err := os.Create(dir + "/stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	errOut, err := os.Create(dir + "/stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer errOut.Close()
	status = run(stdio{in: inR, out: out, err: errOut}, args, f.start)
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errOut.Name())
	return status, string(o), string(e)
}

// loadsUserCapabilities is what start-up asks of Python to look for the
// user's capabilities when the entry points' cache does not know the start.
var loadsUserCapabilities = []string{"load _pyaichat_usercaps", "call _pyaichat_usercaps.discover"}

// With its input piped, pyaichat starts as python3 -i does there: no
// banner, the prompt on stderr for each line, and the status of how the
// session ended.
func TestInteractiveStartOverPipe(t *testing.T) {
	inTempHome(t)
	for _, tc := range []struct {
		name, input string
		status      int
		prompts     string
		pushed      []string
	}{
		{"end of input", "x = 1\n", 0, "py> py> \n", []string{"push x = 1"}},
		{"SystemExit", "raise SystemExit(3)\nnot run\n", 3, "py> ", []string{"push raise SystemExit(3)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := new(fakePython)
			status, stdout, stderr := runPiped(t, f, tc.input)
			if status != tc.status || stdout != "" || stderr != tc.prompts {
				t.Fatalf("status %d, stdout %q, stderr %q; want %d, \"\", %q", status, stdout, stderr, tc.status, tc.prompts)
			}
			want := strings.Join(append(append(loadsUserCapabilities, tc.pushed...), "exit"), "\n")
			if got := strings.Join(f.done(), "\n"); got != want {
				t.Errorf("the interpreter was asked to\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// screen collects what a pseudo-terminal's program shows.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) read(master io.Reader) {
	b := make([]byte, 4096)
	for {
		n, err := master.Read(b)
		s.mu.Lock()
		s.buf.Write(b[:n])
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor waits for text on the screen; the deadline bounds a hang.
func (s *screen) waitFor(t *testing.T, text string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(s.String(), text) {
			return
		}
	}
	t.Fatalf("waiting for %q; the screen:\n%s", text, s.String())
}

// On a terminal pyaichat greets with python3's banner and its line on
// the assistant, then shows py>; Ctrl-D at the prompt leaves with status
// 0, and Python is ended as python3 ends.
func TestInteractiveStartOnTerminal(t *testing.T) {
	inTempHome(t)
	t.Setenv("TERM", "xterm")
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	if err := pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	var shown screen
	go shown.read(master)
	f := new(fakePython)
	done := make(chan int, 1)
	go func() { done <- run(stdio{in: slave, out: slave, err: slave}, nil, f.start) }()
	shown.waitFor(t, "py> ")
	banner := "Python " + pybridge.Version() + " on " + pybridge.Platform() + "\r\n" +
		`Type "help", "copyright", "credits" or "license" for more information.` + "\r\n"
	if !strings.HasPrefix(shown.String(), banner) || !strings.Contains(shown.String(), "press TAB to ask the assistant") {
		t.Errorf("the screen before the first prompt:\n%q\nwant it to start with\n%q and the line on the assistant", shown.String(), banner)
	}
	master.Write([]byte{4}) // Ctrl-D
	select {
	case status := <-done:
		if status != 0 {
			t.Errorf("status %d after Ctrl-D, want 0", status)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("pyaichat did not end after Ctrl-D; the screen:\n%s", shown.String())
	}
	want := strings.Join(append(loadsUserCapabilities, "load _pyaichat_suggest", "exit"), "\n")
	if got := strings.Join(f.done(), "\n"); got != want {
		t.Errorf("the interpreter was asked to\n%s\nwant\n%s", got, want)
	}
}

// writeFile writes text at path, making its directory.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Start-up asks nothing of Python for the user's capabilities when none
// are configured and the entry points' cache shows, for this start's
// sys.path, no package registering one; it looks when the cache does not
// know this start, and loads the modules that capability_modules names.
func TestInteractiveStartLoadsUserCapabilitiesOnlyWhenNeeded(t *testing.T) {
	inTempHome(t)
	c, err := parseArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	onPath := t.TempDir()
	info, err := os.Stat(onPath)
	if err != nil {
		t.Fatal(err)
	}
	nothingRegistered := fmt.Sprintf("=\t%s\t%s\n%d\t0\t%s\n", sysPathKey(c), onPath, info.ModTime().UnixNano(), onPath)
	writeFile(t, entryPointCache(), nothingRegistered)

	f := new(fakePython)
	if status, _, stderr := runPiped(t, f, "x = 1\n"); status != 0 || strings.Join(f.done(), "\n") != "push x = 1\nexit" {
		t.Errorf("with nothing configured or registered: status %d, stderr %q, the interpreter was asked to\n%s", status, stderr, strings.Join(f.done(), "\n"))
	}

	writeFile(t, entryPointCache(), strings.Replace(nothingRegistered, sysPathKey(c), "another start's", 1))
	f = new(fakePython)
	runPiped(t, f, "")
	if got := f.done(); !slices.Contains(got, "call _pyaichat_usercaps.discover") {
		t.Errorf("with the cache of another start, the interpreter was asked to\n%s\nwant the user capabilities looked for", strings.Join(got, "\n"))
	}

	writeFile(t, entryPointCache(), nothingRegistered)
	writeFile(t, filepath.Join(xdgPaths().config, "config.toml"), "capability_modules = [\"mycaps\"]\n")
	f = new(fakePython)
	runPiped(t, f, "")
	if got := f.done(); !slices.Contains(got, "call _pyaichat_usercaps.discover") {
		t.Errorf("with capability_modules, the interpreter was asked to\n%s\nwant the user capabilities looked for", strings.Join(got, "\n"))
	}
}
