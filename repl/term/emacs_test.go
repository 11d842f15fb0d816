package term

import (
	"strings"
	"testing"
)

// at splits a line written with | at the cursor into the line and the
// cursor.
func at(s string) ([]rune, int) {
	i := strings.IndexRune(s, '|')
	return []rune(s[:i] + s[i+1:]), len([]rune(s[:i]))
}

// show writes a line and its cursor as at reads them.
func show(line []rune, pos int) string {
	return string(line[:pos]) + "|" + string(line[pos:])
}

func TestWordMovesAsGNUReadline(t *testing.T) {
	cases := []struct{ name, from, forward, backward, blank string }{
		{"inside a word", "ab|cd ef", "abcd| ef", "|abcd ef", "|abcd ef"},
		{"between words", "ab |cd", "ab cd|", "|ab cd", "|ab cd"},
		{"punctuation and underscore split words", "x.y_z| = 1", "x.y_z = 1|", "x.y_|z = 1", "|x.y_z = 1"},
		{"at the ends", "|ab", "ab|", "|ab", "|ab"},
		{"letters of other scripts", "é|té été", "été| été", "|été été", "|été été"},
	}
	for _, c := range cases {
		line, pos := at(c.from)
		if got := show(line, forwardWord(line, pos)); got != c.forward {
			t.Errorf("%s: M-f from %q went to %q, want %q", c.name, c.from, got, c.forward)
		}
		if got := show(line, backwardWord(line, pos)); got != c.backward {
			t.Errorf("%s: M-b from %q went to %q, want %q", c.name, c.from, got, c.backward)
		}
		if got := show(line, backwardBlank(line, pos)); got != c.blank {
			t.Errorf("%s: C-w from %q kills back to %q, want %q", c.name, c.from, got, c.blank)
		}
	}
}

func TestCaseWordAndTransposeWords(t *testing.T) {
	for _, c := range []struct {
		from string
		how  rune
		want string
	}{
		{"hello |wORLD now", 'u', "hello WORLD| now"},
		{"hello| wORLD now", 'l', "hello world| now"},
		{"hello wo|RLD now", 'c', "hello woRld| now"},
		{"|x.yz", 'c', "X|.yz"},
	} {
		line, pos := at(c.from)
		if got := show(caseWord(line, pos, c.how)); got != c.want {
			t.Errorf("M-%c on %q: %q, want %q", c.how, c.from, got, c.want)
		}
	}
	for _, c := range []struct{ from, want string }{
		{"one tw|o three", "two one| three"},
		{"one two three|", "one three two|"},
		{"one |two", "two one|"},
	} {
		line, pos := at(c.from)
		out, to, ok := transposeWords(line, pos)
		if got := show(out, to); !ok || got != c.want {
			t.Errorf("M-t on %q: %q (ok %v), want %q", c.from, got, ok, c.want)
		}
	}
	if _, _, ok := transposeWords([]rune("one"), 3); ok {
		t.Error("M-t on a single word transposed something")
	}
	for _, c := range []struct{ from, want string }{
		{"ab|cd", "acb|d"},
		{"abcd|", "abdc|"},
		{"|abcd", ""}, // nothing, as in GNU readline
		{"a|", ""},
	} {
		line, pos := at(c.from)
		out, to, ok := transposeChars(line, pos)
		if got := show(out, to); ok != (c.want != "") || ok && got != c.want {
			t.Errorf("C-t on %q: %q (ok %v), want %q", c.from, got, ok, c.want)
		}
	}
}

func TestLastArgument(t *testing.T) {
	for line, want := range map[string]string{
		"prev = 'one two'":  "'one two'",
		"print(x, y)":       ")",
		"import os":         "os",
		`s = "a b" + c  `:   "c",
		"   ":               "",
		"f(a); g":           "g",
		`open("it's here")`: ")",
	} {
		if got := lastArgument(line); got != want {
			t.Errorf("last argument of %q: %q, want %q", line, got, want)
		}
	}
}

