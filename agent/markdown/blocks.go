package markdown

import (
	"strings"
)

type blockKind uint8

const (
	blockPara blockKind = iota
	blockBlank
	blockHeading
	blockRule
	blockFence
	blockTable
	blockList
)

// block is what a line starts: its kind and where its text begins.
type block struct {
	kind    blockKind
	content int // byte offset of the inline text in the line
	indent  int // columns before the text or list marker (after quotes)
	quotes  int // block quote depth (> markers)
	level   int // heading level
	marker  string
	ordered bool
	// a fence: its character, length and info string (the language)
	fence    byte
	fenceLen int
	info     string
}

// streams reports whether the block's text is laid out word by word while
// its line arrives; the others are laid out when their line ends.
func (b block) streams() bool { return b.kind == blockPara || b.kind == blockList }

// classify says what line starts. With whole false, line is unfinished
// and ok is false while more of it could change the answer; whenever ok is
// true the answer is the one the whole line gets.
func classify(line string, whole bool) (b block, ok bool) {
	var i, col int
	i, col, b.quotes = quotePrefix(line)
	j, c := skipSpaces(line, i, col)
	b.indent = c - col
	rest := line[j:]
	b.content = j
	if strings.TrimSpace(rest) == "" {
		if !whole {
			return b, false
		}
		if b.quotes > 0 {
			return b, true // an empty quote line: a paragraph of nothing
		}
		b.kind = blockBlank
		return b, true
	}
	switch rest[0] {
	case '#':
		return heading(b, rest, j, whole)
	case '`', '~':
		if fb, isFence, decided := fence(b, rest, whole); isFence || !decided {
			return fb, decided
		}
	case '|':
		if b.quotes == 0 {
			b.kind = blockTable
			return b, whole
		}
	case '-', '*', '_', '+':
		return bulletOrRule(b, line, j, whole)
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return ordered(b, line, j, whole)
	}
	return b, true
}

// quotePrefix reads a line's block quote markers ("> ", possibly nested):
// where the text after them starts, its column, and how many there are.
func quotePrefix(line string) (i, col, quotes int) {
	for {
		j, c := skipSpaces(line, i, col)
		if j >= len(line) || line[j] != '>' || c-col >= 4 {
			return i, col, quotes
		}
		quotes++
		i, col = j+1, c+1
		if i < len(line) && line[i] == ' ' {
			i++
			col++
		}
	}
}

// bulletOrRule: a line starting with one of -*_+ at line[at] is a rule
// (---), a bullet item (- text) or a paragraph (**bold**).
func bulletOrRule(b block, line string, at int, whole bool) (block, bool) {
	rest := line[at:]
	if isRuleSoFar(rest) {
		if !whole {
			return b, false
		}
		if rest[0] != '+' && isRule(rest) {
			b.kind = blockRule
			return b, true
		}
	}
	if rest[0] == '_' {
		return b, true
	}
	if len(rest) == 1 && !whole {
		return b, false
	}
	if len(rest) == 1 || rest[1] == ' ' || rest[1] == '\t' {
		b.kind, b.marker = blockList, "•"
		b.content = contentAfter(line, at+1)
	}
	return b, true
}

func skipSpaces(s string, i, col int) (int, int) {
	for i < len(s) {
		switch s[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return i, col
		}
		i++
	}
	return i, col
}

