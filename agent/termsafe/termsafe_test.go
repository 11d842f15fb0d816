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
