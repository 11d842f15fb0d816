package term

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pyaichat/pyaichat/repl/prompt"
	"github.com/pyaichat/pyaichat/termwidth"
)

// StringWidth is how many columns s takes on a terminal.
func StringWidth(s string) int {
	n := 0
	for _, r := range s {
		n += RuneWidth(r)
	}
	return n
}

// RuneWidth is how many columns r takes on a terminal (a TAB: the spaces
// the line editor draws for it).
func RuneWidth(r rune) int {
	if r == '\t' {
		return tabWidth
	}
	return termwidth.Rune(r)
}

// lineView draws the line editor's line: the prompt and the text laid
// out in the columns the terminal uses (wide characters take two, and one
// that does not fit at the end of a row moves to the next, as terminals
// do), with the cursor moved there by rows and columns. It clears by going
// up as many rows as it put the cursor below the line's start, the rows
// the terminal still has after a resize (terminals that reflow wrapped
// lines when they shrink are not followed).
//
// A line may hold line feeds (a block): each row after one starts with
// the continuation prompt, as python3 shows the rows of a block, and the
// cursor is placed on its row.
//
// After the cursor at the end of the line the view may draw a suggestion
// (suggest, see EditorConfig.Suggest), dim, which the editor inserts when
// Right or End is pressed there.
type lineView struct {
	out     io.Writer // the terminal, a frame at a time
	width   func() int
	suggest func(line string) string
	// highlight, if set, colours the line (EditorConfig.Highlight).
	highlight func(line []rune) []Span

	mu     sync.Mutex
	prompt []rune
	cont   []rune // the prompt of each row after a line feed
	line   []rune // the line as last drawn
	pos    int
	row    int // the cursor's row below the line's first one, as drawn
	// top says the line's first row is the screen's top one (after
	// Ctrl-L). Erasing down from its start is then, to tmux and others,
	// a clear of the whole screen, of which they keep a copy in their
	// scrollback each time: clearing erases from the second column
	// there, and the first column alone (eraseFromTop).
	top bool
	// end is where the last drawing left the cursor; at the line's end,
	// endCol columns of its row are taken, at a width of drawnWidth: a
	// character of one column typed there is drawn by writing just that
	// character (erasing a suggestion first).
	end        drawnEnd
	endCol     int
	drawnWidth int
	// drawnLen is the length of the last drawing, and textEnd where in it
	// the line's text ended (before the suggestion and the cursor's move).
	drawnLen, textEnd int

	hint     []rune // the suggestion drawn after the line, if any
	hintFor  string // the line hint was asked for
	hintDone bool   // hintFor was asked
	hintGot  []rune // and its answer

	// choices are listed below the line (a completion's candidates).
	choices []string
}

func newLineView(out io.Writer, width func() int) *lineView {
	return &lineView{out: out, width: width, cont: []rune(prompt.Continuation)}
}

// tabWidth is how many columns a TAB in the line is drawn as.
const tabWidth = 4

// shownHint is the suggestion drawn after the cursor, if the cursor is at
// the end of the line.
func (v *lineView) shownHint() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.pos != len(v.line) {
		return ""
	}
	return string(v.hint)
}

// setPrompt records the prompt drawn before the line.
// A new prompt (a new line, or the mode switched) asks for suggestions
// again: what they are drawn from may have changed.
func (v *lineView) setPrompt(prompt string) {
	v.mu.Lock()
	v.prompt = []rune(prompt)
	v.hintDone = false
	v.mu.Unlock()
}

// promptText is the prompt drawn before the line.
func (v *lineView) promptText() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return string(v.prompt)
}

// reset says the cursor starts a new row of its own (a new prompt, or
// after something else was written).
func (v *lineView) reset() {
	v.mu.Lock()
	v.row = 0
	v.top = false
	v.mu.Unlock()
}

// atTop says the cursor is at the screen's top left, where the line is
// drawn next (Ctrl-L cleared the screen).
func (v *lineView) atTop() {
	v.mu.Lock()
	v.row = 0
	v.top = true
	v.mu.Unlock()
}

// redrawAt is the drawing of line with the cursor at pos, and the
// suggestion for it if pos is at its end, in place of the last drawing.
func (v *lineView) redrawAt(line []rune, pos int) []byte {
	return v.redrawWith(line, pos, v.hintOf(line, pos), true)
}

