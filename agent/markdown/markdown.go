// Package markdown lays out a model's Markdown answer for a terminal while
// it streams: headings, emphasis, inline code, lists, block quotes, pipe
// tables, links, rules and fenced code blocks highlighted by language.
//
// The answer arrives in arbitrary pieces (a delta may split a UTF-8
// character or a ** marker). The renderer writes each word as soon as it is
// known to be whole and where it goes (it wraps to the width), each code
// line when its line ends, and holds back only what cannot be laid out
// yet: the rest of a line whose opening marker (**, `, [) is still
// unmatched, a heading or a fence line until it ends, and a table until it
// ends, because its columns need every row's width (at most maxTableRows
// rows). So the output is the same however the answer is cut into pieces.
//
// Every byte of the answer is made harmless by termsafe.Visible before it
// is parsed, so the only escape sequences in the output are the renderer's
// own styling, and none at all without Color.
package markdown

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// Options say how to lay out an answer.
type Options struct {
	// Width is the terminal's width in columns; no output line is wider.
	// Values below minWidth are raised to it; 0 means 80.
	Width int
	// Color enables styling with SGR escape sequences; without it the
	// answer is still laid out (wrapped, no markers) in plain text.
	Color bool
	// Colors256 selects the 256-colour palette for code (else 16 colours).
	Colors256 bool
}

const minWidth = 20

// CodeBlock is one fenced code block of the answer, as the model wrote it
// (made visible: control characters spelled out).
type CodeBlock struct {
	Lang string
	Text string
}

// Renderer lays out one answer. It is not safe for concurrent use.
type Renderer struct {
	w   io.Writer
	opt Options
	out []byte // what one Write produces, written at once

	raw  []byte // an unfinished UTF-8 character from the last Write
	pend string // the current line's text not yet laid out
	err  error

	open  *flow // the current line, already started on screen
	table *table
	code  *codeBlock
	// tableRaw is set after a table passed maxTableRows: its remaining
	// rows are shown as they are.
	tableRaw bool
	lists    []listItem // open list items, outermost first
	blank    bool       // the last line shown was blank
	wrote    bool       // anything was shown
	midRow   bool       // the cursor is not at the start of a line

	blocks []CodeBlock
}

// New returns a renderer writing to w.
func New(w io.Writer, opt Options) *Renderer {
	r := &Renderer{w: w}
	r.SetOptions(opt)
	return r
}

// SetOptions changes the layout for what follows (a resized terminal
// between answers).
func (r *Renderer) SetOptions(opt Options) {
	if opt.Width <= 0 {
		opt.Width = 80
	}
	opt.Width = max(opt.Width, minWidth)
	r.opt = opt
}

// Write lays out the next piece of the answer.
func (r *Renderer) Write(p []byte) (int, error) {
	r.WriteString(string(p))
	return len(p), r.err
}

// WriteString lays out the next piece of the answer.
func (r *Renderer) WriteString(s string) {
	if len(r.raw) > 0 {
		s = string(r.raw) + s
		r.raw = r.raw[:0]
	}
	// Hold an unfinished UTF-8 character for the next piece: Visible would
	// spell its bytes out one by one.
	if cut := incompleteTail(s); cut > 0 {
		r.raw = append(r.raw, s[len(s)-cut:]...)
		s = s[:len(s)-cut]
	}
	if s == "" {
		return
	}
	r.feed(termsafe.Visible(s))
	r.emit()
}

// Flush lays out everything held back, as at the end of the answer: an
// unfinished line, table or code block. The cursor is then at the start of
// a line. More text may follow; it starts new blocks.
func (r *Renderer) Flush() error {
	if len(r.raw) > 0 {
		s := string(r.raw)
		r.raw = r.raw[:0]
		r.feed(termsafe.Visible(s))
	}
	if r.pend != "" || r.open != nil {
		line := r.pend
		r.pend = ""
		r.line(line)
	}
	r.endTable()
	r.endCode()
	r.tableRaw = false
	r.lists = nil
	if r.midRow {
		r.put("\n")
	}
	r.emit()
	return r.err
}

// Wrote reports whether anything has been shown.
func (r *Renderer) Wrote() bool { return r.wrote }

// MidLine reports whether the cursor is after text on its line (only
// while a paragraph line is being streamed).
func (r *Renderer) MidLine() bool { return r.midRow }

