package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pyaichat/pyaichat/termwidth"
)

// maxHold bounds how far past an opening marker (**, `, [) the renderer
// looks for its closing one: past it, the marker is text. It keeps what is
// held back small even when a model never closes one.
const maxHold = 1024

// seg is a run of text in one style.
type seg struct {
	text string
	st   style
}

// flow lays out the inline text of one line (a paragraph line, a list
// item, a heading, a table cell): words are wrapped to the width and
// written as soon as each is whole.
type flow struct {
	r      *Renderer
	width  int
	base   style
	prefix []seg // before the first row
	cont   []seg // before the rows after it
	// prefixW and contW are their widths.
	prefixW, contW int

	// rows collects the rows instead of writing them (table cells).
	collect bool
	rows    [][]seg
	row     []seg

	col      int  // columns used on the current row
	rowBegin int  // ... by its prefix
	started  bool // the current row has its prefix
	any      bool // a row was started
	space    bool // a space is due before the next word
	spaced   bool // ... and was already written
	// the word being read: its bytes, and where each style's run ends
	word  []byte
	wsegs []wseg
	wordW int

	emph []delim // open emphasis, innermost last
	link bool    // inside a link's text
	prev rune    // the character before the next one, for flanking
}

type wseg struct {
	end int
	st  style
}

type delim struct {
	c byte
	n int
}

// process lays out s, the next text of the line, as far as it is decided,
// and returns how many bytes it used; final says the line ends after s.
func (f *flow) process(s string, final bool) int {
	i := 0
	for i < len(s) {
		c := s[i]
		var n int
		switch c {
		case ' ', '\t':
			f.endWord()
			f.addSpace()
			f.prev = ' '
			i++
			continue
		case '\\':
			n = f.escape(s[i:], final)
		case '`':
			n = f.codeSpan(s[i:], final)
		case '*', '_':
			n = f.emphasis(s[i:], final)
		case '[':
			n = f.linkAt(s[i:], final)
		case '!':
			if i+1 == len(s) && !final {
				return i
			}
			if i+1 < len(s) && s[i+1] == '[' {
				n = f.linkAt(s[i+1:], final)
				if n > 0 {
					n++
				}
			} else {
				n = f.char(s[i:])
			}
		default:
			n = f.char(s[i:])
		}
		if n == 0 {
			return i // undecided until more of the line arrives
		}
		i += n
	}
	return i
}

// char adds one character to the current word.
func (f *flow) char(s string) int {
	if c := s[0]; c < utf8.RuneSelf {
		f.addASCII(c, f.style())
		f.prev = rune(c)
		return 1
	}
	r, n := utf8.DecodeRuneInString(s)
	f.add(s[:n], f.style())
	f.prev = r
	return n
}

func (f *flow) addASCII(c byte, st style) {
	f.word = append(f.word, c)
	if n := len(f.wsegs); n > 0 && f.wsegs[n-1].st == st {
		f.wsegs[n-1].end++
	} else {
		f.wsegs = append(f.wsegs, wseg{len(f.word), st})
	}
	f.wordW++
}

func (f *flow) escape(s string, final bool) int {
	if len(s) == 1 {
		if !final {
			return 0
		}
		return f.char(s)
	}
	if c := rune(s[1]); c < 0x80 && (unicode.IsPunct(c) || unicode.IsSymbol(c)) {
		f.add(s[1:2], f.style())
		f.prev = rune(s[1])
		return 2
	}
	return f.char(s)
}

// runLen is the length of the run of s[0] at the start of s.
func runLen(s string) int {
	n := 1
	for n < len(s) && s[n] == s[0] {
		n++
	}
	return n
}

// codeSpan: `code` (or “code“ and so on), shown without the backticks.
func (f *flow) codeSpan(s string, final bool) int {
	n := runLen(s)
	if n == len(s) && !final {
		return 0
	}
	end, decided := findRun(s, n, '`', n, final, func(s string, j int) bool { return true })
	if !decided {
		return 0
	}
	if end < 0 {
		f.add(s[:n], f.style())
		f.prev = '`'
		return n
	}
	code := s[n:end]
	if len(code) > 1 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
		code = code[1 : len(code)-1]
	}
	st := f.style() | stCode
	for k, w := range strings.Split(code, " ") {
		if k > 0 {
			f.endWord()
			f.addSpace()
		}
		if w != "" {
			f.add(w, st)
		}
	}
	f.prev = '`'
	return end + n
}

