package term

import "testing"

// The terminal's answers are told from keys typed meanwhile, which are
// kept in order; an arrow key is a key, not an answer.
func TestSplitAnswers(t *testing.T) {
	in := "ab\x1b_Gi=31;OK\x1b\\c\x1b[A\x1b[?62;4;22c\x1b[6;20;10t\x1b[3;1Rxy"
	answers, typed, done := splitAnswers([]byte(in))
	if !done {
		t.Fatal("the cursor position report did not end the answers")
	}
	if string(typed) != "abc\x1b[Axy" {
		t.Errorf("typed %q, want %q", typed, "abc\x1b[Axy")
	}
	g := parseGraphics(answers, "")
	if g.Protocol != "kitty" || g.CellWidth != 10 || g.CellHeight != 20 {
		t.Errorf("parsed %+v, want kitty with 10x20 cells", g)
	}
	if _, _, done := splitAnswers([]byte("\x1b[?62;4c\x1b[3;")); done {
		t.Error("done before the report was complete")
	}
}

// Each protocol is found from the answer that names it; kitty's wins.
func TestParseGraphics(t *testing.T) {
	for _, c := range []struct{ answers, termProgram, want string }{
		{"\x1b[?62;4;22c\x1b[1;1R", "", "sixel"},
		{"\x1bP>|iTerm2 3.5.0\x1b\\\x1b[?62;4c\x1b[1;1R", "", "iterm2"},
		{"\x1b[?62;22c\x1b[1;1R", "iTerm.app", "iterm2"},
		{"\x1b_Gi=31;OK\x1b\\\x1bP>|WezTerm\x1b\\\x1b[?62;4c\x1b[1;1R", "", "kitty"},
		{"\x1b[?62;22c\x1b[1;1R", "", ""},
	} {
		if got := parseGraphics([]byte(c.answers), c.termProgram).Protocol; got != c.want {
			t.Errorf("%q: %q, want %q", c.answers, got, c.want)
		}
	}
}