// redrawPlain is redraw without a suggestion or colours: the line as it
// is left when it ends. What stays in the terminal's output is then the
// line's plain text, as python3 -i leaves it, for whatever reads that
// output as text (a log of the terminal, the serve page's search).
func (v *lineView) redrawPlain(line []rune) []byte {
	return v.redrawPlainAt(line, len(line))
}

// redrawPlainAt is redrawPlain with the cursor at pos: a block's rows as
// they are left when Enter adds a row to it.
func (v *lineView) redrawPlainAt(line []rune, pos int) []byte {
	return v.redrawWith(line, pos, nil, false)
}

// redrawWith is the drawing of line with the cursor at pos and hint after
// it, coloured (highlight) if colour says so, in place of the last drawing.
func (v *lineView) redrawWith(line []rune, pos int, hint []rune, colour bool) []byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.line = append(v.line[:0], line...)
	v.pos, v.hint = pos, hint
	var spans []Span
	if colour && v.highlight != nil {
		spans = v.highlight(line)
	}
	b := v.clear()
	drawing, _ := v.draw(spans)
	return append(b, drawing...)
}

// ended says the line was ended, the cursor on a row of its own after it.
func (v *lineView) ended() {
	v.mu.Lock()
	v.row = 0
	v.top = false
	v.end = endElsewhere
	v.mu.Unlock()
}

// hintOf is the suggestion to draw after line, asked of suggest once per
// line: only with the cursor at the end of the line, on its last row.
func (v *lineView) hintOf(line []rune, pos int) []rune {
	if v.suggest == nil || pos != len(line) || len(line) == 0 || line[len(line)-1] == '\n' || v.hasChoices() {
		return nil
	}
	return v.suggestionFor(string(line))
}

// suggestionFor is the suggestion for text, asked of suggest once per
// text.
func (v *lineView) suggestionFor(text string) []rune {
	v.mu.Lock()
	if v.hintDone && v.hintFor == text {
		hint := v.hintGot
		v.mu.Unlock()
		return hint
	}
	v.mu.Unlock()
	// Outside the lock: suggest may take a while (it asks the
	// interpreter), and nothing here needs the view meanwhile.
	hint := []rune(v.suggest(text))
	for _, r := range hint {
		if r < ' ' || r == 0x7f {
			return nil // drawn as is, it would move the cursor
		}
	}
	v.mu.Lock()
	v.hintFor, v.hintDone, v.hintGot = text, true, hint
	v.mu.Unlock()
	return hint
}

// drawnEnd is where a drawing of the line left the cursor.
type drawnEnd int

const (
	endElsewhere drawnEnd = iota // not after the line's last character (or the line ended)
	endBare                      // after the line's last character, nothing after it
	endHinted                    // after the line's last character, a suggestion after it
)

// aheadEcho is a key drawn ahead of the editor's redraw (echoAhead).
type aheadEcho struct {
	key []byte // the key as a drawing shows it
	// keep is how much of the last drawing, drawnLen long, the screen
	// shows before the key once it is written: a drawing of the line with
	// the key starts with that and key.
	keep, drawnLen int
	// erase, if not nil, erases the last drawing, which is then drawn
	// again up to keep before the key: what follows the cursor (a
	// suggestion) goes. A whole redraw rather than an erase of the end
	// alone keeps the line's text whole in the terminal's output stream,
	// for whatever reads it as text.
	erase []byte
}

