package term

import (
	"slices"
	"strings"
	"unicode"
)

// GNU readline's emacs commands as python3 -i has them: words of letters
// and digits for the word moves and kills, a kill ring whose consecutive
// kills join and whose yank can be popped, case changes, transposing
// words, the last argument of the previous line, and undo. Each is a
// function of the line and the cursor (lineEdit), which the editor
// applies to its buffer (editing.apply); the undo list follows every
// change to the line.

// isWordRune reports whether r is part of a word as GNU readline's word
// commands take it: a letter or a digit.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// forwardWord is where M-f puts the cursor: the end of the word it is in,
// or of the next one.
func forwardWord(line []rune, pos int) int {
	for pos < len(line) && !isWordRune(line[pos]) {
		pos++
	}
	for pos < len(line) && isWordRune(line[pos]) {
		pos++
	}
	return pos
}

// backwardWord is where M-b puts the cursor: the start of the word it is
// in, or of the one before.
func backwardWord(line []rune, pos int) int {
	for pos > 0 && !isWordRune(line[pos-1]) {
		pos--
	}
	for pos > 0 && isWordRune(line[pos-1]) {
		pos--
	}
	return pos
}

// backwardBlank is where C-w kills back to: the start of the
// whitespace-separated word before the cursor.
func backwardBlank(line []rune, pos int) int {
	for pos > 0 && unicode.IsSpace(line[pos-1]) {
		pos--
	}
	for pos > 0 && !unicode.IsSpace(line[pos-1]) {
		pos--
	}
	return pos
}

// caseWord changes the case of the word at or after the cursor, as M-u
// (upper), M-l (lower) and M-c (capitalize) do, and moves past it.
func caseWord(line []rune, pos int, how rune) ([]rune, int) {
	out := slices.Clone(line)
	end := forwardWord(line, pos)
	first := true
	for i := pos; i < end; i++ {
		r := out[i]
		if !isWordRune(r) {
			continue
		}
		switch {
		case how == 'u' || how == 'c' && first:
			out[i] = unicode.ToUpper(r)
		default:
			out[i] = unicode.ToLower(r)
		}
		first = false
	}
	return out, end
}

// transposeChars is C-t as GNU readline has it: the character before the
// cursor and the one at it change places, and the cursor goes past both;
// at the end of the line, the last two. ok is false at the start of the
// line or with fewer than two characters, where it does nothing.
func transposeChars(line []rune, pos int) (out []rune, to int, ok bool) {
	if pos == 0 || len(line) < 2 {
		return line, pos, false
	}
	if pos == len(line) {
		pos--
	}
	out = slices.Clone(line)
	out[pos-1], out[pos] = out[pos], out[pos-1]
	return out, pos + 1, true
}

// transposeWords is M-t: the word before the cursor and the word after it
// change places, and the cursor goes after both; at the end of the line,
// the last two words. ok is false where there are not two words.
func transposeWords(line []rune, pos int) (out []rune, to int, ok bool) {
	w2End := forwardWord(line, pos)
	w2Beg := backwardWord(line, w2End)
	w1Beg := backwardWord(line, w2Beg)
	w1End := forwardWord(line, w1Beg)
	if w1Beg == w2Beg || w2Beg < w1End {
		return line, pos, false
	}
	out = make([]rune, 0, len(line))
	out = append(out, line[:w1Beg]...)
	out = append(out, line[w2Beg:w2End]...)
	out = append(out, line[w1End:w2Beg]...)
	out = append(out, line[w1Beg:w1End]...)
	out = append(out, line[w2End:]...)
	return out, w2End, true
}

// lastArgument is the last word of line as GNU history splits a line into
// words for M-.: at blanks, outside quotes, with each of ;&()|<> a word
// of its own.
func lastArgument(line string) string {
	var words []string
	var word strings.Builder
	var quote rune
	flush := func() {
		if word.Len() > 0 {
			words = append(words, word.String())
			word.Reset()
		}
	}
	for _, r := range line {
		switch {
		case quote != 0:
			word.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
			word.WriteRune(r)
		case unicode.IsSpace(r):
			flush()
		case strings.ContainsRune(";&()|<>", r):
			flush()
			words = append(words, string(r))
		default:
			word.WriteRune(r)
		}
	}
	flush()
	if len(words) == 0 {
		return ""
	}
	return words[len(words)-1]
}

// killRing holds the text killed, newest last, as GNU readline's does.
type killRing struct {
	entries [][]rune
	// yanked is the span the last yank inserted, and at the entry it
	// came from, for M-y.
	yankFrom, yankTo, at int
}

const killRingMax = 10

