package markdown

import (
	"embed"
	"fmt"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/pyaichat/pyaichat/termwidth"
)

// The lexers of the languages an answer is likely to show, copied from
// chroma's own (lexers/COPYING). chroma's lexers package reads the
// configuration of all its ~280 lexers when the program starts (11-15 ms and
// 2.7 MB allocated, measured), which would double pyaichat's start-up; these
// are read on first use, only for the languages met.
//
//go:embed lexers/*.xml
var lexerFiles embed.FS

// lexerAliases maps a fence's language to its lexer file.
var lexerAliases = map[string]string{
	"python": "python", "py": "python", "python3": "python", "py3": "python", "pyi": "python",
	"bash": "bash", "sh": "bash", "shell": "bash", "zsh": "bash", "ksh": "bash",
	"json": "json", "jsonl": "json",
	"javascript": "javascript", "js": "javascript", "mjs": "javascript",
	"typescript": "typescript", "ts": "typescript", "tsx": "typescript",
	"sql":  "sql",
	"yaml": "yaml", "yml": "yaml",
	"toml": "toml",
	"diff": "diff", "patch": "diff", "udiff": "diff",
	"c": "c", "h": "c",
	"cpp": "c++", "c++": "c++", "cc": "c++", "cxx": "c++", "hpp": "c++",
	"rust": "rust", "rs": "rust",
	"java": "java",
	"ini":  "ini", "cfg": "ini", "dosini": "ini",
}

var lexers struct {
	sync.Mutex
	byFile map[string]chroma.Lexer
}

// lexerFor returns the lexer of a fence's language, or nil.
func lexerFor(lang string) chroma.Lexer {
	file, ok := lexerAliases[strings.ToLower(lang)]
	if !ok {
		return nil
	}
	lexers.Lock()
	defer lexers.Unlock()
	if l, ok := lexers.byFile[file]; ok {
		return l
	}
	if lexers.byFile == nil {
		lexers.byFile = map[string]chroma.Lexer{}
	}
	var lx chroma.Lexer
	if l, err := chroma.NewXMLLexer(lexerFiles, "lexers/"+file+".xml"); err == nil {
		lx = chroma.Coalesce(l)
	}
	lexers.byFile[file] = lx
	return lx
}

// codeColors is the one fixed style of code: SGR parameters by token
// type, for 256 colours (mid-tone, readable on dark and light backgrounds)
// and for 16. A type without an entry takes its subcategory's, then its
// category's (LiteralStringDoc, LiteralString, Literal), as chroma's
// styles inherit. chroma's own terminal formatters rebuild their escape
// table from the style on every call, which was a third of the cost of
// showing a code line; this table is looked up directly.
var codeColors = map[chroma.TokenType][2]string{
	chroma.Keyword:           {"1;38;5;68", "1;34"},
	chroma.KeywordConstant:   {"38;5;134", "35"},
	chroma.NameBuiltin:       {"38;5;31", "36"},
	chroma.NameFunction:      {"38;5;36", "32"},
	chroma.NameClass:         {"1;38;5;36", "1;32"},
	chroma.NameDecorator:     {"38;5;173", "33"},
	chroma.NameException:     {"38;5;167", "31"},
	chroma.NameTag:           {"38;5;68", "34"},
	chroma.NameAttribute:     {"38;5;36", "32"},
	chroma.LiteralString:     {"38;5;107", "32"},
	chroma.LiteralStringDoc:  {"3;38;5;101", "3;32"},
	chroma.LiteralNumber:     {"38;5;176", "35"},
	chroma.Comment:           {"3;38;5;244", "2;3"},
	chroma.CommentPreproc:    {"38;5;173", "33"},
	chroma.OperatorWord:      {"1;38;5;68", "1;34"},
	chroma.GenericInserted:   {"38;5;71", "32"},
	chroma.GenericDeleted:    {"38;5;167", "31"},
	chroma.GenericHeading:    {"1", "1"},
	chroma.GenericSubheading: {"38;5;31", "36"},
}

// codeSGR is the SGR parameters of a token type ("" for none).
func (r *Renderer) codeSGR(t chroma.TokenType) string {
	i := 1
	if r.opt.Colors256 {
		i = 0
	}
	for _, tt := range []chroma.TokenType{t, t.SubCategory(), t.Category()} {
		if c, ok := codeColors[tt]; ok {
			return c[i]
		}
	}
	return ""
}

// A code line is lexed with the code before it back to the last line that
// starts at the left margin (a top-level statement: a def, a class, a
// key), at most maxLexContext bytes, so that a line inside a multi-line
// string or comment is coloured as one while the block streams. Lexing the
// whole block again for every line would cost its square.
const maxLexContext = 1024

// codeBlock is the fenced code block being shown.
type codeBlock struct {
	lang     string
	fence    byte
	fenceLen int
	indent   int
	text     strings.Builder
	lexer    chroma.Lexer
}

