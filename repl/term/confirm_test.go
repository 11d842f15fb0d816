package term

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// notedWriter records what is written and tells when text has been.
type notedWriter struct {
	mu    sync.Mutex
	b     strings.Builder
	wrote chan struct{}
}

func (w *notedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *notedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// askTerminal is a Terminal on a new PTY, in the cooked mode a question
// is asked in; master is the keyboard.
func askTerminal(t *testing.T) (tm *Terminal, master, slave *os.File, out *notedWriter) {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	out = &notedWriter{wrote: make(chan struct{}, 1)}
	tm, err = Open(slave, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tm.tty.close)
	return tm, master, slave, out
}

type answer struct {
	yes bool
	err error
}

// ask runs AskYesNo on its own goroutine and returns once the question is
// on the screen.
func ask(t *testing.T, ctx context.Context, tm *Terminal, out *notedWriter) <-chan answer {
	t.Helper()
	start := len(out.String())
	got := make(chan answer, 1)
	go func() {
		yes, err := tm.AskYesNo(ctx, out, "send? [y/N] ")
		got <- answer{yes, err}
	}()
	for !strings.Contains(out.String()[start:], "send? [y/N] ") {
		select {
		case got := <-got:
			t.Fatalf("AskYesNo returned %v before a key was typed", got)
		case <-out.wrote:
		case <-time.After(20 * time.Second):
			t.Fatal("the question was never shown (hang)")
		}
	}
	return got
}

func wait(t *testing.T, got <-chan answer) answer {
	t.Helper()
	select {
	case a := <-got:
		return a
	case <-time.After(20 * time.Second):
		t.Fatal("AskYesNo did not return (hang)")
	}
	return answer{}
}

func termios(t *testing.T, f *os.File) unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	if err != nil {
		t.Fatal(err)
	}
	return *tio
}

// One key answers, y or Y yes and any other key no; the answer is echoed
// on the question's line; the terminal's mode is back as it was.
func TestAskYesNoReadsOneKey(t *testing.T) {
	for _, c := range []struct {
		keys string
		yes  bool
	}{{"y", true}, {"Y", true}, {"n", false}, {"\r", false}, {"\x1b[A", false}, {"é", false}, {"q", false}} {
		tm, master, slave, out := askTerminal(t)
		before := termios(t, slave)
		got := ask(t, context.Background(), tm, out)
		master.Write([]byte(c.keys))
		a := wait(t, got)
		if a.err != nil || a.yes != c.yes {
			t.Errorf("key %q: yes=%v err=%v, want yes=%v", c.keys, a.yes, a.err, c.yes)
		}
		want := "send? [y/N] n\n"
		if c.yes {
			want = "send? [y/N] y\n"
		}
		if out.String() != want {
			t.Errorf("key %q: the screen shows %q, want %q", c.keys, out.String(), want)
		}
		if after := termios(t, slave); after != before {
			t.Errorf("key %q: the terminal's mode was not restored", c.keys)
		}
	}
}

// A key typed before the question was shown is no answer to it.
func TestAskYesNoDropsTypeAhead(t *testing.T) {
	tm, master, slave, out := askTerminal(t)
	master.Write([]byte("y\r"))
	// The cooked terminal counts a whole line as input once it has it.
	for {
		n, err := unix.IoctlGetInt(int(slave.Fd()), ioctlInputQueued)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	got := ask(t, context.Background(), tm, out)
	master.Write([]byte("n"))
	if a := wait(t, got); a.err != nil || a.yes {
		t.Errorf("yes=%v err=%v: the key typed ahead answered the question", a.yes, a.err)
	}
}

// Cancelling the context (Ctrl-C) ends the wait with its error, leaves the
// mode as it was, and leaves no wake-up behind: the next question still
// waits for its key.
func TestAskYesNoCancelled(t *testing.T) {
	tm, master, slave, out := askTerminal(t)
	before := termios(t, slave)
	ctx, cancel := context.WithCancel(context.Background())
	got := ask(t, ctx, tm, out)
	cancel()
	if a := wait(t, got); !errors.Is(a.err, context.Canceled) || a.yes {
		t.Errorf("yes=%v err=%v, want context.Canceled", a.yes, a.err)
	}
	if after := termios(t, slave); after != before {
		t.Error("the terminal's mode was not restored after a cancel")
	}
	if strings.HasSuffix(out.String(), "\n") {
		t.Errorf("the line was ended after a cancel (the caller ends it after ^C): %q", out.String())
	}
	got = ask(t, context.Background(), tm, out)
	master.Write([]byte("y"))
	if a := wait(t, got); a.err != nil || !a.yes {
		t.Errorf("the question after a cancel: yes=%v err=%v, want yes", a.yes, a.err)
	}
}