// kill records text killed by a command; joined says the command before
// was a kill too, whose text it adds to (before it, for a kill backwards).
func (k *killRing) kill(text []rune, joined, backwards bool) {
	if len(text) == 0 {
		return
	}
	if joined && len(k.entries) > 0 {
		last := k.entries[len(k.entries)-1]
		if backwards {
			k.entries[len(k.entries)-1] = slices.Concat(text, last)
		} else {
			k.entries[len(k.entries)-1] = slices.Concat(last, text)
		}
		return
	}
	k.entries = append(k.entries, slices.Clone(text))
	if len(k.entries) > killRingMax {
		k.entries = k.entries[1:]
	}
}

// yank inserts the newest kill at pos (C-y).
func (k *killRing) yank(line []rune, pos int) ([]rune, int, bool) {
	if len(k.entries) == 0 {
		return line, pos, false
	}
	k.at = len(k.entries) - 1
	return k.insert(line, pos, k.entries[k.at])
}

// yankPop replaces what the last yank inserted with the kill before it
// (M-y, right after C-y or M-y).
func (k *killRing) yankPop(line []rune, pos int) ([]rune, int, bool) {
	if len(k.entries) == 0 || k.yankTo > len(line) || k.yankFrom > k.yankTo {
		return line, pos, false
	}
	k.at = (k.at + len(k.entries) - 1) % len(k.entries)
	rest := slices.Concat(line[:k.yankFrom], line[k.yankTo:])
	return k.insert(rest, k.yankFrom, k.entries[k.at])
}

func (k *killRing) insert(line []rune, pos int, text []rune) ([]rune, int, bool) {
	out, to := insertAt(line, pos, text)
	k.yankFrom, k.yankTo = pos, to
	return out, to, true
}

// lineState is a line and its cursor.
type lineState struct {
	line []rune
	pos  int
}

// change is one change to the line, kept to be undone: at pos, the text
// in was stood where n characters stand now. Undoing it leaves the cursor
// back characters before the end of was (0: after it).
type change struct {
	pos  int
	was  []rune
	n    int
	back int
}

// undoList keeps the changes made to the line, for C-_ (and C-x C-u) and
// M-r. As in GNU readline, characters typed one after another at the
// cursor are one change, up to undoJoinMax of them. It keeps what each
// change replaced, not the line before it, so that a long line typed
// costs memory in proportion to its length.
type undoList struct {
	changes []change
	cur     lineState // the line as it is now
	// typed is how many characters the last change typed, 0 if it was
	// not typing; the next one typed joins it if it goes where the last
	// one left the cursor (typedEnd).
	typed, typedEnd int
}

const undoJoinMax = 20

// reset starts the list for a line that begins as line: typed (the
// typing lane's keys, one change) or as it came from the history, where
// there is nothing to undo.
func (u *undoList) reset(line []rune, typed bool) {
	u.changes = u.changes[:0]
	u.cur = lineState{append(u.cur.line[:0], line...), len(line)}
	u.typed = 0
	if typed && len(line) > 0 {
		u.changes = append(u.changes, change{pos: 0, n: len(line)})
	}
}

// changed records the line as a key left it.
func (u *undoList) changed(line []rune, pos int) {
	was := u.cur.line
	prefix, suffix := commonEnds(was, line)
	if prefix == len(was) && prefix == len(line) {
		u.cur.pos = pos
		return
	}
	at := u.cur.pos
	typedOne := len(line) == len(was)+1 && pos == at+1 && at <= len(was) &&
		slices.Equal(line[:at], was[:at]) && slices.Equal(line[pos:], was[at:])
	switch {
	case typedOne && u.typed > 0 && u.typed < undoJoinMax && at == u.typedEnd:
		u.changes[len(u.changes)-1].n++
		u.typed++
	case typedOne:
		u.changes = append(u.changes, change{pos: at, n: 1})
		u.typed = 1
	default:
		u.changes = append(u.changes, change{pos: prefix, was: slices.Clone(was[prefix : len(was)-suffix]), n: len(line) - suffix - prefix})
		u.typed = 0
	}
	u.cur = lineState{append(u.cur.line[:0], line...), pos}
	u.typedEnd = pos
}

// rewrote records line as an edit left it that rewrote the characters
// from start to end in place, changed or not (a change of case, C-t), as
// GNU readline records such a span; undoing it leaves the cursor back
// characters before end, and end is where the edit left it.
func (u *undoList) rewrote(line []rune, start, end, back int) {
	if start < 0 || start >= end || end > len(u.cur.line) || len(line) != len(u.cur.line) {
		u.changed(line, end)
		return
	}
	u.changes = append(u.changes, change{pos: start, was: slices.Clone(u.cur.line[start:end]), n: end - start, back: back})
	u.cur = lineState{append(u.cur.line[:0], line...), end}
	u.typed = 0
}

