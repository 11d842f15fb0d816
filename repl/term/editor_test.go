package term

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
	"github.com/pyaichat/pyaichat/repl/interp"
	"golang.org/x/sys/unix"
)

// readLineOn reads one line with e, failing the test if it takes more
// than a few seconds.
func readLineOn(t *testing.T, e *Editor, prompt string) Event {
	t.Helper()
	type result struct {
		ev  Event
		err error
	}
	got := make(chan result, 1)
	go func() {
		ev, err := e.ReadLine(prompt, "", nil)
		got <- result{ev, err}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("reading a line at %q: %v", prompt, r.err)
		}
		return r.ev
	case <-time.After(10 * time.Second):
		t.Fatalf("no line came back at %q (hang)", prompt)
		return Event{}
	}
}

// screenRows renders out on an 80-column terminal and returns its first n
// rows, trailing spaces removed.
func screenRows(out string, n int) []string {
	vt := vt10x.New(vt10x.WithSize(80, 24))
	vt.Write([]byte(out))
	rows := strings.Split(vt.String(), "\n")
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " \x00")
	}
	return rows[:n]
}

// Keys typed ahead of a prompt, TABs the key hook handles among them, are
// each drawn after their prompt: every line shows on the screen as it ran.
func TestEditorDrawsThePromptBeforeKeysTypedAhead(t *testing.T) {
	tm, master, _, out := askTerminal(t)
	if err := pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	var e *Editor
	prompt := "py> "
	e, err := tm.NewEditor(EditorConfig{KeyHook: func(rune, []rune, int) KeyAction {
		if prompt == "py> " {
			prompt = "ai> "
		} else {
			prompt = "py> "
		}
		e.SetPrompt(prompt)
		return KeyAction{Handled: true}
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, keys := range []struct{ typed, line string }{
		{"\ta\r", "a"},
		{"\tb\r", "b"},
		{"\tc\r", "c"},
	} {
		master.Write([]byte(keys.typed))
		ev := readLineOn(t, e, prompt)
		if ev.Kind != EventLine || ev.Text != keys.line {
			t.Fatalf("line %d: got %+v, want the line %q", i, ev, keys.line)
		}
	}
	got := screenRows(out.String(), 4)
	want := []string{"ai> a", "py> b", "ai> c", ""}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("screen:\n%s\nwant:\n%s\nraw output: %q", strings.Join(got, "\n"), strings.Join(want, "\n"), out.String())
	}
}

// awaitReadingAhead is an Await as pybridge's AwaitInput makes it, in Go:
// it waits for fd, then reads ahead.FD and echoes a lone printable key
// after ahead.Echo. It counts the keys it echoed. Each wait it enters is told on entered, if there is room, before it
// polls: a key typed after that is read by the wait, not by the lane.
func awaitReadingAhead(echoed *atomic.Int32, entered chan<- struct{}) Await {
	return func(fds []int, ahead *interp.ReadAhead) (bool, error) {
		select {
		case entered <- struct{}{}:
		default:
		}
		var polled []unix.PollFd
		for _, fd := range fds {
			polled = append(polled, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
		}
		for {
			if _, err := unix.Poll(polled, -1); err != unix.EINTR {
				break
			}
		}
		if ahead == nil || polled[slices.Index(fds, ahead.FD)].Revents == 0 {
			return true, nil
		}
		n, err := unix.Read(ahead.FD, ahead.Buf)
		if err != nil || n <= 0 {
			return true, nil
		}
		ahead.N = n
		if key := ahead.Buf[0]; n == 1 && key >= ' ' && key <= '~' && ahead.EchoFD >= 0 {
			w, _ := unix.Write(ahead.EchoFD, append(append([]byte(nil), ahead.Echo...), key))
			ahead.Echoed = max(w, 0)
			echoed.Add(1)
		}
		return true, nil
	}
}

// A wait that reads a key typed at the end of the line and echoes it
// itself, before the editor has it, draws what the editor would have: the key after the line,
// and before it, where a suggestion was shown, the line again without it.
func TestEditorLaneKeysEchoedByTheWait(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	if err := pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	tm, err := Open(slave, slave)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tm.tty.close)
	e, err := tm.NewEditor(EditorConfig{Suggest: func(line string) string {
		if line == "pri" {
			return "nt()"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	screen := &notedWriter{wrote: make(chan struct{}, 1)}
	go io.Copy(screen, master)
	rowShows := func(want string) {
		t.Helper()
		var got string
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if got = screenRows(screen.String(), 1)[0]; got == want {
				return
			}
		}
		t.Fatalf("the screen shows %q, want %q", got, want)
	}

	var echoed atomic.Int32
	entered := make(chan struct{}, 1)
	lines := make(chan Event, 1)
	go func() {
		ev, err := e.ReadLine("py> ", "", awaitReadingAhead(&echoed, entered))
		if err != nil {
			ev = Event{Text: fmt.Sprintf("reading the line: %v", err)}
		}
		lines <- ev
	}()
	rowShows("py>")
	for _, key := range []struct{ typed, shown string }{
		{"p", "py> p"},
		{"r", "py> pr"},
		{"i", "py> print()"}, // the suggestion, drawn after the key
		{"x", "py> prix"},    // typed over it: erased before the key
		{"y", "py> prixy"},
	} {
		// A key typed before the editor waits is read at once, and echoed
		// too, but not through the wait this test is about.
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatalf("the editor never waited for %q", key.typed)
		}
		master.Write([]byte(key.typed))
		rowShows(key.shown)
	}
	master.Write([]byte("\r"))
	select {
	case ev := <-lines:
		if ev.Text != "prixy" {
			t.Errorf("the line came back as %q, want %q", ev.Text, "prixy")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no line came back")
	}
	if n := echoed.Load(); n != 5 {
		t.Errorf("the wait echoed %d of the 5 keys typed one at a time, want all", n)
	}
	rowShows("py> prixy")
}
