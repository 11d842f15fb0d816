package markdown

import (
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/termwidth"
)

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		text  string
		width int
		want  string
	}{
		{"short line", 20, "short line"},
		{"the quick brown fox jumps over the lazy dog", 16, "the quick brown\nfox jumps over\nthe lazy dog"},
		{"  indented text goes on and on", 14, "  indented\n  text goes on\n  and on"},
		{"a supercalifragilistic word", 10, "a\nsupercalifragilistic\nword"},
		{"two\nlines that are too long", 10, "two\nlines that\nare too\nlong"},
		{"exactly ten", 11, "exactly ten"},
		{"wide 漢字漢字 text", 10, "wide\n漢字漢字\ntext"},
		{"no width", 0, "no width"},
		{"  name    what it is, at length", 24, "  name    what it is, at\n          length"},
		{"  a-very-long-name  what it is", 24, "  a-very-long-name  what\nit is"},
	} {
		got := Wrap(c.text, c.width)
		if got != c.want {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.text, c.width, got, c.want)
		}
		for _, line := range strings.Split(got, "\n") {
			if termwidth.String(line) > c.width && c.width > 0 && !strings.Contains(line, "supercali") {
				t.Errorf("Wrap(%q, %d): line %q is wider", c.text, c.width, line)
			}
		}
	}
}