func TestKillRingJoinsAndPops(t *testing.T) {
	var k killRing
	k.kill([]rune("def"), false, true)
	k.kill([]rune("abc "), true, true) // a backward kill right after: before it
	k.kill([]rune("xyz"), false, false)
	k.kill([]rune("!"), true, false) // a forward kill right after: after it
	line, pos := at("<|>")
	out, to, _ := k.yank(line, pos)
	if got := show(out, to); got != "<xyz!|>" {
		t.Fatalf("C-y: %q", got)
	}
	out, to, _ = k.yankPop(out, to)
	if got := show(out, to); got != "<abc def|>" {
		t.Fatalf("M-y: %q", got)
	}
	out, to, _ = k.yankPop(out, to)
	if got := show(out, to); got != "<xyz!|>" {
		t.Fatalf("M-y again, round the ring: %q", got)
	}
}

func TestUndoListAsGNUReadline(t *testing.T) {
	var u undoList
	u.reset(nil, true)
	step := func(s string) {
		line, pos := at(s)
		u.changed(line, pos)
	}
	undo := func() string {
		s, ok := u.undo()
		if !ok {
			return "(nothing)"
		}
		return show(s.line, s.pos)
	}
	// Typing at the cursor is one change, until the cursor moves.
	for _, s := range []string{"a|", "ab|", "abc|", "|abc", "X|abc", "XY|abc"} {
		step(s)
	}
	if got := undo(); got != "|abc" {
		t.Errorf("undo of XY typed at the start: %q", got)
	}
	if got := undo(); got != "|" {
		t.Errorf("undo of abc typed: %q", got)
	}
	if got := undo(); got != "(nothing)" {
		t.Errorf("undo with nothing left: %q", got)
	}
	// A kill put back leaves the cursor after it.
	u.reset([]rune("abcdef"), false)
	step("ab|")
	if got := undo(); got != "abcdef|" {
		t.Errorf("undo of C-k: %q", got)
	}
	// At most undoJoinMax characters typed are one change.
	u.reset(nil, false)
	line := ""
	for range undoJoinMax + 3 {
		line += "x"
		step(line + "|")
	}
	if got := undo(); got != strings.Repeat("x", undoJoinMax)+"|" {
		t.Errorf("undo after %d characters typed: %q", undoJoinMax+3, got)
	}
	// A Backspace is a change of its own.
	u.reset(nil, true)
	step("a|")
	step("ab|")
	step("a|")
	if got := undo(); got != "ab|" {
		t.Errorf("undo of a Backspace: %q", got)
	}
	if got := undo(); got != "|" {
		t.Errorf("undo of the typing: %q", got)
	}
	if s, ok := u.revert(); ok {
		t.Errorf("M-r with nothing to undo: %q", show(s.line, s.pos))
	}
	// A span rewritten in place (a change of case, C-t) is recorded
	// whole, changed or not, and its undo leaves the cursor where GNU
	// readline's does: after the word, or between the two characters.
	u.reset([]rune("hello world"), true)
	u.rewrote([]rune("Hello world"), 0, 5, 0)
	if got := undo(); got != "hello| world" {
		t.Errorf("undo of M-c: %q", got)
	}
	u.rewrote([]rune("hello world"), 0, 5, 0) // M-l: nothing changed
	if got := undo(); got != "hello| world" {
		t.Errorf("undo of an M-l that changed nothing: %q", got)
	}
	u.rewrote([]rune("hello wrold"), 7, 9, 1)
	if got := undo(); got != "hello wo|rld" {
		t.Errorf("undo of C-t: %q", got)
	}
	if got := undo(); got != "|" {
		t.Errorf("undo back to the start: %q", got)
	}
}

func TestCharSearch(t *testing.T) {
	for _, c := range []struct {
		from string
		r    rune
		dir  int
		want string
	}{
		{"|abcabc", 'b', 1, "a|bcabc"},
		{"a|bcabc", 'b', 1, "abca|bc"},
		{"abc|abc", 'a', -1, "|abcabc"},
		{"ab|c", 'z', 1, "ab|c"},
		{"ab|c", 'z', -1, "ab|c"},
	} {
		line, pos := at(c.from)
		out, to, _ := charSearchEdit(c.r, c.dir)(line, pos)
		if got := show(out, to); got != c.want {
			t.Errorf("search %+d for %q from %q: %q, want %q", c.dir, c.r, c.from, got, c.want)
		}
	}
}