// findRun looks in s, after its first from bytes, for a run of exactly n
// bytes c that ok accepts. It returns the run's offset, or -1 when there is
// none; decided is false while more text could still bring one (a run at
// the very end of s could grow).
func findRun(s string, from int, c byte, n int, final bool, ok func(s string, j int) bool) (at int, decided bool) {
	limit := min(len(s), from+maxHold)
	for j := from; j < limit; {
		if s[j] != c {
			if s[j] == '\\' && c != '`' { // no escapes inside code
				j++
			}
			j++
			continue
		}
		m := runLen(s[j:])
		if j+m == len(s) && !final {
			return -1, false
		}
		if m == n && ok(s, j) {
			return j, true
		}
		j += m
	}
	if limit < len(s) || final || len(s)-from >= maxHold {
		return -1, true
	}
	return -1, false
}

// emphasis: *italic*, _italic_, **bold**, ***both***. A marker opens only
// if its closing one is on the same line, as CommonMark says; a marker
// inside a word made of letters (snake_case, 2*3*4) is text.
func (f *flow) emphasis(s string, final bool) int {
	c := s[0]
	n := runLen(s)
	if n == len(s) && !final {
		return 0
	}
	left, right := f.flanking(s, n)
	switch {
	case n > 3:
	case right:
		if f.closeEmphasis(delim{c, n}) {
			f.prev = rune(c)
			return n
		}
	case left:
		end, decided := findRun(s, n, c, n, final, closesEmphasis(c, n))
		if !decided {
			return 0
		}
		if end >= 0 {
			f.emph = append(f.emph, delim{c, n})
			f.prev = rune(c)
			return n
		}
	}
	f.add(s[:n], f.style())
	f.prev = rune(c)
	return n
}

// flanking says whether the marker of n bytes at the start of s can open
// emphasis (left: no space follows it) and close it (right: no space
// comes before it).
func (f *flow) flanking(s string, n int) (left, right bool) {
	next := ' '
	if n < len(s) {
		next, _ = utf8.DecodeRuneInString(s[n:])
	}
	prevSpace := f.prev == 0 || unicode.IsSpace(f.prev)
	return !unicode.IsSpace(next), !prevSpace
}

// closeEmphasis ends the innermost open emphasis of marker d, if any.
func (f *flow) closeEmphasis(d delim) bool {
	for k := len(f.emph) - 1; k >= 0; k-- {
		if f.emph[k] == d {
			f.endEmphasisAt(k)
			return true
		}
	}
	return false
}

// closesEmphasis accepts a run of n markers c at s[j] that could close
// emphasis: no space before it, and for _ no letter or digit after it.
func closesEmphasis(c byte, n int) func(s string, j int) bool {
	return func(s string, j int) bool {
		before, _ := utf8.DecodeLastRuneInString(s[:j])
		if unicode.IsSpace(before) {
			return false
		}
		if c == '_' && j+n < len(s) {
			after, _ := utf8.DecodeRuneInString(s[j+n:])
			return !isWordChar(after)
		}
		return true
	}
}

func (f *flow) endEmphasisAt(k int) { f.emph = append(f.emph[:k], f.emph[k+1:]...) }

func isWordChar(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// linkAt: [text](url), shown as text (url); s starts at the [.
func (f *flow) linkAt(s string, final bool) int {
	if f.link {
		return f.char(s)
	}
	rb := closingBracket(s)
	if rb < 0 {
		if final || len(s) >= maxHold {
			return f.char(s)
		}
		return 0
	}
	if rb+1 == len(s) {
		if final {
			return f.char(s)
		}
		return 0
	}
	if s[rb+1] != '(' {
		return f.char(s)
	}
	end, decided := linkEnd(s, rb+2, final)
	if !decided {
		return 0
	}
	if end < 0 {
		return f.char(s)
	}
	text := s[1:rb]
	url := strings.TrimSpace(s[rb+2 : end])
	if k := strings.Index(url, " \""); k >= 0 {
		url = url[:k] // a title
	}
	url = strings.Trim(url, "<>")
	saved := f.emph
	f.emph = nil
	f.link = true
	f.process(text, true)
	f.link = false
	f.emph = saved
	if url != "" && url != text {
		f.endWord()
		f.addSpace()
		f.add("("+url+")", stURL)
	}
	f.prev = ')'
	return end + 1
}

// linkEnd finds the ) that ends a link's address starting at s[from]:
// -1 when the text is not a link (a space that does not start a title).
func linkEnd(s string, from int, final bool) (end int, decided bool) {
	parens := 0
	for j := from; j < len(s) && j < maxHold; j++ {
		switch s[j] {
		case '(':
			parens++
		case ')':
			if parens == 0 {
				return j, true
			}
			parens--
		case '"':
			q := strings.IndexByte(s[j+1:], '"')
			if q < 0 {
				return -1, final || len(s) >= maxHold
			}
			j += q + 1
		case ' ':
			if parens > 0 {
				continue
			}
			rest := strings.TrimLeft(s[j:], " ")
			if rest == "" {
				return -1, final
			}
			if rest[0] != '"' {
				return -1, true
			}
		}
	}
	return -1, final || len(s) >= maxHold
}

// closingBracket is the offset of the ] that closes the [ at s[0], or -1.
func closingBracket(s string) int {
	level := 0
	for j := 1; j < len(s) && j < maxHold; j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			level++
		case ']':
			if level == 0 {
				return j
			}
			level--
		}
	}
	return -1
}

