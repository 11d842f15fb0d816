package view

import (
	"io"
	"strings"

	"github.com/pyaichat/pyaichat/agent/markdown"
	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// lineWriter is where everything shown of a question goes. It makes the
// text harmless (controls made visible; the loop has already redacted the
// key), adds pyaichat's own dim styling on a terminal, and tracks whether
// the last byte ended a line, so that notices and the summary start on a
// line of their own.
type lineWriter struct {
	w       io.Writer
	color   bool
	midLine bool
	// md, on a terminal, lays the answer out from its Markdown; it makes
	// the text visible itself, before any styling. mdLast says it wrote
	// last: its Flush ends only a line of its own.
	md     *markdown.Renderer
	mdLast bool
}

// put shows text that came from a model or a server, or that quotes one;
// dim text is dimmed on a terminal.
func (l *lineWriter) put(text string, dim bool) {
	if text == "" {
		return
	}
	text = termsafe.Visible(text)
	if dim && l.color {
		text = dimLines(text)
	}
	l.midLine = text[len(text)-1] != '\n'
	l.mdLast = false
	io.WriteString(l.w, text)
}

// write shows text of pyaichat's own as it is (a command's output).
func (l *lineWriter) write(text string) {
	if text == "" {
		return
	}
	l.midLine = text[len(text)-1] != '\n'
	l.mdLast = false
	io.WriteString(l.w, text)
}

// dimLines dims each line of s on its own and keeps the newlines outside
// the colour, so an interrupted stream never leaves the terminal dim and
// the prompt that follows is never dimmed.
func dimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, ln := range lines {
		if ln != "" {
			lines[i] = "\x1b[2m" + ln + "\x1b[0m"
		}
	}
	return strings.Join(lines, "\n")
}

// answer shows a piece of the model's answer.
func (l *lineWriter) answer(text string) {
	if text == "" {
		return
	}
	if l.md != nil {
		l.md.WriteString(text)
		l.midLine = l.md.MidLine()
		l.mdLast = true
		return
	}
	l.put(text, false)
}

// newLine ends a line the writer did not write (Ctrl-C's echo, the
// question under share = "ask").
func (l *lineWriter) newLine() {
	io.WriteString(l.w, "\n")
	l.midLine = false
	l.mdLast = false
}

// endLine ends the answer's line, and on a terminal lays out what the
// renderer held back (an unfinished line, table or code block), since a
// notice, thinking or the summary follows.
func (l *lineWriter) endLine() {
	if l.md != nil {
		l.md.Flush()
		// Flush ends the renderer's line; thinking or a command's output
		// written after it is ended below.
		if l.mdLast {
			l.midLine = false
		}
	}
	if l.midLine {
		io.WriteString(l.w, "\n")
		l.midLine = false
	}
}