// echoAhead returns what to write for r typed at the end of the line,
// before the editor's redraw, when that is just r: the last drawing ended
// with the cursor after the line, and r, one column wide, still fits on
// the row. A suggestion drawn after the cursor is erased first. The
// suggestion for the line with r is not waited for: it takes a call to
// the interpreter, and the redraw that follows the key draws it after
// the key. Otherwise ok is false, and the redraw draws the key.
func (v *lineView) echoAhead(r rune) (e aheadEcho, ok bool) {
	if r < ' ' || r == 0x7f || RuneWidth(r) != 1 {
		return e, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if e, ok = v.echoPlanLocked(); !ok {
		return e, false
	}
	e.key = utf8.AppendRune(nil, r)
	// As the screen is once it is written, for a key typed before the
	// redraw of this one.
	v.end = endBare
	v.endCol++
	v.drawnLen = e.keep + len(e.key)
	v.textEnd = v.drawnLen
	return e, true
}

// echoPlan is echoAhead's drawing for a key it would echo, without the
// key, worked out before the key comes (see Editor.armEcho); ok is false
// where it would echo none.
func (v *lineView) echoPlan() (e aheadEcho, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.echoPlanLocked()
}

func (v *lineView) echoPlanLocked() (e aheadEcho, ok bool) {
	if v.end == endElsewhere || v.endCol+1 >= v.drawnWidth || v.drawnWidth != v.width() {
		return e, false
	}
	e = aheadEcho{keep: v.drawnLen, drawnLen: v.drawnLen}
	if v.end == endHinted {
		// The cursor ends on the row it is on now, where the text ends.
		e.erase = v.clearing()
		e.keep = v.textEnd
	}
	return e, true
}

// clear moves to the start of the line's first row and erases from there
// down.
func (v *lineView) clear() []byte {
	b := v.clearing()
	v.row = 0
	v.end = endElsewhere
	return b
}

// clearing is what clear writes.
func (v *lineView) clearing() []byte {
	b := []byte{'\r'}
	if v.row > 0 {
		b = append(b, "\x1b["+strconv.Itoa(v.row)+"A"...)
	}
	if v.top {
		return append(b, eraseFromTop...)
	}
	return append(b, eraseBelow...)
}

// draw writes the prompt and the line from the start of a row, coloured
// as spans say, and puts the cursor at pos; ok is false where the
// terminal's width is unknown.
func (v *lineView) draw(spans []Span) ([]byte, bool) {
	width := v.width()
	if width <= 0 {
		return nil, false
	}
	body, pos, hint := v.line, v.pos, v.hint
	b, cursor, end, textEnd := v.layout(body, pos, hint, spans, width)
	v.row = cursor
	switch {
	case pos != len(body) || len(v.choices) > 0:
		v.end = endElsewhere
	case len(hint) > 0:
		v.end = endHinted
	default:
		v.end = endBare
	}
	v.endCol, v.drawnWidth = end.col, width
	v.drawnLen, v.textEnd = len(b), textEnd
	return b, true
}

// layout draws the prompt and line from the start of a row, coloured as
// spans say, then hint dim, and puts the cursor at pos; it returns the
// drawing, the cursor's row, where the line's text ended on the screen
// and where in the drawing.
func (v *lineView) layout(line []rune, pos int, hint []rune, spans []Span, width int) ([]byte, int, cell, int) {
	d := &drawing{width: width}
	d.text(v.prompt)
	cursor := cell{-1, 0}
	paint := painter{spans: spans}
	for i, r := range line {
		paint.at(d, i)
		switch {
		case r == '\n' || r == '\r':
			if i == pos {
				cursor = d.at
			}
			// The next row, from its start, after the continuation
			// prompt: a line feed, which the terminal's output
			// processing (kept on in raw mode) sends as CR LF, as it
			// sends python3's. (A row that filled the width leaves the
			// terminal's cursor waiting to wrap; the carriage return
			// ends that.)
			paint.pause(d)
			d.b.WriteString("\n")
			d.at = cell{d.at.row + 1, 0}
			d.text(v.cont)
			paint.resume(d)
		case r == '\t':
			// Four spaces wherever it stands, as the line editor has
			// always drawn it.
			if i == pos {
				cursor = d.at.next(' ', width)
			}
			d.text([]rune(strings.Repeat(" ", tabWidth)))
		default:
			if i == pos {
				cursor = d.at.next(r, width)
			}
			d.put(r)
		}
	}
	paint.at(d, len(line))
	end := d.at
	textEnd := d.b.Len()
	if cursor.row < 0 && len(hint) > 0 {
		// The cursor stays before the suggestion.
		cursor = d.at
		if d.at.col == width {
			cursor = cell{d.at.row + 1, 0}
		}
		d.b.WriteString(dimOn)
		d.text(hint)
		d.b.WriteString(dimOff)
	}
	v.drawChoices(d)
	b := d.end(cursor)
	return b, d.cursorRow, end, textEnd
}

// maxChoiceRows bounds the rows of the list of choices.
const maxChoiceRows = 8

// setChoices lists choices below the line from its next drawing on; nil
// takes the list away.
func (v *lineView) setChoices(choices []string) {
	v.mu.Lock()
	v.choices = choices
	v.mu.Unlock()
}

// hasChoices says a list is drawn below the line.
func (v *lineView) hasChoices() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.choices) > 0
}

