package term

import (
	"slices"
	"strings"
)

// A block being typed is one buffer, as in Python 3.13's REPL: Enter in
// an incomplete block (MoreLines) adds a row to it at the cursor, and
// Enter anywhere in a complete one ends the line with the whole block.
// Up and Down move between its rows (rowMove), and the history keeps it
// whole.

// indentWidth is one level of indentation, as Backspace takes it off.
const indentWidth = 4

// enterKey is Enter: a new row in a block, or the end of the line.
func (ed *editing) enterKey() *done {
	e := ed.e
	if e.moreLines != nil && e.moreLines(stripFinalIndent(string(ed.line))) {
		ed.apply(insertEdit(append([]rune{'\n'}, ed.newRowIndent()...)))
		// Drawn plain, as a line entered is left (see redrawPlain),
		// until the next key.
		e.drawFrame(e.view.redrawPlainAt(ed.line, ed.pos))
		ed.stale = false
		return nil
	}
	return ed.enter()
}

// onEmptyLastRow reports whether the cursor is on a block's last row,
// empty but for indentation, at its end.
func (ed *editing) onEmptyLastRow() bool {
	start := rowStart(ed.line, ed.pos)
	return start > 0 && ed.pos == len(ed.line) && strings.TrimSpace(string(ed.line[start:])) == ""
}

// newRowIndent is what auto-indent (EditorConfig.Indent) puts at the
// start of a row added at the cursor.
func (ed *editing) newRowIndent() []rune {
	if ed.e.indent == nil {
		return nil
	}
	return []rune(ed.e.indent(string(ed.line[:ed.pos])))
}

// dedentEdit is Backspace where auto-indent is on and the cursor is in
// the indentation of a block's row: back to the level before.
func (ed *editing) dedentEdit() (lineEdit, bool) {
	if ed.e.indent == nil || ed.pos == 0 {
		return nil, false
	}
	start := rowStart(ed.line, ed.pos)
	before := ed.line[start:ed.pos]
	if start == 0 || len(before) == 0 || strings.Trim(string(before), " ") != "" {
		return nil, false
	}
	to := start + (len(before)-1)/indentWidth*indentWidth
	return func(line []rune, pos int) ([]rune, int, editKind) {
		return slices.Delete(line, to, pos), to, editOther
	}, true
}

// stripFinalIndent drops the spaces and tabs after the block's last line
// feed (auto-indent's, on a row left empty), as Python 3.13's REPL does
// before it decides whether a block is complete.
func stripFinalIndent(text string) string {
	short := strings.TrimRight(text, " \t")
	if strings.HasSuffix(short, "\n") {
		return short
	}
	return text
}

// blockText is the text a line ends with: a block (a line with line
// feeds) ends with one, without the empty rows after its last line (and
// the indentation left on them).
func blockText(line []rune) string {
	text := string(line)
	if !strings.Contains(text, "\n") {
		return text
	}
	return strings.TrimRight(stripFinalIndent(text), "\n") + "\n"
}
