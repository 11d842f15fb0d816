// Package termwidth counts the columns text takes on a terminal as
// terminals count them today (wcwidth(3) of a current glibc, xterm, VTE):
// East Asian wide and fullwidth characters, emoji among them, take two,
// combining marks and format characters none, and the ambiguous ones one,
// as GNU readline counts them in python3 -i. The line editor, the answer's
// renderer and the PTY tests' screen all measure with it, so they agree.
package termwidth

import (
	"unicode"
	"unicode/utf8"
)

// Display widths are go-runewidth's, from tables generated from it: the
// package itself, on its first lookup of a character above U+02FF (an em
// dash, a curly quote, a box-drawing line: nearly every answer has one),
// builds a 2.2 MB table, measured as that much more resident memory for
// the rest of the session. The generated range tables (about 500
// ranges) are searched in place.

// Rune is how many columns r takes on a terminal. width0 and width2,
// generated from go-runewidth's tables (width_test.go), hold the
// characters of no column and of two.
func Rune(r rune) int {
	switch {
	case r >= 0x20 && r < 0x7f:
		return 1
	case r < 0x20:
		return 0
	case unicode.Is(width2, r):
		return 2
	case unicode.Is(width0, r):
		return 0
	}
	return 1
}

// String is how many columns s takes on a terminal.
func String(s string) int {
	w := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			for _, r := range s[i:] {
				w += Rune(r)
			}
			return w
		}
		if s[i] >= 0x20 && s[i] < 0x7f {
			w++
		}
	}
	return w
}

// Truncate cuts s to at most width columns, ending it with tail when cut.
func Truncate(s string, width int, tail string) string {
	if String(s) <= width {
		return s
	}
	room := width - String(tail)
	w := 0
	for i, r := range s {
		rw := Rune(r)
		if w+rw > room {
			return s[:i] + tail
		}
		w += rw
	}
	return s
}
