// Package termsafe makes text from a model or a server harmless to show on
// a terminal. It is the one neutralisation that every piece of model text
// passes before pyaichat adds its own styling, both in the agent's plain
// output and in the Markdown renderer, so the two can never disagree about
// what reaches the terminal.
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible returns s with every character that could drive a terminal
// spelled out the way Python's repr spells it, since this is a Python REPL:
// C0 controls other than \n and \t, DEL, C1 controls (U+0080-U+009F) and
// bytes that are not UTF-8 as \xNN (\r as \r), and the bidi overrides and
// isolates (U+202A-U+202E, U+2066-U+2069), which reorder what follows them
// on screen, as \uNNNN. A model's answer or a hostile server could
// otherwise set the window title, write the clipboard (OSC 52), clear the
// screen, hide the cursor, overwrite a line with \r, or leave the next
// prompt dim.
func Visible(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteByte(byte(r))
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || (r >= 0x7f && r <= 0x9f):
			fmt.Fprintf(&b, `\x%02x`, r)
		case IsBidiControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isPlain is Visible's fast path: printable ASCII, newlines and tabs.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\n' && c != '\t') {
			return false
		}
	}
	return true
}

// IsBidiControl reports the bidi overrides and isolates that Visible
// spells out.
func IsBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Prefix is the longest start of s of at most n bytes that does not end
// inside a UTF-8 character: where text is cut to a byte bound, so that the
// cut never leaves half a character (shown as \xNN) behind.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)]
}

// Shorten is s cut to at most n bytes (at a character boundary), with
// "..." added when anything was cut.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + "..."
}

// Squash collapses runs of white space (newlines included) to one space and
// shortens the result to about n bytes: a server's error message or an HTML
// page quoted in one line.
func Squash(s string, n int) string {
	return Shorten(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " "), n)
}

// OneLine makes s one harmless line of about n bytes: Squash, then
// Visible. Server error messages and notices are shown this way, since an
// HTML page or a multi-line message would otherwise push the answer off
// the screen.
func OneLine(s string, n int) string { return Visible(Squash(s, n)) }
