package term

import (
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
)

// readLineOn reads one line with e as the REPL does (StartLine, then
// FinishLine if the typing lane left it), failing the test if it takes
// more than a few seconds.
func readLineOn(t *testing.T, e *Editor, prompt string) Event {
	t.Helper()
	type result struct {
		ev  Event
		err error
	}
	got := make(chan result, 1)
	go func() {
		ev, rest, err := e.StartLine(prompt, "", nil)
		if err == nil && rest != nil {
			ev, err = e.FinishLine(rest)
		}
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

// readline's reader goroutine reads ahead of the next prompt after a key
// the editor dropped (a TAB the key hook handled leaves readline a wake-up
// it does not use) and after a paste. Keys typed ahead that reach it must
// still wait for readline to draw the prompt: otherwise readline took a
// whole line, Enter included, before drawing its prompt over it, and the
// line ran with nothing of it left on the screen.
func TestEditorDrawsThePromptBeforeKeysTypedAhead(t *testing.T) {
	tm, master, _, out := askTerminal(t)
	if err := pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	var e *Editor
	prompt := "py> "
	e, err := tm.NewEditor(EditorConfig{KeyHook: func(rune) KeyAction {
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
	// readline starts a line by making the terminal raw; a thread that is
	// slow there (a busy machine) lets keys typed ahead go first.
	makeRaw := e.rl.Config.FuncMakeRaw
	e.rl.Config.FuncMakeRaw = func() error {
		time.Sleep(50 * time.Millisecond)
		return makeRaw()
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
