package termsafe

import "testing"

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n\tindented":    "plain text\n\tindented",
		"\x1b]52;c;aGk=\x07":        `\x1b]52;c;aGk=\x07`,
		"over\rwrite":               `over\rwrite`,
		"\u009b31m red":             `\x9b31m red`,
		"a\u202eb\u2066c\u2069":     `a\u202eb\u2066c\u2069`,
		"bad \xff byte, ünïcödé 漢字": `bad \xff byte, ünïcödé 漢字`,
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

// A cut never leaves half a character, and keeps whole ones.
func TestPrefix(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 2, "ab"},
		{"aé", 2, "a"}, // é is two bytes: both or neither
		{"aé", 3, "aé"},
		{"😀x", 3, ""},
		{"😀x", 4, "😀"},
		{"abc", 0, ""},
	} {
		if got := Prefix(c.s, c.n); got != c.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func TestSquashAndOneLine(t *testing.T) {
	cases := []struct {
		in      string
		n       int
		squash  string
		oneLine string
	}{
		{"a\n\n  b\tc ", 40, "a b c", "a b c"},
		{"héllo wörld and more", 6, "héllo...", "héllo..."}, // 6 bytes end inside neither character
		{"hé", 2, "h...", "h..."},                           // 2 bytes would end inside é
		{"x\x1b[2Jy", 40, "x\x1b[2Jy", `x\x1b[2Jy`},
	}
	for _, c := range cases {
		if got := Squash(c.in, c.n); got != c.squash {
			t.Errorf("Squash(%q, %d) = %q, want %q", c.in, c.n, got, c.squash)
		}
		if got := OneLine(c.in, c.n); got != c.oneLine {
			t.Errorf("OneLine(%q, %d) = %q, want %q", c.in, c.n, got, c.oneLine)
		}
	}
	if got := Shorten("abcdef", 3); got != "abc..." {
		t.Errorf("Shorten = %q", got)
	}
}
