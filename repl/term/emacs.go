package term

import (
	"slices"
	"strings"
	"unicode"

	"github.com/chzyer/readline"
)

// GNU readline's emacs commands that chzyer/readline lacks or does its own
// way, as python3 -i has them: words of letters and digits for the word
// moves and kills, a kill ring whose consecutive kills join and whose
// yank can be popped, case changes, transposing words, the last argument
// of the previous line, and undo. Each is a function of the line and the
// cursor, applied where readline handled a marker key (see
// Editor.translate). The undo list follows every change to the line,
// readline's own included (Editor.OnChange); every key that kills is one
// of these commands, so the kill ring holds every kill.

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
// line or with fewer than two characters, where it does nothing
// (chzyer/readline swapped the first two there).
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

// changed records the line as readline left it after a key.
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

// typedAtEnd records a character typed at the end of line, as the typing
// lane does, before it is appended: without comparing the lines, which
// changed does for every key.
func (u *undoList) typedAtEnd(line []rune) {
	u.typedEnd = len(line) + 1
	if u.typed > 0 && u.typed < undoJoinMax {
		u.changes[len(u.changes)-1].n++
		u.typed++
		return
	}
	u.changes = append(u.changes, change{pos: len(line), n: 1})
	u.typed = 1
}

// erasedAtEnd records the character at the end of line erased (Backspace
// in the typing lane), before it is.
func (u *undoList) erasedAtEnd(line []rune) {
	u.changes = append(u.changes, change{pos: len(line) - 1, was: []rune{line[len(line)-1]}})
	u.typed = 0
}

// now says the line is as the typing lane leaves it.
func (u *undoList) now(line []rune) {
	u.cur = lineState{slices.Clone(line), len(line)}
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

// lineEdit is one of the editor's own commands, applied to the line and
// the cursor readline has (without the marker).
type lineEdit func(line []rune, pos int) ([]rune, int, editKind)

// ctrlX is the key C-x, the first of C-x C-u (undo).
const ctrlX = 0x18

// ctrlUnderscore is C-_ (undo), which terminals also send for C-/.
const ctrlUnderscore = 0x1f

// ctrlV is C-v, quoted insert: the next key goes into the line as it is
// (a TAB, which otherwise switches modes).
const ctrlV = 0x16

// ctrlBracket is C-], character search: the cursor goes to the next
// place the next key's character is in the line (M-C-], the one before).
const ctrlBracket = 0x1d

// emacsCommand is the editor's own command for key r, if it has one: ok
// says it takes the key, and a nil edit that the key does nothing. In
// reverse search and completion readline keeps its own keys, and a Meta
// key it does not bind does nothing. Called by the input filter.
func (e *Editor) emacsCommand(r rune) (edit lineEdit, ok bool) {
	prefix := e.prefix
	e.prefix = prefixNone
	if r == pasteRune {
		// A paste is never the key a prefix (C-v, C-x, C-]) waits for:
		// the pump holds the keys after a paste until the editor ends its
		// line on the marker, so a marker taken here would stop all keys.
		return nil, false
	}
	meta := r >= metaRune && r < metaRune+0x80
	if e.rl.Operation.IsSearchMode() || e.rl.Operation.IsInCompleteMode() {
		return nil, meta
	}
	switch prefix {
	case prefixQuoted:
		return quotedInsert(r), true
	case prefixSearchForward:
		return charSearchEdit(r, 1), true
	case prefixSearchBackward:
		return charSearchEdit(r, -1), true
	case prefixCtrlX:
		// C-x C-u is undo; GNU readline binds C-x with nothing else here.
		if r == readline.CharCtrlU {
			return undoneEdit(e.undo.undo), true
		}
		return nil, true
	}
	if meta {
		return e.metaCommand(byte(r - metaRune)), true
	}
	return e.controlCommand(r)
}

// prefixKey is a key that the next key completes.
type prefixKey int

const (
	prefixNone           prefixKey = iota
	prefixCtrlX                    // C-x
	prefixQuoted                   // C-v: the next key goes in as it is
	prefixSearchForward            // C-]
	prefixSearchBackward           // M-C-]
)

// controlCommand is the edit for a control key, or for one of the Meta
// keys readline reads as one rune of its own (M-f, M-b, M-d, M-DEL).
func (e *Editor) controlCommand(r rune) (edit lineEdit, ok bool) {
	switch r {
	case ctrlX:
		e.prefix = prefixCtrlX
		return nil, true
	case ctrlV:
		e.prefix = prefixQuoted
		return nil, true
	case ctrlBracket:
		e.prefix = prefixSearchForward
		return nil, true
	case ctrlUnderscore:
		return undoneEdit(e.undo.undo), true
	case readline.MetaForward:
		return moveEdit(forwardWord), true
	case readline.MetaBackward:
		return moveEdit(backwardWord), true
	case readline.MetaDelete:
		return e.killEdit(forwardWord, false, true), true
	case readline.MetaBackspace:
		return e.killEdit(backwardWord, true, true), true
	case readline.CharCtrlW:
		return e.killEdit(backwardBlank, true, false), true
	case readline.CharKill:
		return e.killEdit(func(line []rune, _ int) int { return len(line) }, false, false), true
	case readline.CharCtrlU:
		return e.killEdit(func([]rune, int) int { return 0 }, true, false), true
	case readline.CharCtrlY:
		return e.yankEdit, true
	case readline.CharTranspose:
		return func(line []rune, pos int) ([]rune, int, editKind) {
			out, to, ok := transposeChars(line, pos)
			if !ok {
				return line, pos, editOther
			}
			return out, to, editTransposeChars
		}, true
	}
	return nil, false
}

// metaCommand is the edit for Meta (Alt) with key, or nil.
func (e *Editor) metaCommand(key byte) lineEdit {
	switch key {
	case 'u', 'l', 'c':
		return func(line []rune, pos int) ([]rune, int, editKind) {
			out, to := caseWord(line, pos, rune(key))
			return out, to, editCase
		}
	case 't':
		return func(line []rune, pos int) ([]rune, int, editKind) {
			out, to, _ := transposeWords(line, pos)
			return out, to, editOther
		}
	case '.', '_':
		return e.lastArgumentEdit
	case 'y':
		return e.yankPopEdit
	case 'r':
		return undoneEdit(e.undo.revert)
	case ctrlBracket:
		e.prefix = prefixSearchBackward
	}
	return nil
}

// quotedInsert is the edit for r after C-v: r goes into the line, if it
// is a TAB or a character that shows (a key readline has already read as
// a sequence, such as an arrow, is no longer a character).
func quotedInsert(r rune) lineEdit {
	if r != '\t' && (r < ' ' || r == 0x7f || r >= metaRune && r < metaRune+0x80 || isMarker(r)) {
		return nil
	}
	return insertEdit([]rune{r})
}

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
		return line, to(line, pos), editOther
	}
}

