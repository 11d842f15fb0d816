package markdown

import (
	"strings"
)

// maxTableRows bounds what a table holds back: past it, the rows laid out
// so far are shown as a table and the rest of its rows as they are.
const maxTableRows = 100

// minColumn is the narrowest a column is squeezed to before the table is
// shown as it is instead.
const minColumn = 4

// table is a pipe table being held until its last row: column widths
// depend on every row.
type table struct {
	head  string // the first line, until the delimiter row confirms it
	ok    bool   // the delimiter row came
	align []byte // 'l', 'c' or 'r' per column
	rows  [][]string
	lines []string // every line, for the fallback
}

// tableRow takes a line that starts with |.
func (r *Renderer) tableRow(s string) {
	r.blank = false
	if r.tableRaw {
		r.rawLine(s)
		return
	}
	t := r.table
	if t == nil {
		r.lists = nil
		r.table = &table{head: s, lines: []string{s}}
		return
	}
	if !t.ok {
		align, isDelim := delimiterRow(s)
		if !isDelim {
			// Not a table after all: its first line is a paragraph line,
			// and this one may start a table of its own.
			r.table = nil
			r.paraLine(t.head)
			r.tableRow(s)
			return
		}
		t.ok, t.align = true, align
		t.rows = append(t.rows, splitRow(t.head))
		t.lines = append(t.lines, s)
		return
	}
	t.rows = append(t.rows, splitRow(s))
	t.lines = append(t.lines, s)
	if len(t.rows) > maxTableRows {
		r.endTable()
		r.tableRaw = true
	}
}

// endTable lays out the table held so far.
func (r *Renderer) endTable() {
	t := r.table
	if t == nil {
		return
	}
	r.table = nil
	if !t.ok {
		r.paraLine(t.head)
		return
	}
	r.layoutTable(t)
}

func (r *Renderer) paraLine(s string) {
	f := r.startFlow(block{kind: blockPara})
	f.process(s, true)
	f.finish()
}

// rawLine shows a line as it is, cut to the width.
func (r *Renderer) rawLine(s string) {
	f := &flow{r: r, width: r.opt.Width}
	f.add(strings.ReplaceAll(s, "\t", "    "), 0)
	f.finish()
}

// delimiterRow recognises |---|:--:|--:| and returns each column's
// alignment.
func delimiterRow(s string) ([]byte, bool) {
	cells := splitRow(s)
	if len(cells) == 0 {
		return nil, false
	}
	align := make([]byte, len(cells))
	for i, c := range cells {
		c = strings.TrimSpace(c)
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		dashes := strings.Trim(c, ":")
		if dashes == "" || strings.Trim(dashes, "-") != "" {
			return nil, false
		}
		switch {
		case left && right:
			align[i] = 'c'
		case right:
			align[i] = 'r'
		default:
			align[i] = 'l'
		}
	}
	return align, true
}

// splitRow splits a table line at the pipes that are not escaped or in
// inline code.
func splitRow(s string) []string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "|")
	var cells []string
	var b strings.Builder
	code := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && s[i+1] == '|':
			b.WriteString(`\|`)
			i++
			continue
		case c == '`':
			n := runLen(s[i:])
			if code == 0 {
				code = n
			} else if code == n {
				code = 0
			}
			b.WriteString(s[i : i+n])
			i += n - 1
			continue
		case c == '|' && code == 0:
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
			continue
		}
		b.WriteByte(c)
	}
	if rest := strings.TrimSpace(b.String()); rest != "" || len(cells) == 0 {
		cells = append(cells, rest)
	}
	return cells
}

// cell lays out a cell's text to width columns.
func (r *Renderer) cell(text string, width int, st style) [][]seg {
	f := &flow{r: r, width: width, collect: true, base: st}
	f.process(text, true)
	f.finish()
	return f.rows
}

// layoutTable shows a table in aligned columns with box-drawing rules. A
// table too wide for the terminal gets narrower columns whose text wraps;
// one that cannot fit even so is shown as the model wrote it.
func (r *Renderer) layoutTable(t *table) {
	ncol := len(t.rows[0]) // the header row says how many columns there are
	natural := make([]int, ncol)
	for ri, row := range t.rows {
		for c := 0; c < ncol && c < len(row); c++ {
			st := style(0)
			if ri == 0 {
				st = stBold
			}
			for _, line := range r.cell(row[c], 1<<20, st) {
				natural[c] = max(natural[c], segsWidth(line))
			}
		}
	}
	widths, fits := fitColumns(natural, r.opt.Width-3*ncol-1)
	if !fits {
		for _, l := range t.lines {
			r.rawLine(l)
		}
		return
	}
	r.rule('┌', '┬', '┐', widths)
	for ri, row := range t.rows {
		r.tableLine(row, widths, t.align, ri == 0)
		if ri == 0 {
			r.rule('├', '┼', '┤', widths)
		}
	}
	r.rule('└', '┴', '┘', widths)
}

// fitColumns gives each column its natural width if all fit in avail,
// else shares avail out: narrow columns keep their width, wide ones split
// the rest evenly. fits is false when even minColumn each is too much.
func fitColumns(natural []int, avail int) ([]int, bool) {
	widths := make([]int, len(natural))
	total := 0
	for i, n := range natural {
		widths[i] = max(n, 1)
		total += widths[i]
	}
	if total <= avail {
		return widths, true
	}
	if avail < minColumn*len(natural) {
		return nil, false
	}
	left, open := avail, len(natural)
	fixed := make([]bool, len(natural))
	for changed := true; changed && open > 0; {
		changed = false
		share := left / open
		for i, n := range natural {
			if !fixed[i] && n <= share {
				widths[i], fixed[i] = max(n, 1), true
				left -= widths[i]
				open--
				changed = true
			}
		}
	}
	for i := range natural {
		if !fixed[i] {
			widths[i] = max(left/open, minColumn)
			left -= widths[i]
			open--
		}
	}
	return widths, true
}

func (r *Renderer) rule(left, mid, right rune, widths []int) {
	var b strings.Builder
	b.WriteRune(left)
	for i, w := range widths {
		if i > 0 {
			b.WriteRune(mid)
		}
		b.WriteString(strings.Repeat("─", w+2))
	}
	b.WriteRune(right)
	r.put(r.style(stDim, b.String()) + "\n")
}

// tableLine shows one row of cells, as many screen lines as its tallest
// cell needs.
func (r *Renderer) tableLine(row []string, widths []int, align []byte, head bool) {
	st := style(0)
	if head {
		st = stBold
	}
	cells := make([][][]seg, len(widths))
	height := 1
	for c := range widths {
		if c < len(row) {
			cells[c] = r.cell(row[c], widths[c], st)
		}
		height = max(height, len(cells[c]))
	}
	bar := r.style(stDim, "│")
	for y := 0; y < height; y++ {
		var b strings.Builder
		b.WriteString(bar)
		for c, w := range widths {
			var line []seg
			if y < len(cells[c]) {
				line = cells[c][y]
			}
			pad := w - segsWidth(line)
			a := byte('l')
			if c < len(align) {
				a = align[c]
			}
			lp := 0
			switch a {
			case 'r':
				lp = pad
			case 'c':
				lp = pad / 2
			}
			b.WriteString(" " + strings.Repeat(" ", lp))
			for _, sg := range line {
				b.WriteString(r.style(sg.st, sg.text))
			}
			b.WriteString(strings.Repeat(" ", pad-lp) + " " + bar)
		}
		r.put(b.String() + "\n")
	}
}
