// Package highlight colours Python source as it is typed at py>: keywords,
// builtins, strings (f-strings included), numbers, comments, decorators,
// the names a def or class defines, and brackets that close nothing. It
// scans the text itself, a row at a time with strings that span rows
// followed, and never asks the interpreter: it runs at every key.
package highlight

import (
	"strings"
	"unicode"
)

// Span colours the runes of a line from Start to End with SGR, the
// parameters of an SGR escape sequence ("1;34").
type Span struct {
	Start, End int
	SGR        string
}

// The colours, as Python 3.14's REPL has them by default.
const (
	keywordSGR   = "1;34" // bold blue
	builtinSGR   = "36"   // cyan
	stringSGR    = "32"   // green
	numberSGR    = "33"   // yellow
	commentSGR   = "31"   // red
	decoratorSGR = "35"   // magenta
	defineSGR    = "1"    // bold
	unmatchedSGR = "1;41" // bold on red: a bracket that closes nothing
)

var keywords = set("False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield")

// builtins are the public names of Python's builtins module (3.11).
var builtins = set("ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup BlockingIOError BrokenPipeError BufferError BytesWarning ChildProcessError ConnectionAbortedError ConnectionError ConnectionRefusedError ConnectionResetError DeprecationWarning EOFError Ellipsis EncodingWarning EnvironmentError Exception ExceptionGroup FileExistsError FileNotFoundError FloatingPointError FutureWarning GeneratorExit IOError ImportError ImportWarning IndentationError IndexError InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError ModuleNotFoundError NameError NotADirectoryError NotImplemented NotImplementedError OSError OverflowError PendingDeprecationWarning PermissionError ProcessLookupError RecursionError ReferenceError ResourceWarning RuntimeError RuntimeWarning StopAsyncIteration StopIteration SyntaxError SyntaxWarning SystemError SystemExit TabError TimeoutError TypeError UnboundLocalError UnicodeDecodeError UnicodeEncodeError UnicodeError UnicodeTranslateError UnicodeWarning UserWarning ValueError Warning ZeroDivisionError abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile complex copyright credits delattr dict dir divmod enumerate eval exec exit filter float format frozenset getattr globals hasattr hash help hex id input int isinstance issubclass iter len license list locals map max memoryview min next object oct open ord pow print property quit range repr reversed round set setattr slice sorted staticmethod str sum super tuple type vars zip")

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// Python lists the spans to colour in line, in order.
func Python(line []rune) []Span {
	s := scanner{line: line}
	s.scan()
	return s.spans
}

type scanner struct {
	line    []rune
	i       int
	spans   []Span
	opens   []int // the positions of the brackets open
	defines bool  // the name next is one a def or class defines
	rowHead bool  // nothing but indentation yet on this row
}

func (s *scanner) add(start int, sgr string) {
	s.spans = append(s.spans, Span{start, s.i, sgr})
}

func (s *scanner) scan() {
	s.rowHead = true
	for s.i < len(s.line) {
		switch r := s.line[s.i]; {
		case r == '\n':
			s.i++
			s.rowHead = true
		case r == ' ' || r == '\t':
			s.i++
		default:
			s.token(r)
			s.rowHead = false
		}
	}
}

// token takes the token that starts with r, at s.i.
func (s *scanner) token(r rune) {
	start := s.i
	switch {
	case r == '#':
		s.skipRow()
		s.add(start, commentSGR)
	case r == '@' && s.rowHead:
		s.i++
		s.skipDotted()
		s.add(start, decoratorSGR)
	case s.stringStart():
		s.skipString()
		s.add(start, stringSGR)
	case unicode.IsDigit(r) || r == '.' && s.i+1 < len(s.line) && unicode.IsDigit(s.line[s.i+1]):
		s.skipNumber()
		s.add(start, numberSGR)
	case r == '_' || unicode.IsLetter(r):
		s.name(start)
	case strings.ContainsRune("([{", r):
		s.opens = append(s.opens, s.i)
		s.i++
	case strings.ContainsRune(")]}", r):
		s.closing(r)
	default:
		s.i++
	}
}