// CodeBlocks are the fenced code blocks of a whole answer, numbered as a
// Renderer labels them as it shows the answer ([1] python): /code takes
// them from the answer's text.
func CodeBlocks(answer string) []CodeBlock {
	r := New(io.Discard, Options{})
	r.WriteString(answer)
	r.Flush()
	return r.CodeBlocks()
}

// CodeBlocks returns the answer's fenced code blocks so far, numbered from
// 1 as they were shown ([1] python).
func (r *Renderer) CodeBlocks() []CodeBlock {
	out := append([]CodeBlock(nil), r.blocks...)
	if r.code != nil {
		out = append(out, CodeBlock{Lang: r.code.lang, Text: r.code.text.String()})
	}
	return out
}

func (r *Renderer) emit() {
	if len(r.out) == 0 || r.err != nil {
		r.out = r.out[:0]
		return
	}
	_, r.err = r.w.Write(r.out)
	r.out = r.out[:0]
}

// put adds text to the output; text never holds model bytes that have not
// been made visible.
func (r *Renderer) put(s string) {
	if s == "" {
		return
	}
	r.out = append(r.out, s...)
	r.wrote = true
	r.midRow = s[len(s)-1] != '\n'
}

// incompleteTail is the length of an unfinished UTF-8 sequence at the end
// of s (0 if there is none, or if those bytes could never be one).
func incompleteTail(s string) int {
	for i := 1; i <= 3 && i <= len(s); i++ {
		c := s[len(s)-i]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			need := 0
			switch {
			case c&0xe0 == 0xc0:
				need = 2
			case c&0xf0 == 0xe0:
				need = 3
			case c&0xf8 == 0xf0:
				need = 4
			}
			if need > i {
				return i
			}
			return 0
		}
	}
	return 0
}

// feed takes visible text: whole lines are laid out, and the start of the
// next one as far as it can be.
func (r *Renderer) feed(s string) {
	r.pend += s
	for {
		nl := strings.IndexByte(r.pend, '\n')
		if nl < 0 {
			break
		}
		line := r.pend[:nl]
		r.pend = r.pend[nl+1:]
		r.line(line)
	}
	if r.pend != "" {
		r.partial()
	}
}

// partial lays out as much of an unfinished line as is decided.
func (r *Renderer) partial() {
	if r.open == nil {
		if r.code != nil {
			return // a code line (or the closing fence) is shown whole
		}
		b, ok := classify(r.pend, false)
		if !ok {
			return
		}
		if r.table != nil || r.tableRaw {
			if b.kind == blockTable {
				return
			}
			r.endTable()
			r.tableRaw = false
		}
		if !b.streams() {
			return
		}
		r.open = r.startFlow(b)
		r.pend = r.pend[b.content:]
	}
	n := r.open.process(r.pend, false)
	r.pend = r.pend[n:]
}

// line lays out one whole line (without its newline).
func (r *Renderer) line(s string) {
	if f := r.open; f != nil {
		r.open = nil
		f.process(s, true)
		f.finish()
		return
	}
	if r.code != nil {
		r.codeLine(s)
		return
	}
	b, _ := classify(s, true)
	if r.tableRaw && b.kind != blockTable {
		r.tableRaw = false
	}
	if r.table != nil && b.kind != blockTable {
		r.endTable()
	}
	switch b.kind {
	case blockBlank:
		if r.wrote && !r.blank {
			r.put("\n")
		}
		r.blank = true
		return
	case blockRule:
		r.lists = nil
		r.put(r.style(stDim, strings.Repeat("─", r.opt.Width)) + "\n")
	case blockFence:
		r.lists = nil
		r.startCode(b)
	case blockTable:
		r.tableRow(s)
	default:
		text := s[b.content:]
		if b.kind == blockHeading {
			text = trimClosingHashes(text)
		}
		f := r.startFlow(b)
		f.process(text, true)
		f.finish()
	}
	r.blank = false
}

// trimClosingHashes removes a heading's optional closing sequence (## Title ##).
func trimClosingHashes(s string) string {
	t := strings.TrimRight(s, " \t")
	h := strings.TrimRight(t, "#")
	if h == "" || h == t {
		return t
	}
	if h[len(h)-1] == ' ' || h[len(h)-1] == '\t' {
		return strings.TrimRight(h, " \t")
	}
	return t
}
