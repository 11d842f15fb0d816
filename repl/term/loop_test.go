package term

import (
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// lineEditor is an Editor on a new PTY of 80 columns; master is the
// keyboard. With raw set, the terminal is raw between prompts too: keys
// written before a prompt is up reach the editor as keys, not the
// kernel's line editing (which takes C-r, C-w, C-u, C-v and Ctrl-C).
func lineEditor(t *testing.T, cfg EditorConfig, raw bool) (e *Editor, master interface{ Write([]byte) (int, error) }, tm *Terminal) {
	t.Helper()
	tm, m, slave, _ := askTerminal(t)
	if err := pty.Setsize(m, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	if raw {
		r := &rawMode{fd: int(slave.Fd())}
		if err := r.enter(); err != nil {
			t.Fatal(err)
		}
	}
	e, err := tm.NewEditor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, m, tm
}

// typedLines types keys, then reads lines with e until one of them is
// not a line, and returns the events.
func typedLines(t *testing.T, e *Editor, master interface{ Write([]byte) (int, error) }, keys string, n int) []Event {
	t.Helper()
	master.Write([]byte(keys))
	var evs []Event
	for range n {
		evs = append(evs, readLineOn(t, e, "py> "))
	}
	return evs
}

func texts(evs []Event) string {
	var s []string
	for _, ev := range evs {
		s = append(s, []string{"line", "paste", "interrupt", "eof"}[ev.Kind]+":"+ev.Text)
	}
	return strings.Join(s, " | ")
}

// The editor reads a key at a time and stops after the key that ends the
// line: what was typed after it is still the terminal's, for whoever
// reads next (input(), a child program).
func TestEditorLeavesTypeAheadInTheTerminal(t *testing.T) {
	e, master, tm := lineEditor(t, EditorConfig{}, true)
	master.Write([]byte("1+1\rfor input()\r"))
	if ev := readLineOn(t, e, "py> "); ev.Kind != EventLine || ev.Text != "1+1" {
		t.Fatalf("got %+v, want the line 1+1", ev)
	}
	got := make(chan string, 1)
	go func() {
		var line []byte
		for {
			b, _, err := tm.tty.readByteAwaiting(nil, nil, nil)
			if err != nil {
				got <- err.Error()
				return
			}
			if line = append(line, b); b == '\r' {
				got <- string(line)
				return
			}
		}
	}()
	select {
	case line := <-got:
		if line != "for input()\r" {
			t.Errorf("the next reader got %q, want %q", line, "for input()\r")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next reader got nothing (hang)")
	}
}

// Ctrl-Cs read together are one Ctrl-C, which drops the keys before the
// last of them, as python3's SIGINTs do; the keys after it go to the next
// prompt. A paste ends the line too, and the keys after it are the next
// line's.
func TestEditorCtrlCAndPasteEndTheLine(t *testing.T) {
	e, master, _ := lineEditor(t, EditorConfig{}, true)
	for _, c := range []struct{ keys, want string }{
		{"abc\x03x\x03\x03def\r", "interrupt:abc | line:def"},
		{"x = \x1b[200~1\n2\x1b[201~tail\r", "paste:x = 1\n2 | line:tail"},
		{"cut\x1b[\x03ok\r", "interrupt:cut | line:ok"},
		{"1+1\x1b[\r\r", "line:1+1"},
	} {
		if got := texts(typedLines(t, e, master, c.keys, strings.Count(c.want, "|")+1)); got != c.want {
			t.Errorf("%q: got %q, want %q", c.keys, got, c.want)
		}
	}
	// A Ctrl-C that came as a signal between prompts ends the next one.
	e.CtrlC()
	if ev := readLineOn(t, e, "py> "); ev.Kind != EventInterrupt {
		t.Errorf("after CtrlC: got %+v, want an interrupt", ev)
	}
}

// Up and Down walk the history, keeping the line being typed; C-r finds
// entries by what they hold; C-v puts the next key in as it is; M-.
// takes the last word of the newest entry; C-d on an empty line is the
// end of input.
func TestEditorHistoryAndKeys(t *testing.T) {
	e, master, _ := lineEditor(t, EditorConfig{}, true)
	e.SetHistory([]string{"one = 1", "two = 2", "three = 3"})
	for _, c := range []struct{ keys, want string }{
		{"\x1b[A\x1b[A\r", "line:two = 2"},
		{"new\x1b[A\x1b[B\r", "line:new"},
		{"\x10\x10\x10\x10\x0e\r", "line:two = 2"},
		{"\x12on\r", "line:one = 1"},
		{"\x12t\x12\r", "line:two = 2"},
		{"\x12t\x12\x12\x05!\r", "line:two = 2!"},
		{"x\x12zzz\x07\r", "line:x"},
		{"a\x16\tb\r", "line:a\tb"},
		{"x = \x1b.\r", "line:x = 3"},
		{"\x04", "eof:"},
		{"ab\x02\x04\r", "line:a"},
	} {
		if got := texts(typedLines(t, e, master, c.keys, 1)); got != c.want {
			t.Errorf("%q: got %q, want %q", c.keys, got, c.want)
		}
	}
}
