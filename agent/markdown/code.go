package markdown

import (
	"embed"
	"fmt"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/formatters"
	"github.com/mattn/go-runewidth"
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

// codeStyle is one fixed style, in mid-tone colours that read on dark and
// light backgrounds; made on first use.
var codeStyle = sync.OnceValue(func() *chroma.Style {
	return chroma.MustNewStyle("pyaichat", chroma.StyleEntries{
		chroma.Keyword:           "bold #5f87d7",
		chroma.KeywordConstant:   "#af5fd7",
		chroma.NameBuiltin:       "#0087af",
		chroma.NameFunction:      "#00af87",
		chroma.NameClass:         "bold #00af87",
		chroma.NameDecorator:     "#d7875f",
		chroma.NameException:     "#d75f5f",
		chroma.NameTag:           "#5f87d7",
		chroma.NameAttribute:     "#00af87",
		chroma.LiteralString:     "#87af5f",
		chroma.LiteralStringDoc:  "italic #87875f",
		chroma.LiteralNumber:     "#d787d7",
		chroma.Comment:           "italic #808080",
		chroma.CommentPreproc:    "#d7875f",
		chroma.OperatorWord:      "bold #5f87d7",
		chroma.GenericInserted:   "#5faf5f",
		chroma.GenericDeleted:    "#d75f5f",
		chroma.GenericHeading:    "bold",
		chroma.GenericSubheading: "#0087af",
	})
})

// maxLexContext bounds the code before a line that is lexed again with
// it, so that a line inside a multi-line string is coloured as a string;
// lexing the whole block for every line would cost its square.
const maxLexContext = 2048

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
	r.put(r.style(stDim, runewidth.Truncate(label, r.opt.Width, "…")) + "\n")
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
	var toks []chroma.Token
	if c.lexer != nil {
		toks = r.lexLine(c, before)
	} else {
		toks = []chroma.Token{{Type: chroma.Text, Value: s}}
	}
	r.codeRows(toks)
}

// lexLine lexes the block's last line with up to maxLexContext of the
// code before it, and returns the last line's tokens.
func (r *Renderer) lexLine(c *codeBlock, lineStart int) []chroma.Token {
	all := c.text.String()
	from := 0
	if lineStart > maxLexContext {
		from = lineStart - maxLexContext
		if nl := strings.IndexByte(all[from:lineStart], '\n'); nl >= 0 {
			from += nl + 1
		} else {
			from = lineStart
		}
	}
	it, err := c.lexer.Tokenise(nil, all[from:])
	if err != nil {
		return []chroma.Token{{Type: chroma.Text, Value: strings.TrimSuffix(all[lineStart:], "\n")}}
	}
	var out []chroma.Token
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
		cw := runewidth.RuneWidth(c)
		if w+cw > width {
			return i, w
		}
		w += cw
	}
	return len(s), w
}

func (r *Renderer) codeRow(row []chroma.Token) {
	var b strings.Builder
	if r.opt.Color && r.code.lexer != nil {
		f := formatters.TTY16
		if r.opt.Colors256 {
			f = formatters.TTY256
		}
		if err := f.Format(&b, codeStyle(), chroma.Literator(row...)); err != nil {
			b.Reset()
		}
	}
	if b.Len() == 0 {
		for _, t := range row {
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
		col += runewidth.RuneWidth(c)
	}
	return b.String()
}