// style is the style of the next character.
func (f *flow) style() style {
	st := f.base
	for _, d := range f.emph {
		switch d.n {
		case 1:
			st |= stItalic
		case 2:
			st |= stBold
		default:
			st |= stBold | stItalic
		}
	}
	if f.link {
		st |= stLink
	}
	return st
}

// add appends text (no spaces in it) to the current word.
func (f *flow) add(text string, st style) {
	f.word = append(f.word, text...)
	if n := len(f.wsegs); n > 0 && f.wsegs[n-1].st == st {
		f.wsegs[n-1].end = len(f.word)
	} else {
		f.wsegs = append(f.wsegs, wseg{len(f.word), st})
	}
	f.wordW += displayWidth(text)
}

// segs are the current word's runs.
func (f *flow) segs(yield func(text string, st style)) {
	start := 0
	for _, w := range f.wsegs {
		yield(string(f.word[start:w.end]), w.st)
		start = w.end
	}
}

func (f *flow) addSpace() {
	if !f.started || f.space {
		return
	}
	f.space = true
	// Written at once when it fits, so that text streaming word by word
	// shows its spaces too; a space that ends a row is never seen.
	if f.col < f.width {
		f.put(" ", 0)
		f.col++
		f.spaced = true
	}
}

// endWord places the word that just ended: on this row if it fits, else
// on the next; a word wider than a whole row is cut.
func (f *flow) endWord() {
	if len(f.wsegs) == 0 {
		return
	}
	if f.started && f.col+f.wordW > f.width {
		f.newRow()
	}
	if !f.started {
		f.startRow()
	} else if f.space && !f.spaced {
		f.put(" ", 0)
		f.col++
	}
	f.space, f.spaced = false, false
	if f.col+f.wordW <= f.width {
		f.segs(f.put)
		f.col += f.wordW
	} else {
		f.segs(f.cut)
	}
	f.word, f.wsegs = f.word[:0], f.wsegs[:0]
	f.wordW = 0
}

// cut writes a run of a word wider than a row across rows, a character at
// a time.
func (f *flow) cut(text string, st style) {
	start := 0
	for i, r := range text {
		w := termwidth.Rune(r)
		if f.col+w > f.width && f.col > f.rowBegin {
			f.put(text[start:i], st)
			start = i
			f.newRow()
			f.startRow()
		}
		f.col += w
	}
	f.put(text[start:], st)
}

func (f *flow) startRow() {
	pre, w := f.prefix, f.prefixW
	if f.any {
		pre, w = f.cont, f.contW
	}
	for _, sg := range pre {
		f.put(sg.text, sg.st)
	}
	f.col, f.rowBegin = w, w
	f.started, f.any = true, true
}

func (f *flow) newRow() {
	if f.collect {
		f.rows = append(f.rows, trimRow(f.row))
		f.row = nil
	} else {
		f.r.put("\n")
	}
	f.started = false
	f.col = 0
	f.space, f.spaced = false, false
}

func (f *flow) put(text string, st style) {
	if f.collect {
		if n := len(f.row); n > 0 && f.row[n-1].st == st {
			f.row[n-1].text += text
		} else {
			f.row = append(f.row, seg{text, st})
		}
		return
	}
	f.r.put(f.r.style(st, text))
}

// finish ends the line: its last word is placed and the row ended.
func (f *flow) finish() {
	f.endWord()
	if !f.any {
		f.startRow()
	}
	if f.started {
		f.newRow()
	}
}

func trimRow(row []seg) []seg {
	for len(row) > 0 {
		last := &row[len(row)-1]
		t := strings.TrimRight(last.text, " ")
		if t != "" {
			last.text = t
			break
		}
		row = row[:len(row)-1]
	}
	return row
}

func displayWidth(s string) int { return termwidth.String(s) }

func segsWidth(segs []seg) int {
	w := 0
	for _, sg := range segs {
		w += displayWidth(sg.text)
	}
	return w
}