// commonEnds is how many runes a and b have alike at their starts, and
// then at their ends.
func commonEnds(a, b []rune) (prefix, suffix int) {
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	for suffix < len(a)-prefix && suffix < len(b)-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	return prefix, suffix
}

// undo returns the line as it was before the last change.
func (u *undoList) undo() (lineState, bool) {
	return u.back(len(u.changes) - 1)
}

// revert returns the line as it was before every change (M-r).
func (u *undoList) revert() (lineState, bool) {
	return u.back(0)
}

// back undoes the changes from the i'th on. The cursor goes where GNU
// readline's undo leaves it: after the text put back, or where text was
// taken out.
func (u *undoList) back(i int) (lineState, bool) {
	if i < 0 || i >= len(u.changes) {
		return u.cur, false
	}
	line, pos := slices.Clone(u.cur.line), u.cur.pos
	for j := len(u.changes) - 1; j >= i; j-- {
		c := u.changes[j]
		if c.pos+c.n > len(line) {
			break // cannot happen: the list follows every change
		}
		line = slices.Concat(line[:c.pos], c.was, line[c.pos+c.n:])
		pos = c.pos + len(c.was) - c.back
	}
	u.changes = u.changes[:i]
	u.cur = lineState{line, pos}
	u.typed = 0
	return lineState{slices.Clone(line), pos}, true
}

// editKind says what an edit did, for the command after it: kills in a
// row join in the kill ring, and M-y only follows a yank.
type editKind int

const (
	editOther editKind = iota
	editKillForward
	editKillBackward
	editYank
	// editCase rewrote the text from the cursor to where it left it (a
	// change of case); editTransposeChars the two characters before where
	// it left the cursor. The undo list records the span whole, changed or
	// not, as GNU readline does.
	editCase
	editTransposeChars
)

// lineEdit is one of the editor's commands, a function of the line and
// the cursor: the line it leaves (a copy of its own), the cursor, and what
// kind of edit it was.
type lineEdit func(line []rune, pos int) ([]rune, int, editKind)

// prefixKey is a key that the next key completes.
type prefixKey int

const (
	prefixNone           prefixKey = iota
	prefixCtrlX                    // C-x
	prefixQuoted                   // C-v: the next key goes in as it is
	prefixSearchForward            // C-]
	prefixSearchBackward           // M-C-]
)

// controlCommand is the edit for a control key, or nil for one that does
// nothing.
func (ed *editing) controlCommand(r rune) lineEdit {
	switch r {
	case ctrlX:
		ed.prefix = prefixCtrlX
	case ctrlV:
		ed.prefix = prefixQuoted
	case ctrlBracket:
		ed.prefix = prefixSearchForward
	case ctrlA:
		return moveEdit(rowStart)
	case ctrlB:
		return backwardChar
	case backspace, ctrlH:
		if edit, ok := ed.dedentEdit(); ok {
			return edit
		}
		return deleteEdit(-1)
	case ctrlUnderscore:
		return undoneEdit(ed.undo.undo)
	case ctrlW:
		return ed.killEdit(backwardBlank, true, false)
	case ctrlK:
		return ed.killEdit(killLineEnd, false, false)
	case ctrlU:
		return ed.killEdit(rowStart, true, false)
	case ctrlY:
		return ed.yankEdit
	case ctrlT:
		return func(line []rune, pos int) ([]rune, int, editKind) {
			out, to, ok := transposeChars(line, pos)
			if !ok {
				return line, pos, editOther
			}
			return out, to, editTransposeChars
		}
	}
	return nil
}

// metaCommand is the edit for Meta (Alt) with key, or nil.
func (ed *editing) metaCommand(key rune) lineEdit {
	switch key {
	case 'f':
		return moveEdit(forwardWord)
	case 'b':
		return moveEdit(backwardWord)
	case 'd':
		return ed.killEdit(forwardWord, false, true)
	case backspace, ctrlH:
		return ed.killEdit(backwardWord, true, true)
	case 'u', 'l', 'c':
		return func(line []rune, pos int) ([]rune, int, editKind) {
			out, to := caseWord(line, pos, key)
			return out, to, editCase
		}
	case 't':
		return func(line []rune, pos int) ([]rune, int, editKind) {
			out, to, _ := transposeWords(line, pos)
			return out, to, editOther
		}
	case '.', '_':
		return ed.lastArgumentEdit
	case 'y':
		return ed.yankPopEdit
	case 'r':
		return undoneEdit(ed.undo.revert)
	case '<':
		ed.walkHistory(0)
	case '>':
		ed.walkHistory(len(ed.e.history))
	case ctrlBracket:
		ed.prefix = prefixSearchBackward
	}
	return nil
}

