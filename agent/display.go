package agent

import (
	"io"
	"strings"

	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/markdown"
	"github.com/pyaichat/pyaichat/agent/redact"
	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// Everything a model or a server sends reaches the terminal through visible
// (termsafe.Visible): lineWriter.put calls it on answer text, thinking,
// notices and the summary line, the Markdown renderer on every answer it
// lays out, and Session.clean on the errors the REPL prints. pyaichat adds
// its own styling only after the text has been made visible.
func visible(s string) string { return termsafe.Visible(s) }

func isBidiControl(r rune) bool { return termsafe.IsBidiControl(r) }

// oneLine makes s one harmless line of about max bytes (termsafe.OneLine).
func oneLine(s string, max int) string { return termsafe.OneLine(s, max) }

// redactKey replaces the API key in s (llm.RedactKey).
func redactKey(s, key string) string { return llm.RedactKey(s, key) }

// lineWriter is where everything shown to the user goes. It makes the text
// harmless (the key redacted, controls made visible), adds pyaichat's own
// dim styling on a terminal, and tracks whether the last byte ended a line,
// so that notices and the summary start on a line of their own.
type lineWriter struct {
	w       io.Writer
	key     string
	color   bool
	wrote   bool // answer text was shown
	midLine bool
	// md, on a terminal, lays the answer out from its Markdown; it makes
	// the text visible itself, before any styling.
	md *markdown.Renderer
}

// put shows text that came from a model or a server, or that quotes one;
// dim text is dimmed on a terminal.
func (l *lineWriter) put(text string, dim bool) {
	if text == "" {
		return
	}
	text = visible(redactKey(text, l.key))
	if dim && l.color {
		text = dimLines(text)
	}
	l.midLine = text[len(text)-1] != '\n'
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
	l.wrote = true
	if l.md != nil {
		l.md.WriteString(redactKey(text, l.key))
		l.midLine = l.md.MidLine()
		return
	}
	l.put(text, false)
}

// codeBlocks are the fenced code blocks of the answers shown (on a
// terminal), numbered as they were labelled.
func (l *lineWriter) codeBlocks() []markdown.CodeBlock {
	if l.md == nil {
		return nil
	}
	return l.md.CodeBlocks()
}

// newLine ends a line the writer did not write (Ctrl-C's echo).
func (l *lineWriter) newLine() {
	io.WriteString(l.w, "\n")
	l.midLine = false
}

// endLine ends the answer's line, and on a terminal lays out what the
// renderer held back (an unfinished line, table or code block), since a
// notice, thinking or the summary follows.
func (l *lineWriter) endLine() {
	if l.md != nil {
		l.md.Flush()
		l.midLine = false
	}
	if l.midLine {
		io.WriteString(l.w, "\n")
		l.midLine = false
	}
}

// keyFilter redacts the key from text that arrives in pieces: a key split
// across stream deltas ("sk-SEC" then "RET123") is whole in neither piece.
// It holds back the longest tail that could still be the start of the key
// until more text or the end of the answer arrives; ordinary text is held
// back only when it ends like the key begins.
type keyFilter struct {
	key  string
	tail string
}

// push returns the part of the text so far that is safe to show.
func (k *keyFilter) push(s string) string {
	if k.key == "" {
		return s
	}
	s = k.tail + s
	n := keyPrefixTail(s, k.key)
	k.tail = s[len(s)-n:]
	return redactKey(s[:len(s)-n], k.key)
}

// flush returns what push held back, at the end of the text.
func (k *keyFilter) flush() string {
	t := k.tail
	k.tail = ""
	return t
}

// keyPrefixTail is the length of the longest end of s that is a prefix of
// key (the whole key too: whether it is a whole token depends on the byte
// that follows). Only positions holding key's first byte are tried, so a
// delta costs about len(key) byte comparisons.
func keyPrefixTail(s, key string) int {
	if len(key) < redact.MinSecretLen {
		return 0
	}
	for i := max(0, len(s)-len(key)); i < len(s); i++ {
		if s[i] == key[0] && strings.HasPrefix(key, s[i:]) {
			return len(s) - i
		}
	}
	return 0
}
