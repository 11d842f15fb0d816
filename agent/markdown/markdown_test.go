package markdown

import (
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// answer is a model's answer using every construct the renderer knows.
const answer = "# Summary of `df` ##\n" +
	"\n" +
	"The frame has **three columns** and *1,000 rows*; the __index__ is a _RangeIndex_. " +
	"See [the pandas docs](https://pandas.pydata.org/docs/reference/frame.html) and snake_case_names, 2*3*4 stays. " +
	"A very long word: " + "supercalifragilisticexpialidocious-and-then-some-more-characters-to-pass-sixty-columns" + ".\n" +
	"\n" +
	"## Columns\n" +
	"\n" +
	"- `price`: a float column with **no missing values** and a long explanation that wraps past the width\n" +
	"- `name`: strings\n" +
	"  - nested: *mostly* ASCII, some ünïcödé and 漢字 wide characters that count twice on screen\n" +
	"    - deeper still\n" +
	"1. first step\n" +
	"2. second step, [a link](http://example.com/a_(b))\n" +
	"\n" +
	"> Note: a quote with **bold** text that is long enough to wrap on a narrow terminal of sixty columns.\n" +
	"> > nested quote\n" +
	"\n" +
	"| column | dtype | non-null | description |\n" +
	"|:-------|:-----:|---------:|-------------|\n" +
	"| price | float64 | 1000 | the price in euros, **rounded** to cents |\n" +
	"| name | object | 998 | `str` values; two are missing \\| see below |\n" +
	"| 漢字 | int64 | 1000 | wide |\n" +
	"\n" +
	"---\n" +
	"\n" +
	"```python\n" +
	"import pandas as pd\n" +
	"\n" +
	"def summarise(df: pd.DataFrame) -> str:\n" +
	"    \"\"\"Return a summary,\n" +
	"    over two lines.\"\"\"\n" +
	"    return f\"{len(df)} rows\"  # a comment that makes this line longer than sixty columns for sure\n" +
	"```\n" +
	"\n" +
	"```\n" +
	"plain\tcode with a tab\n" +
	"```\n" +
	"That is all.\n"

func render(t testing.TB, text string, opt Options, chunk func(n int) int) string {
	t.Helper()
	var out strings.Builder
	r := New(&out, opt)
	for i := 0; i < len(text); {
		n := min(chunk(len(text)-i), len(text)-i)
		r.Write([]byte(text[i : i+n]))
		i += n
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func whole(n int) int  { return n }
func bytewise(int) int { return 1 }

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

func plain(s string) string { return sgr.ReplaceAllString(s, "") }

func TestConstructs(t *testing.T) {
	out := render(t, answer, Options{Width: 200}, whole)
	for _, want := range []string{
		"Summary of df\n",           // heading: no #s, no backticks, closing #s gone
		"three columns",             // bold, no **
		"the index is a RangeIndex", // __bold__ and _italic_
		"the pandas docs (https://pandas.pydata.org/docs/reference/frame.html)", // link
		"snake_case_names, 2*3*4 stays",                                         // intraword markers are text
		"• price: a float column",                                               // bullet, inline code
		"  • nested: mostly ASCII",                                              // nesting by indentation
		"    • deeper still",                                                    //
		"1. first step",                                                         // numbered
		"a link (http://example.com/a_(b))",                                     // parentheses in a URL
		"│ Note: a quote with bold text",                                        // quote bar
		"│ │ nested quote",                                                      //
		"┌────────┬─────────┬──────────┬", // table rules
		"│ column │  dtype  │ non-null │ description",
		"│ price  │ float64 │     1000 │",         // left, centred, right
		"str values; two are missing | see below", // escaped pipe, code in a cell
		"│ 漢字   │",                     // wide characters padded by width
		strings.Repeat("─", 80) + "\n", // rule
		"[1] python\n",                 // code block label
		"def summarise(df: pd.DataFrame) -> str:\n",
		"[2]\n",
		"plain   code with a tab\n", // tab expanded
		"That is all.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, marker := range []string{"**", "`", "# Summary", "## Columns", "](", "|---"} {
		if strings.Contains(out, marker) {
			t.Errorf("output still has the marker %q:\n%s", marker, out)
		}
	}
}

func TestCodeBlocks(t *testing.T) {
	var out strings.Builder
	r := New(&out, Options{Width: 60, Color: true})
	r.WriteString(answer)
	r.Flush()
	blocks := r.CodeBlocks()
	if len(blocks) != 2 {
		t.Fatalf("got %d code blocks, want 2: %+v", len(blocks), blocks)
	}
	if blocks[0].Lang != "python" || !strings.HasPrefix(blocks[0].Text, "import pandas as pd\n\ndef summarise") ||
		!strings.Contains(blocks[0].Text, "    over two lines.\"\"\"\n") {
		t.Errorf("first block %+v", blocks[0])
	}
	if blocks[1].Lang != "" || blocks[1].Text != "plain    code with a tab\n" && blocks[1].Text != "plain   code with a tab\n" {
		t.Errorf("second block %+v", blocks[1])
	}
	// The function over the answer's text finds the blocks the shown
	// answer labelled, whatever width it was shown at.
	if got := CodeBlocks(answer); !reflect.DeepEqual(got, blocks) {
		t.Errorf("CodeBlocks(answer) = %+v\nthe renderer's: %+v", got, blocks)
	}
}

// The same answer gives the same output however it is cut into pieces:
// whole, a byte at a time (splitting UTF-8 characters and ** markers), or
// in random pieces.
func TestChunkingDoesNotChangeOutput(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	texts := []string{answer, hostile, "**bold** and *it", "a `code", "[text](url", "| a |\n|---|\n| b |", "- a\n  - b\n    - c\n"}
	for _, text := range texts {
		for _, opt := range []Options{{Width: 60}, {Width: 120, Color: true, Colors256: true}, {Width: 20, Color: true}} {
			want := render(t, text, opt, whole)
			if got := render(t, text, opt, bytewise); got != want {
				t.Errorf("byte at a time, %+v:\n%q\nwant\n%q", opt, got, want)
			}
			for k := 0; k < 20; k++ {
				if got := render(t, text, opt, func(int) int { return 1 + rng.Intn(12) }); got != want {
					t.Fatalf("random pieces, %+v:\n%q\nwant\n%q", opt, got, want)
				}
			}
		}
	}
}

func TestWidthRespected(t *testing.T) {
	long := answer + strings.Repeat("word ", 100) + "\n" + "| " + strings.Repeat("a very wide cell | ", 6) + "\n|" + strings.Repeat("---|", 6) + "\n"
	for _, width := range []int{60, 120} {
		for _, color := range []bool{false, true} {
			out := render(t, long, Options{Width: width, Color: color}, bytewise)
			for i, line := range strings.Split(strings.TrimSuffix(plain(out), "\n"), "\n") {
				if w := runewidth.StringWidth(line); w > width {
					t.Errorf("width %d, color %v: line %d is %d columns: %q", width, color, i+1, w, line)
				}
			}
		}
	}
}

func TestNoColorNoEscapes(t *testing.T) {
	out := render(t, answer+hostile, Options{Width: 60}, bytewise)
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("escape sequence without color:\n%q", out)
	}
	colored := render(t, answer, Options{Width: 60, Color: true, Colors256: true}, whole)
	if !strings.Contains(colored, "\x1b[") {
		t.Errorf("no styling with color")
	}
	if plain(colored) == colored {
		t.Errorf("no SGR styling with color")
	}
}

// hostile puts terminal control in every construct: ESC sequences (a
// window title, OSC 52 writing the clipboard, clearing the screen), a
// carriage return that would overwrite the line, a C1 CSI, bidi overrides.
var hostile = strings.NewReplacer(
	"ESC", "\x1b[2J\x1b]0;pwned\x07",
	"OSC", "\x1b]52;c;cm0gLXJmIH4=\x07",
	"CR", "\rfake",
	"C1", "\u009b31m",
	"BIDI", "\u202eevil\u2066",
).Replace(
	"# heading ESC OSC CR C1 BIDI\n" +
		"text ESC **bold OSC** *it CR* `code C1` BIDI [link ESC](http://x/OSC) [l](http://CR) end\n" +
		"- item ESC BIDI\n" +
		"> quote OSC\n" +
		"| a ESC | b |\n|---|---|\n| cell OSC | CR `C1` BIDI |\n" +
		"```python ESC\n" +
		"x = 'ESC OSC CR C1 BIDI'  # ESC\n" +
		"```\n" +
		"```OSC\nraw ESC\n```\n")

// Nothing from the model drives the terminal: the only escape sequences
// left are the renderer's own SGR styling, and no \r, BEL, C1 control or
// bidi override survives, in any construct, with or without color.
func TestHostileTextNeutralised(t *testing.T) {
	for _, opt := range []Options{{Width: 60}, {Width: 60, Color: true, Colors256: true}, {Width: 120, Color: true}} {
		for _, chunk := range []func(int) int{whole, bytewise} {
			out := render(t, hostile, opt, chunk)
			rest := plain(out)
			for _, r := range rest {
				if r == 0x1b || r == '\r' || r == 0x07 || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
					t.Fatalf("%+v: %U reached the terminal:\n%q", opt, r, out)
				}
			}
			for _, want := range []string{`\x1b]52;c;`, `\x1b[2J`, `\rfake`, `\x9b31m`, `\u202e`} {
				if !strings.Contains(rest, want) {
					t.Errorf("%+v: %s not shown as text:\n%s", opt, want, rest)
				}
			}
		}
	}
}

// Text is shown while it streams: words of an unfinished line, each code
// line when it ends; a table waits for its end.
func TestStreamsWithoutHoldingBack(t *testing.T) {
	var out strings.Builder
	r := New(&out, Options{Width: 60})
	r.WriteString("Some words here and")
	if got := out.String(); got != "Some words here " {
		t.Errorf("after an unfinished line, output %q", got)
	}
	r.WriteString(" more\n```python\nx = 1\n")
	if !strings.HasSuffix(out.String(), "[1] python\nx = 1\n") {
		t.Errorf("a code line was held back: %q", out.String())
	}
	r.WriteString("```\n| a | b |\n|---|---|\n| 1 | 2 |\n")
	if strings.Contains(out.String(), "┌") {
		t.Errorf("the table was laid out before it ended: %q", out.String())
	}
	r.WriteString("\nafter\n")
	if !strings.Contains(out.String(), "│ 1 │ 2 │\n└───┴───┘\n\nafter\n") {
		t.Errorf("table not laid out at its end: %q", out.String())
	}
	// An opening ** waits for its closing one, but only on its line.
	out.Reset()
	r.WriteString("**not closed")
	if out.Len() != 0 {
		t.Errorf("an unmatched ** was decided early: %q", out.String())
	}
	r.WriteString(" here\n")
	if got := out.String(); got != "**not closed here\n" {
		t.Errorf("unmatched ** at the end of its line: %q", got)
	}
}

func TestTableBounds(t *testing.T) {
	// Too many columns for the width: shown as written.
	wide := "|" + strings.Repeat(" c |", 20) + "\n|" + strings.Repeat("---|", 20) + "\n"
	out := render(t, wide, Options{Width: 60}, whole)
	if strings.Contains(out, "┌") || !strings.Contains(out, "| c | c |") {
		t.Errorf("a table too wide for 60 columns:\n%s", out)
	}
	// Past maxTableRows rows, the rest of the table is not held.
	var b strings.Builder
	b.WriteString("| n |\n|---|\n")
	for i := 0; i < maxTableRows+20; i++ {
		b.WriteString("| row |\n")
	}
	var got strings.Builder
	r := New(&got, Options{Width: 60})
	r.WriteString(b.String())
	if !strings.Contains(got.String(), "└") || !strings.HasSuffix(got.String(), "| row |\n") {
		t.Errorf("a long table was held back whole:\n%s", got.String())
	}
	// A | line without a delimiter row is a paragraph.
	out = render(t, "| not a table\nnext line\n", Options{Width: 60}, bytewise)
	if out != "| not a table\nnext line\n" {
		t.Errorf("got %q", out)
	}
}

func TestSplitRune(t *testing.T) {
	text := "héllo 漢字 wörld\n"
	out := render(t, text, Options{Width: 60}, bytewise)
	if out != text || !utf8.ValidString(out) {
		t.Errorf("got %q", out)
	}
}

func TestWidthChangesBetweenAnswers(t *testing.T) {
	var out strings.Builder
	r := New(&out, Options{Width: 120})
	line := strings.Repeat("word ", 20) + "\n"
	r.WriteString(line)
	r.Flush()
	if strings.Count(out.String(), "\n") != 1 {
		t.Errorf("100 columns at width 120: %q", out.String())
	}
	out.Reset()
	r.SetOptions(Options{Width: 40})
	r.WriteString(line)
	r.Flush()
	if strings.Count(out.String(), "\n") != 3 {
		t.Errorf("100 columns at width 40: %q", out.String())
	}
}

// BenchmarkRender is the cost of laying out an answer with color and code
// highlighting, per byte of answer (b.SetBytes: see the MB/s figure).
func BenchmarkRender(b *testing.B) {
	for _, bc := range []struct {
		name string
		opt  Options
	}{{"color", Options{Width: 100, Color: true, Colors256: true}}, {"plain", Options{Width: 100}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(answer)))
			for i := 0; i < b.N; i++ {
				r := New(discard{}, bc.opt)
				// Deltas of about 4 bytes, as a model streams them.
				for j := 0; j < len(answer); j += 4 {
					r.WriteString(answer[j:min(j+4, len(answer))])
				}
				r.Flush()
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// After a table cut at maxTableRows, a paragraph ends it, and the next
// table is laid out again, however the text streams.
func TestTableAfterLongTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| n |\n|---|\n")
	for i := 0; i < maxTableRows+5; i++ {
		b.WriteString("| row |\n")
	}
	b.WriteString("text\n| x |\n|---|\n| y |\n")
	for _, chunk := range []func(int) int{whole, bytewise} {
		out := render(t, b.String(), Options{Width: 60}, chunk)
		if !strings.HasSuffix(out, "text\n┌───┐\n│ x │\n├───┤\n│ y │\n└───┘\n") {
			t.Errorf("the table after the long one:\n%s", out[len(out)-120:])
		}
	}
}

// A code line too long to be worth lexing is shown plain, cut to the width.
func TestLongCodeLineIsPlain(t *testing.T) {
	long := "x = " + strings.Repeat("1 + ", maxLexLine/4) + "1"
	out := render(t, "```python\n"+long+"\ny = 2\n```\n", Options{Width: 60, Color: true, Colors256: true}, whole)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if got := strings.Join(lines[1:len(lines)-1], ""); got != long {
		t.Errorf("the long line is not shown plain and whole: %q", got[:min(len(got), 200)])
	}
	if last := lines[len(lines)-1]; plain(last) != "y = 2" || last == "y = 2" {
		t.Errorf("the next line is not highlighted: %q", last)
	}
}