// killEdit kills from the cursor to where to says, into the kill ring.
// The text joins the kill before if the key before was a kill, but for a
// Meta key: GNU readline reads its ESC as a key of its own, which ends
// the run of kills.
func (e *Editor) killEdit(to func([]rune, int) int, backwards, meta bool) lineEdit {
	kind := editKillForward
	if backwards {
		kind = editKillBackward
	}
	return func(line []rune, pos int) ([]rune, int, editKind) {
		from, till := pos, to(line, pos)
		if from > till {
			from, till = till, from
		}
		joined := !meta && (e.lastEdit == editKillForward || e.lastEdit == editKillBackward)
		e.kills.kill(line[from:till], joined, backwards)
		return slices.Concat(line[:from], line[till:]), from, kind
	}
}

func (e *Editor) yankEdit(line []rune, pos int) ([]rune, int, editKind) {
	out, to, ok := e.kills.yank(line, pos)
	if !ok {
		return line, pos, editOther
	}
	return out, to, editYank
}

func (e *Editor) yankPopEdit(line []rune, pos int) ([]rune, int, editKind) {
	if e.lastEdit != editYank {
		return line, pos, editOther
	}
	out, to, ok := e.kills.yankPop(line, pos)
	if !ok {
		return line, pos, editOther
	}
	return out, to, editYank
}

func (e *Editor) lastArgumentEdit(line []rune, pos int) ([]rune, int, editKind) {
	e.mu.Lock()
	arg := []rune(lastArgument(e.lastHistory))
	e.mu.Unlock()
	return insertEdit(arg)(line, pos)
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