// drawChoices draws the list of choices in the rows below the line, in
// columns sorted downwards as GNU readline lists completions, dim; what
// does not fit in maxChoiceRows is counted on a last row.
func (v *lineView) drawChoices(d *drawing) {
	if len(v.choices) == 0 {
		return
	}
	colWidth := 0
	for _, c := range v.choices {
		colWidth = max(colWidth, StringWidth(c)+2)
	}
	cols := max(1, min(d.width-1, 200)/max(colWidth, 1))
	rows := (len(v.choices) + cols - 1) / cols
	shown := min(rows, maxChoiceRows)
	d.b.WriteString(dimOn)
	for r := range shown {
		var row strings.Builder
		for c := range cols {
			if i := c*rows + r; i < len(v.choices) {
				item := v.choices[i]
				row.WriteString(item)
				row.WriteString(strings.Repeat(" ", colWidth-StringWidth(item)))
			}
		}
		v.choiceRow(d, strings.TrimRight(row.String(), " "))
	}
	if shown < rows {
		v.choiceRow(d, "("+strconv.Itoa(len(v.choices)-shown*cols)+" more)")
	}
	d.b.WriteString(dimOff)
}

// choiceRow draws text on a row of its own below what is drawn, cut to
// the width so that it never wraps.
func (v *lineView) choiceRow(d *drawing, text string) {
	d.b.WriteString("\n")
	d.at = cell{d.at.row + 1, 0}
	for _, r := range text {
		if d.at.col+RuneWidth(r) >= d.width {
			break
		}
		d.put(r)
	}
}

// painter colours a drawing as its spans say.
type painter struct {
	spans []Span
	next  int  // the span that starts or goes on next
	on    bool // spans[next]'s colour is set
}

const sgrReset = "\x1b[m"

// at is called before the rune at i is drawn (and with the line's length
// after the last).
func (p *painter) at(d *drawing, i int) {
	for p.next < len(p.spans) {
		sp := p.spans[p.next]
		switch {
		case p.on && i >= sp.End:
			d.b.WriteString(sgrReset)
			p.on = false
			p.next++
			continue
		case !p.on && i >= sp.Start && i < sp.End:
			d.b.WriteString("\x1b[" + sp.SGR + "m")
			p.on = true
		case !p.on && i >= sp.End:
			p.next++
			continue
		}
		return
	}
}

// pause takes the colour off for a continuation prompt; resume puts it
// back after it.
func (p *painter) pause(d *drawing) {
	if p.on {
		d.b.WriteString(sgrReset)
	}
}

func (p *painter) resume(d *drawing) {
	if p.on {
		d.b.WriteString("\x1b[" + p.spans[p.next].SGR + "m")
	}
}

// drawing is a line being drawn from the start of a row.
type drawing struct {
	b         bytes.Buffer
	at        cell
	width     int
	cursorRow int
}

func (d *drawing) put(r rune) {
	d.at = d.at.put(r, d.width)
	d.b.WriteRune(r)
}

func (d *drawing) text(rs []rune) {
	for _, r := range rs {
		d.put(r)
	}
}

// end finishes the drawing with the cursor at cursor (at the end if its
// row is negative).
func (d *drawing) end(cursor cell) []byte {
	at := d.at
	if at.col == d.width {
		// The terminal waits at the last column to wrap with the next
		// character: make it wrap, so the cursor is where it shows.
		d.b.WriteString(" \b")
		at = cell{at.row + 1, 0}
	}
	if cursor.row < 0 {
		cursor = at
	}
	if up := at.row - cursor.row; up > 0 {
		d.b.WriteString("\x1b[" + strconv.Itoa(up) + "A")
	}
	if cursor != at {
		d.b.WriteByte('\r')
		if cursor.col > 0 {
			d.b.WriteString("\x1b[" + strconv.Itoa(cursor.col) + "C")
		}
	}
	d.cursorRow = cursor.row
	return d.b.Bytes()
}

// The suggestion's look: dim, then normal intensity again.
const (
	dimOn  = "\x1b[2m"
	dimOff = "\x1b[22m"
)

// cell is a position on the terminal, from the start of the line's first
// row. col may equal the width: the terminal's cursor then stays on the
// last column until the next character wraps it.
type cell struct{ row, col int }

// next is where r is drawn from at: on the next row if it does not fit
// (the terminal moves a wide character that does not fit to the next
// row).
func (at cell) next(r rune, width int) cell {
	if at.col+max(RuneWidth(r), 1) > width {
		return cell{at.row + 1, 0}
	}
	return at
}

// put is where the cursor is after r is drawn at at.
func (at cell) put(r rune, width int) cell {
	w := RuneWidth(r)
	if w == 0 {
		return at
	}
	at = at.next(r, width)
	at.col += w
	return at
}