// rowStart is where the cursor's row starts: the line's start, or after
// the line feed before the cursor in a block.
func rowStart(line []rune, pos int) int {
	return lastIndexRune(line[:pos], '\n') + 1
}

// rowEnd is where the cursor's row ends: the line's end, or at the line
// feed after the cursor in a block.
func rowEnd(line []rune, pos int) int {
	if i := indexRune(line[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(line)
}

// killLineEnd is where C-k kills to: the end of the cursor's row, or, at
// the end of a block's row, past its line feed (joining the rows).
func killLineEnd(line []rune, pos int) int {
	if end := rowEnd(line, pos); end > pos || end == len(line) {
		return end
	}
	return pos + 1
}

// backwardChar is C-b and Left: the cursor one character back.
var backwardChar = moveEdit(func(_ []rune, pos int) int { return pos - 1 })

// insertEdit inserts text at the cursor.
func insertEdit(text []rune) lineEdit {
	return func(line []rune, pos int) ([]rune, int, editKind) {
		out, to := insertAt(line, pos, text)
		return out, to, editOther
	}
}

// insertAt is line with text inserted at pos, and the cursor after it.
func insertAt(line []rune, pos int, text []rune) ([]rune, int) {
	return slices.Concat(line[:pos], text, line[pos:]), pos + len(text)
}

// deleteEdit deletes the character after the cursor (n 1: C-d, Delete)
// or before it (n -1: Backspace).
func deleteEdit(n int) lineEdit {
	return func(line []rune, pos int) ([]rune, int, editKind) {
		from := min(pos, pos+n)
		if from < 0 || from >= len(line) {
			return line, pos, editOther
		}
		return slices.Delete(line, from, from+1), from, editOther
	}
}

// charSearchEdit moves the cursor onto the next r after it (dir 1) or
// the one before it (dir -1); where there is none, it stays.
func charSearchEdit(r rune, dir int) lineEdit {
	return moveEdit(func(line []rune, pos int) int {
		for i := pos + dir; i >= 0 && i < len(line); i += dir {
			if line[i] == r {
				return i
			}
		}
		return pos
	})
}

func moveEdit(to func([]rune, int) int) lineEdit {
	return func(line []rune, pos int) ([]rune, int, editKind) {
		return line, min(max(to(line, pos), 0), len(line)), editOther
	}
}

// killEdit kills from the cursor to where to says, into the kill ring.
// The text joins the kill before if the key before was a kill, but for a
// Meta key: GNU readline reads its ESC as a key of its own, which ends
// the run of kills.
func (ed *editing) killEdit(to func([]rune, int) int, backwards, meta bool) lineEdit {
	kind := editKillForward
	if backwards {
		kind = editKillBackward
	}
	return func(line []rune, pos int) ([]rune, int, editKind) {
		from, till := pos, to(line, pos)
		if from > till {
			from, till = till, from
		}
		joined := !meta && (ed.last == editKillForward || ed.last == editKillBackward)
		ed.e.kills.kill(line[from:till], joined, backwards)
		return slices.Concat(line[:from], line[till:]), from, kind
	}
}

func (ed *editing) yankEdit(line []rune, pos int) ([]rune, int, editKind) {
	out, to, ok := ed.e.kills.yank(line, pos)
	if !ok {
		return line, pos, editOther
	}
	return out, to, editYank
}

func (ed *editing) yankPopEdit(line []rune, pos int) ([]rune, int, editKind) {
	if ed.last != editYank {
		return line, pos, editOther
	}
	out, to, ok := ed.e.kills.yankPop(line, pos)
	if !ok {
		return line, pos, editOther
	}
	return out, to, editYank
}

// lastArgumentEdit inserts the last word of the newest history entry
// (M-.).
func (ed *editing) lastArgumentEdit(line []rune, pos int) ([]rune, int, editKind) {
	hist := ed.e.history
	if len(hist) == 0 {
		return line, pos, editOther
	}
	return insertEdit([]rune(lastArgument(hist[len(hist)-1])))(line, pos)
}

// undoneEdit puts back the line a step back through the undo list gives
// (undoList.undo for C-_, revert for M-r), a copy of its own.
func undoneEdit(step func() (lineState, bool)) lineEdit {
	return func(line []rune, pos int) ([]rune, int, editKind) {
		if s, ok := step(); ok {
			return s.line, s.pos, editOther
		}
		return line, pos, editOther
	}
}
