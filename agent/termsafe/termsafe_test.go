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
