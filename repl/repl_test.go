package repl

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/pyaichat/pyaichat/repl/interp"
	"github.com/pyaichat/pyaichat/repl/term"
)

// fakeInterp records what the loop sends and answers as a REPL would: a
// line ending in ":" starts a block, an empty line ends it, "exit(N)"
// exits with N.
type fakeInterp struct {
	mu         sync.Mutex
	calls      []string
	pending    bool
	busy       bool
	stuck      bool
	interrupts chan struct{}
	running    chan struct{} // closed when a line "block" starts running
	release    chan struct{} // lets it finish
}

func newFakeInterp() *fakeInterp {
	return &fakeInterp{interrupts: make(chan struct{}, 1), running: make(chan struct{}), release: make(chan struct{})}
}

func (f *fakeInterp) record(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

func (f *fakeInterp) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, "|")
}

func (f *fakeInterp) Push(line string) (interp.Outcome, error) {
	f.record("push " + line)
	switch {
	case strings.HasSuffix(line, ":"):
		f.pending = true
		return interp.Outcome{More: true}, nil
	case f.pending && line != "":
		return interp.Outcome{More: true}, nil
	case strings.HasPrefix(line, "exit("):
		return interp.Outcome{Exit: true, Status: int(line[5] - '0')}, nil
	case line == "raise":
		return interp.Outcome{Error: "RuntimeError"}, nil
	case line == "block":
		f.mu.Lock()
		f.busy = true
		f.mu.Unlock()
		close(f.running)
		<-f.release
	}
	f.pending = false
	return interp.Outcome{}, nil
}

func (f *fakeInterp) PushEOF() (interp.Outcome, error) {
	f.record("eof")
	f.pending = false
	return interp.Outcome{}, nil
}

func (f *fakeInterp) RunBlock(source string) (interp.Outcome, error) {
	f.record("block " + source)
	return interp.Outcome{}, nil
}

func (f *fakeInterp) ResetBlock() error {
	f.record("reset")
	f.pending = false
	return nil
}

func (f *fakeInterp) Interrupt() { f.record("interrupt") }

func (f *fakeInterp) Busy() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.busy
}

func (f *fakeInterp) Stuck(time.Duration) bool { return f.stuck }

func (f *fakeInterp) Interrupts() <-chan struct{} { return f.interrupts }

func (f *fakeInterp) SignalErrors() <-chan struct{} { return nil }

func (f *fakeInterp) SIGINT() interp.SIGINTAction { return interp.SIGINTRaises }
func (f *fakeInterp) RunSIGINTHandler() bool      { return false }
func (f *fakeInterp) SIGINTToUser(bool)           {}

func (f *fakeInterp) DieBySIGINT() {}

func (f *fakeInterp) ShowSignalError() (interp.Outcome, error) { return interp.Outcome{}, nil }

// fakeAssistant answers every question with its text reversed, or, for
// "wait", waits to be cancelled.
type fakeAssistant struct {
	mu        sync.Mutex
	asked     []string
	prepared  int
	released  int
	answering chan struct{}
}

func (a *fakeAssistant) Handle(ctx context.Context, line string, out io.Writer) error {
	a.mu.Lock()
	a.asked = append(a.asked, line)
	a.mu.Unlock()
	if line == "wait" {
		close(a.answering)
		<-ctx.Done()
		io.WriteString(out, "[the assistant's own cancel line]\n")
		return ctx.Err()
	}
	io.WriteString(out, "answer: "+line+"\n")
	return nil
}

func (a *fakeAssistant) Prepare() { a.mu.Lock(); a.prepared++; a.mu.Unlock() }
func (a *fakeAssistant) Release() { a.mu.Lock(); a.released++; a.mu.Unlock() }

func pipeSession(t *testing.T, input string, in Interpreter) (*Loop, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	s, err := New(Options{Pipe: NewPipe(strings.NewReader(input), false), Stdout: &stdout, Stderr: &stderr, Interp: in})
	if err != nil {
		t.Fatal(err)
	}
	return s, &stdout, &stderr
}