// name colours the name at start: a keyword, a builtin, or what a def or
// class defines.
func (s *scanner) name(start int) {
	for s.i < len(s.line) && isNameRune(s.line[s.i]) {
		s.i++
	}
	word := string(s.line[start:s.i])
	after := s.defines
	s.defines = false
	switch {
	case after:
		s.add(start, defineSGR)
	case keywords[word]:
		s.add(start, keywordSGR)
		s.defines = word == "def" || word == "class"
	case builtins[word] && !s.afterDot(start):
		s.add(start, builtinSGR)
	}
}

// afterDot reports whether the name at start is an attribute (x.print).
func (s *scanner) afterDot(start int) bool {
	j := start - 1
	for j >= 0 && (s.line[j] == ' ' || s.line[j] == '\t') {
		j--
	}
	return j >= 0 && s.line[j] == '.'
}

// closing takes a closing bracket: it closes the last one open if that
// is its kind; otherwise it closes nothing, and is coloured so.
func (s *scanner) closing(r rune) {
	want := map[rune]rune{')': '(', ']': '[', '}': '{'}[r]
	if n := len(s.opens); n > 0 && s.line[s.opens[n-1]] == want {
		s.opens = s.opens[:n-1]
		s.i++
		return
	}
	start := s.i
	s.i++
	s.add(start, unmatchedSGR)
}

func (s *scanner) skipRow() {
	for s.i < len(s.line) && s.line[s.i] != '\n' {
		s.i++
	}
}

func (s *scanner) skipDotted() {
	for s.i < len(s.line) && (isNameRune(s.line[s.i]) || s.line[s.i] == '.') {
		s.i++
	}
}

func (s *scanner) skipNumber() {
	for s.i < len(s.line) {
		r := s.line[s.i]
		switch {
		case isNameRune(r) || r == '.':
			s.i++
		case (r == '+' || r == '-') && (s.line[s.i-1] == 'e' || s.line[s.i-1] == 'E') && !isHex(s.line[:s.i]):
			s.i++
		default:
			return
		}
	}
}

// isHex reports whether the number that ends num is hexadecimal, where
// an e is a digit and not an exponent.
func isHex(num []rune) bool {
	j := len(num) - 1
	for j > 0 && isNameRune(num[j-1]) {
		j--
	}
	return j+1 < len(num) && num[j] == '0' && (num[j+1] == 'x' || num[j+1] == 'X')
}

// stringStart reports whether a string literal starts here: a quote, or
// a prefix of r, b, u and f letters right before one.
func (s *scanner) stringStart() bool {
	j := s.i
	for j < len(s.line) && j-s.i < 2 && strings.ContainsRune("rRbBuUfF", s.line[j]) {
		j++
	}
	if j < len(s.line) && (s.line[j] == '\'' || s.line[j] == '"') {
		return j == s.i || s.i == 0 || !isNameRune(s.line[s.i-1])
	}
	return false
}

// skipString goes past a string literal, its prefix, quotes and escapes;
// one left open runs to the end of its row (or of the text, if triple
// quoted).
func (s *scanner) skipString() {
	raw := false
	for s.line[s.i] != '\'' && s.line[s.i] != '"' {
		raw = raw || s.line[s.i] == 'r' || s.line[s.i] == 'R'
		s.i++
	}
	q := s.line[s.i]
	triple := s.at(s.i+1, q) && s.at(s.i+2, q)
	if triple {
		s.i += 3
	} else {
		s.i++
	}
	for s.i < len(s.line) && !s.stringEnds(q, raw, triple) {
	}
	s.i = min(s.i, len(s.line))
}

// stringEnds takes the next piece of a string's body (an escape, a
// character, or its closing quotes) and reports whether the string ended.
func (s *scanner) stringEnds(q rune, raw, triple bool) bool {
	r := s.line[s.i]
	switch {
	case r == '\\' && (!raw || s.at(s.i+1, q)):
		s.i += 2
	case r == '\n' && !triple:
		return true
	case r == q && !triple:
		s.i++
		return true
	case r == q && s.at(s.i+1, q) && s.at(s.i+2, q):
		s.i += 3
		return true
	default:
		s.i++
	}
	return false
}

// at reports whether the rune at i is r.
func (s *scanner) at(i int, r rune) bool { return i < len(s.line) && s.line[i] == r }

func isNameRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