// contentAfter is where a list item's text starts after its marker.
func contentAfter(line string, i int) int {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

func heading(b block, rest string, at int, whole bool) (block, bool) {
	n := 0
	for n < len(rest) && rest[n] == '#' {
		n++
	}
	if n > 6 || (n < len(rest) && rest[n] != ' ' && rest[n] != '\t') {
		return b, true // a paragraph
	}
	if !whole {
		// A heading is laid out whole: its closing #s are known at the end.
		return b, false
	}
	b.kind, b.level = blockHeading, n
	b.content = contentAfter(rest, n) + at
	return b, true
}

func fence(b block, rest string, whole bool) (fb block, isFence, decided bool) {
	c := rest[0]
	n := 0
	for n < len(rest) && rest[n] == c {
		n++
	}
	if n < 3 {
		if n == len(rest) && !whole {
			return b, false, false
		}
		return b, false, true
	}
	info := strings.TrimSpace(rest[n:])
	if c == '`' && strings.Contains(info, "`") {
		return b, false, true // inline code, as CommonMark says
	}
	if !whole {
		return b, true, false
	}
	b.kind, b.fence, b.fenceLen = blockFence, c, n
	if f := strings.Fields(info); len(f) > 0 {
		b.info = f[0]
	}
	return b, true, true
}

// isRuleSoFar: only one of -*_ and spaces, so it may be a rule.
func isRuleSoFar(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != s[0] && s[i] != ' ' && s[i] != '\t' {
			return false
		}
	}
	return true
}

func isRule(s string) bool { return strings.Count(s, s[:1]) >= 3 }

func ordered(b block, line string, at int, whole bool) (block, bool) {
	rest := line[at:]
	n := 0
	for n < len(rest) && n < 10 && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == len(rest) {
		return b, whole
	}
	if n > 9 || (rest[n] != '.' && rest[n] != ')') {
		return b, true
	}
	if n+1 == len(rest) {
		if !whole {
			return b, false
		}
	} else if rest[n+1] != ' ' && rest[n+1] != '\t' {
		return b, true
	}
	b.kind, b.ordered, b.marker = blockList, true, rest[:n+1]
	b.content = contentAfter(line, at+n+1)
	return b, true
}

// listItem is an open item of a (nested) list.
type listItem struct {
	indent int // source columns before its marker
	out    int // output columns before its text
}

// startFlow begins laying out a paragraph, list item or heading line: the
// prefix (quote bars, list indentation, bullet) and the text's style.
func (r *Renderer) startFlow(b block) *flow {
	r.blank = false
	f := &flow{r: r, width: r.opt.Width}
	var pre []seg
	for i := 0; i < b.quotes; i++ {
		pre = append(pre, seg{"│ ", stDim})
	}
	switch b.kind {
	case blockHeading:
		r.lists = nil
		f.base = stHeading
		if b.level <= 2 {
			f.base |= stTitle
		}
		f.prefix, f.cont = pre, pre
	case blockList:
		out := r.listOut(b)
		markerW := displayWidth(b.marker) + 1
		ind := seg{strings.Repeat(" ", out), 0}
		f.prefix = append(append([]seg(nil), pre...), ind, seg{b.marker + " ", stBullet})
		f.cont = append(append([]seg(nil), pre...), seg{strings.Repeat(" ", out+markerW), 0})
		r.lists = append(r.lists, listItem{indent: b.indent, out: out + markerW})
	default:
		// An indented line inside a list continues its item.
		r.popLists(b.indent)
		out := 0
		if n := len(r.lists); n > 0 && b.indent > 0 {
			out = r.lists[n-1].out
		} else {
			r.lists = nil
		}
		ind := seg{strings.Repeat(" ", out), 0}
		f.prefix = append(append([]seg(nil), pre...), ind)
		f.cont = f.prefix
	}
	f.prefixW, f.contW = segsWidth(f.prefix), segsWidth(f.cont)
	return f
}

// listOut finds the item's nesting from its indentation (an item more
// indented than the one before is its child, as models indent by 2, 3 or
// 4 spaces alike) and returns the output columns before its marker. Deep
// nesting is capped so that a narrow terminal keeps room for the text.
func (r *Renderer) listOut(b block) int {
	r.popLists(b.indent)
	out := 0
	if n := len(r.lists); n > 0 {
		out = r.lists[n-1].out
	}
	return min(out, r.opt.Width/3)
}

// popLists closes the items that a line indented by indent is not inside.
func (r *Renderer) popLists(indent int) {
	for n := len(r.lists); n > 0 && r.lists[n-1].indent >= indent; n-- {
		r.lists = r.lists[:n-1]
	}
}