func TestLoopFeedsLinesAndFinishesBlocksAtEOF(t *testing.T) {
	in := newFakeInterp()
	s, _, stderr := pipeSession(t, "x = 1\nif x:\n    y = 2\n", in)
	status, abandoned := s.Run()
	if status != 0 || abandoned {
		t.Fatalf("Run = %d, %v", status, abandoned)
	}
	if want := "push x = 1|push if x:|push     y = 2|eof"; in.log() != want {
		t.Errorf("calls %q, want %q", in.log(), want)
	}
	// Prompts go to stderr from a pipe, as python3 -i writes them (its
	// ">>> >>> ... ... \n>>> \n").
	if want := "py> py> ... ... \npy> \n"; stderr.String() != want {
		t.Errorf("prompts %q, want %q", stderr.String(), want)
	}
}

// OnInput hears of each whole py> input once it ran: a block typed line
// by line as one, a block ended by EOF too, with how each ended.
func TestLoopReportsInputs(t *testing.T) {
	in := newFakeInterp()
	var got []string
	var stdout, stderr bytes.Buffer
	s, err := New(Options{
		Pipe: NewPipe(strings.NewReader("x = 1\nif x:\n    y = 2\n\nraise\nif y:\n    z\n"), false), Stdout: &stdout, Stderr: &stderr, Interp: in,
		OnInput: func(src string, o interp.Outcome) { got = append(got, src+" => "+o.Error) },
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Run()
	want := []string{"x = 1 => ", "if x:\n    y = 2 => ", "raise => RuntimeError", "if y:\n    z => "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("inputs %q, want %q", got, want)
	}
}

// With a line editor, OnInput hears of an input once the next prompt is
// on the terminal (the session log's write is not between the input's
// output and the prompt), and of the last one when the loop ends.
func TestLoopTellsInputOnceThePromptShows(t *testing.T) {
	sc := newPTYScreen(t)
	promptsShown := func(n int) bool {
		return sc.shows(func(screen string) bool { return strings.Count(screen, "py> ") >= n })
	}
	var told []string
	in := newFakeInterp()
	s, err := New(Options{Term: sc.term, Stdout: sc.slave, Stderr: sc.slave, Interp: in,
		OnInput: func(src string, o interp.Outcome) {
			// The prompt after "x = 1" is the second: told with it showing.
			if src == "x = 1" && !promptsShown(2) {
				t.Errorf("told of %q before the next prompt showed", src)
			}
			told = append(told, src)
		}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() { status, _ := s.Run(); done <- status }()
	if !promptsShown(1) {
		t.Fatal("no first prompt")
	}
	sc.master.Write([]byte("x = 1\r"))
	if !promptsShown(2) {
		t.Fatal("no second prompt")
	}
	sc.master.Write([]byte("exit(0)\r"))
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not end after exit(0)")
	}
	if want := []string{"x = 1", "exit(0)"}; strings.Join(told, "|") != strings.Join(want, "|") {
		t.Errorf("told of %q, want %q", told, want)
	}
}

// From a pipe, a line an AtPy command would take at a terminal is
// Python's, as python3 would read it.
func TestPipedLinesAreNeverCommands(t *testing.T) {
	in := newFakeInterp()
	offered := 0
	s, err := New(Options{
		Pipe: NewPipe(strings.NewReader("/save x.md\n"), false), Stdout: io.Discard, Stderr: io.Discard, Interp: in,
		Commands: []Command{{Name: "/save", AtPy: true, Run: func(context.Context, string, io.Writer) (Action, error) {
			offered++
			return Action{}, nil
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Run()
	if want := "push /save x.md"; in.log() != want || offered != 0 {
		t.Errorf("calls %q (want %q), ran the command %d times", in.log(), want, offered)
	}
}

func TestLoopExitStatus(t *testing.T) {
	in := newFakeInterp()
	s, _, _ := pipeSession(t, "a\nexit(3)\nnot run\n", in)
	if status, _ := s.Run(); status != 3 {
		t.Fatalf("status %d, want 3", status)
	}
	if want := "push a|push exit(3)"; in.log() != want {
		t.Errorf("calls %q, want %q", in.log(), want)
	}
}

// A Ctrl-C that Python cannot act on, twice, abandons the session: Run
// returns while the interpreter is still busy.
func TestLoopAbandonsStuckInterpreter(t *testing.T) {
	in := newFakeInterp()
	in.stuck = true
	s, _, stderr := pipeSession(t, "block\n", in)
	done := make(chan struct{})
	var status int
	var abandoned bool
	go func() { status, abandoned = s.Run(); close(done) }()
	<-in.running
	in.interrupts <- struct{}{}
	in.interrupts <- struct{}{}
	in.interrupts <- struct{}{}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
	if status != 130 || !abandoned {
		t.Fatalf("Run = %d, %v; want 130, abandoned", status, abandoned)
	}
	if !strings.Contains(stderr.String(), "cannot be interrupted") || !strings.Contains(stderr.String(), "session abandoned") {
		t.Errorf("stderr %q", stderr.String())
	}
	close(in.release) // the loop, still running, goes on
}

// On a dumb terminal a line holding only a TAB switches mode; questions go
// to the assistant, which is readied at ai> and let go at py>; Ctrl-C
// cancels an answer, which the assistant shows itself: the REPL draws
// nothing for it.
func TestLoopAssistantOnDumbTerminal(t *testing.T) {
	sc := newPTYScreen(t)
	master := sc.master
	in := newFakeInterp()
	a := &fakeAssistant{answering: make(chan struct{})}
	s, err := New(Options{Term: sc.term, Dumb: true, Stdout: sc.slave, Stderr: sc.slave, Interp: in, Assistant: a})
	if err != nil {
		t.Fatal(err)
	}
	waitFor := func(text string) {
		t.Helper()
		if !sc.shows(func(screen string) bool { return strings.Contains(screen, text) }) {
			t.Fatalf("waiting for %q; screen:\n%s", text, sc.String())
		}
	}
	done := make(chan int)
	go func() { status, _ := s.Run(); done <- status }()
	waitFor("py> ")
	master.Write([]byte("\t\n"))
	waitFor("ai> ")
	master.Write([]byte("what is x\n"))
	waitFor("answer: what is x")
	master.Write([]byte("wait\n"))
	<-a.answering
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	waitFor("[the assistant's own cancel line]")
	master.Write([]byte("\t\n"))
	waitFor("py> ")
	master.Write([]byte("x\n"))
	master.Write([]byte{4}) // Ctrl-D: end of input
	if status := <-done; status != 0 {
		t.Fatalf("status %d", status)
	}
	if want := "push x"; in.log() != want {
		t.Errorf("interpreter calls %q, want %q", in.log(), want)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	shown := sc.String()
	if strings.Contains(shown, "^C") || strings.Contains(shown, "(cancelled)") {
		t.Errorf("the REPL drew Ctrl-C; screen:\n%s", shown)
	}
	if strings.Join(a.asked, "|") != "what is x|wait" {
		t.Errorf("asked %q", a.asked)
	}
	// Prepare and Release run on goroutines of their own.
	for deadline := time.Now().Add(time.Second); (a.prepared != 1 || a.released != 1) && time.Now().Before(deadline); {
		a.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		a.mu.Lock()
	}
	if a.prepared != 1 || a.released != 1 {
		t.Errorf("prepared %d, released %d; want 1, 1", a.prepared, a.released)
	}
}

// ptyScreen is a terminal for a Loop on a PTY of 24 rows and 80
// columns, and all that was written to it, read on a goroutine.
type ptyScreen struct {
	master, slave *os.File
	term          *term.Terminal
	mu            sync.Mutex
	out           bytes.Buffer
}

func newPTYScreen(t *testing.T) *ptyScreen {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	if err := pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	tt, err := term.Open(slave, slave)
	if err != nil {
		t.Fatal(err)
	}
	sc := &ptyScreen{master: master, slave: slave, term: tt}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			sc.mu.Lock()
			sc.out.Write(buf[:n])
			sc.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return sc
}

// String is what was written to the terminal so far.
func (sc *ptyScreen) String() string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.out.String()
}

// shows waits until what was written satisfies ok, up to 5 s (a bound on
// a hang), and says whether it did.
func (sc *ptyScreen) shows(ok func(screen string) bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if ok(sc.String()) {
			return true
		}
	}
	return false
}