func (r *Renderer) startCode(b block) {
	c := &codeBlock{lang: b.info, fence: b.fence, fenceLen: b.fenceLen, indent: b.indent}
	if r.opt.Color {
		c.lexer = lexerFor(b.info)
	}
	r.code = c
	label := fmt.Sprintf("[%d]", len(r.blocks)+1)
	if b.info != "" {
		label += " " + b.info
	}
	r.put(r.style(stDim, termwidth.Truncate(label, r.opt.Width, "…")) + "\n")
}

func (r *Renderer) endCode() {
	if c := r.code; c != nil {
		r.blocks = append(r.blocks, CodeBlock{Lang: c.lang, Text: c.text.String()})
		r.code = nil
	}
}

// codeLine shows one line of a code block, or ends it at its fence.
func (r *Renderer) codeLine(s string) {
	c := r.code
	if t := strings.TrimLeft(s, " "); t != "" && t[0] == c.fence {
		if n := runLen(t); n >= c.fenceLen && strings.TrimSpace(t[n:]) == "" {
			r.endCode()
			return
		}
	}
	s = expandTabs(stripIndent(s, c.indent))
	before := c.text.Len()
	c.text.WriteString(s)
	c.text.WriteByte('\n')
	toks := []chroma.Token{{Type: chroma.Text, Value: s}}
	if c.lexer != nil && len(s) <= maxLexLine {
		toks = lexLine(c, before, toks)
	}
	r.codeRows(toks)
}

// maxLexLine is the longest code line that is highlighted: a longer one
// (minified code, a data dump) is shown plain rather than lexed at length.
const maxLexLine = 4096

// lexLine lexes the block's last line with up to maxLexContext of the
// code before it, and returns the last line's tokens, or plain when the
// lexer fails (it is chroma's code, run on the model's text: a panic in it
// must not take the REPL down).
func lexLine(c *codeBlock, lineStart int, plain []chroma.Token) (out []chroma.Token) {
	defer func() {
		if recover() != nil {
			out = plain
		}
	}()
	all := c.text.String()
	from := lexFrom(all, lineStart)
	it, err := c.lexer.Tokenise(nil, all[from:])
	if err != nil {
		return plain
	}
	pos := from
	for t := it(); t != chroma.EOF; t = it() {
		end := pos + len(t.Value)
		if end > lineStart {
			v := t.Value
			if pos < lineStart {
				v = v[lineStart-pos:]
			}
			v = strings.TrimRight(v, "\n")
			if v != "" {
				out = append(out, chroma.Token{Type: t.Type, Value: strings.ReplaceAll(v, "\n", " ")})
			}
		}
		pos = end
	}
	return out
}

// lexFrom is where the context of the line at lineStart begins.
func lexFrom(all string, lineStart int) int {
	limit := max(0, lineStart-maxLexContext)
	from := lineStart
	if c := all[lineStart]; c != ' ' && c != '\t' && c != '\n' {
		return from
	}
	for from > limit {
		prev := strings.LastIndexByte(all[:from-1], '\n') + 1
		if prev < limit {
			break
		}
		from = prev
		if from < lineStart && all[from] != ' ' && all[from] != '\t' && all[from] != '\n' {
			break
		}
	}
	return from
}

// codeRows shows a code line's tokens, cut into rows of the width (code
// is not wrapped at words: its spaces matter).
func (r *Renderer) codeRows(toks []chroma.Token) {
	var row []chroma.Token
	col := 0
	for _, t := range toks {
		v := t.Value
		for v != "" {
			fit, w := fitWidth(v, r.opt.Width-col)
			if fit == 0 && col == 0 {
				fit = len(v) // one character wider than the row
			}
			if fit > 0 {
				row = append(row, chroma.Token{Type: t.Type, Value: v[:fit]})
				col += w
				v = v[fit:]
			}
			if v != "" {
				r.codeRow(row)
				row, col = nil, 0
			}
		}
	}
	r.codeRow(row)
}

// fitWidth is how many bytes of s fit in width columns, and their width.
func fitWidth(s string, width int) (int, int) {
	w := 0
	for i, c := range s {
		cw := termwidth.Rune(c)
		if w+cw > width {
			return i, w
		}
		w += cw
	}
	return len(s), w
}

func (r *Renderer) codeRow(row []chroma.Token) {
	var b strings.Builder
	color := r.opt.Color && r.code.lexer != nil
	for _, t := range row {
		if p := r.codeSGR(t.Type); color && p != "" {
			b.WriteString("\x1b[" + p + "m" + t.Value + "\x1b[0m")
		} else {
			b.WriteString(t.Value)
		}
	}
	b.WriteByte('\n')
	r.put(b.String())
}

func stripIndent(s string, n int) string {
	i := 0
	for i < n && i < len(s) && s[i] == ' ' {
		i++
	}
	return s[i:]
}

// expandTabs replaces tabs by spaces to the next multiple of 4, since a
// tab's width on screen is the terminal's choice and wrapping must know it.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, c := range s {
		if c == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(c)
		col += termwidth.Rune(c)
	}
	return b.String()
}
