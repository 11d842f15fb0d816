package term

import "slices"

// The keys python3 -i's GNU readline binds in emacs mode, as the editor
// takes them: control keys, Meta keys and the terminal's escape
// sequences.

// Control keys by the letter they go with.
const (
	ctrlA          = 0x01
	ctrlB          = 0x02
	ctrlD          = 0x04
	ctrlE          = 0x05
	ctrlF          = 0x06
	ctrlG          = 0x07
	ctrlH          = 0x08
	ctrlK          = 0x0b
	ctrlL          = 0x0c
	ctrlN          = 0x0e
	ctrlP          = 0x10
	ctrlR          = 0x12
	ctrlS          = 0x13
	ctrlT          = 0x14
	ctrlU          = 0x15
	ctrlV          = 0x16
	ctrlW          = 0x17
	ctrlX          = 0x18
	ctrlY          = 0x19
	ctrlZ          = 0x1a
	ctrlBracket    = 0x1d // C-]: character search
	ctrlUnderscore = 0x1f // C-_ (and C-/): undo
	backspace      = 0x7f
)

// handle applies k to the line; a non-nil result ends it.
func (ed *editing) handle(k key) *done {
	if ed.echoed > 0 && (k.kind != keyChar || !ed.echoesAhead()) {
		// The wait echoed a key that does not go in at the end of the
		// line after all: the screen is not what the frame writer knows.
		ed.e.out.forget()
		ed.stale = true
	}
	if ed.e.view.hasChoices() {
		// A list of choices stays until the next key.
		ed.e.view.setChoices(nil)
		ed.stale = true
	}
	if k.kind == keyPaste {
		// A paste is never the key a prefix (C-v, C-x, C-]) waits for.
		ed.prefix = prefixNone
		ed.endSearch(false)
		return ed.paste(k.text)
	}
	if ed.search != nil {
		if end, taken := ed.searchKey(k); taken {
			return end
		}
	}
	if ed.prefix != prefixNone {
		ed.prefixed(k)
		return nil
	}
	if ed.e.viMode {
		if end, taken := ed.viKey(k); taken {
			return end
		}
	}
	switch k.kind {
	case keyChar:
		ed.typed(k.r)
	case keyCtrl:
		return ed.control(k.r)
	case keyMeta:
		ed.apply(ed.metaCommand(k.r))
	case keyCSI:
		return ed.sequence(k.seq)
	}
	return nil
}

// prefixed is the key after a prefix key (C-v, C-x, C-], M-C-]).
func (ed *editing) prefixed(k key) {
	prefix := ed.prefix
	ed.prefix = prefixNone
	switch prefix {
	case prefixQuoted:
		if k.kind == keyChar || k.kind == keyCtrl && k.r == '\t' {
			ed.apply(insertEdit([]rune{k.r}))
		}
	case prefixSearchForward, prefixSearchBackward:
		dir := 1
		if prefix == prefixSearchBackward {
			dir = -1
		}
		if k.kind == keyChar {
			ed.apply(charSearchEdit(k.r, dir))
		}
	case prefixCtrlX:
		// C-x C-u is undo, C-x C-e edits the line in $EDITOR.
		switch {
		case k.kind == keyCtrl && k.r == ctrlU:
			ed.apply(undoneEdit(ed.undo.undo))
		case k.kind == keyCtrl && k.r == ctrlE:
			ed.editExternally()
		}
	}
}

// control is a control key's command.
func (ed *editing) control(r rune) *done {
	switch r {
	case '\r', '\n':
		return ed.enterKey()
	case ctrlC:
		ed.ctrlCAhead()
		return ed.interrupt()
	case ctrlD:
		switch {
		case len(ed.line) == 0:
			return &done{ev: Event{Kind: EventEOF}}
		case ed.onEmptyLastRow():
			// The end of input ends a block, as at python3's "... ".
			return ed.enter()
		}
		ed.apply(deleteEdit(1))
	case '\t':
		ed.tab('\t')
	case ctrlE:
		ed.end()
	case ctrlF:
		ed.forward()
	case ctrlG:
		ed.last = editOther
	case ctrlL, ctrlZ, ctrlBackslash:
		ed.terminalKey(r)
	case ctrlR, ctrlS:
		ed.startSearch(r == ctrlR)
	case ctrlP:
		ed.up()
	case ctrlN:
		ed.down()
	default:
		ed.apply(ed.controlCommand(r))
	}
	return nil
}

// terminalKey is Ctrl-L (clear the screen), Ctrl-Z (suspend) or Ctrl-\
// (quit), done as the terminal would do them.
func (ed *editing) terminalKey(r rune) {
	switch r {
	case ctrlL:
		ed.e.clearScreen()
	case ctrlZ:
		ed.e.suspend()
	case ctrlBackslash:
		ed.e.quit()
	}
	ed.stale = true
}

// tab hands TAB (or Shift-TAB) to the key hook, which completes, indents
// or switches modes.
func (ed *editing) tab(key rune) {
	if ed.e.hook == nil {
		ed.apply(insertEdit([]rune{'\t'}))
		return
	}
	a := ed.e.hook(key, slices.Clone(ed.line), ed.pos)
	switch {
	case a.Insert != "" || len(a.Choices) > 1:
		ed.apply(insertEdit([]rune(a.Insert)))
		if len(a.Choices) > 1 {
			ed.e.view.setChoices(a.Choices)
		}
	case a.Handled:
		// The hook may have changed the prompt and the history.
		ed.walk, ed.edited = len(ed.e.history), nil
		ed.e.out.forget()
		ed.stale = true
	}
}

// sequence is an escape sequence's command: the cursor keys, Home, End
// and Delete as xterm, tmux, screen and rxvt send them, and Ctrl-Left
// and Ctrl-Right as word moves (Debian's /etc/inputrc, which python3's
// readline reads).
func (ed *editing) sequence(seq string) *done {
	switch seq {
	case "A":
		ed.up()
	case "B":
		ed.down()
	case "C":
		ed.forward()
	case "D":
		ed.apply(backwardChar)
	case "H", "1~", "7~":
		ed.apply(moveEdit(rowStart))
	case "F", "4~", "8~":
		ed.end()
	case "3~":
		ed.apply(deleteEdit(1))
	case "1;5D", "5D", "1;3D":
		ed.apply(moveEdit(backwardWord))
	case "1;5C", "5C", "1;3C":
		ed.apply(moveEdit(forwardWord))
	case "Z":
		ed.tab(KeyShiftTab)
	}
	return nil
}

// forward is Right and C-f: the suggestion shown after the end of the
// line goes in, or the cursor moves right.
func (ed *editing) forward() {
	if ed.takeHint() {
		return
	}
	ed.apply(moveEdit(func(_ []rune, pos int) int { return pos + 1 }))
}

// end is End and C-e: the suggestion goes in, or the cursor goes to the
// end of its row.
func (ed *editing) end() {
	if ed.takeHint() {
		return
	}
	ed.apply(moveEdit(rowEnd))
}

// takeHint inserts the suggestion drawn after the cursor, if any.
func (ed *editing) takeHint() bool {
	if ed.pos != len(ed.line) || ed.stale {
		return false
	}
	hint := ed.e.view.shownHint()
	if hint == "" {
		return false
	}
	ed.apply(insertEdit([]rune(hint)))
	return true
}

// up is Up and C-p: the row above in a line of several rows, or the
// history entry before.
func (ed *editing) up() {
	if to, ok := rowMove(ed.line, ed.pos, true); ok {
		ed.apply(moveEdit(func([]rune, int) int { return to }))
		return
	}
	ed.walkHistory(ed.walk - 1)
}

// down is Down and C-n: the row below, or the history entry after.
func (ed *editing) down() {
	if to, ok := rowMove(ed.line, ed.pos, false); ok {
		ed.apply(moveEdit(func([]rune, int) int { return to }))
		return
	}
	ed.walkHistory(ed.walk + 1)
}

// walkHistory shows history entry i (len(history): the line being
// edited), with the cursor at its end.
func (ed *editing) walkHistory(i int) {
	hist := ed.e.history
	if i < 0 || i > len(hist) || i == ed.walk {
		return
	}
	if ed.walk == len(hist) {
		ed.edited = slices.Clone(ed.line)
	}
	ed.walk = i
	line := ed.edited
	if i < len(hist) {
		line = []rune(hist[i])
	}
	ed.line, ed.pos = slices.Clone(line), len(line)
	// A line from the history starts its own undo list.
	ed.undo.reset(ed.line, false)
	ed.last = editOther
	ed.stale = true
}

// rowMove is where Up (or Down) puts the cursor in a line of several
// rows: the same place on the row above (below), or its end if shorter.
// ok is false on the first (last) row, where the key walks the history.
func rowMove(line []rune, pos int, up bool) (to int, ok bool) {
	pos = min(pos, len(line))
	start := lastIndexRune(line[:pos], '\n') + 1 // of the cursor's row
	col := pos - start
	if up {
		if start == 0 {
			return 0, false
		}
		prev := lastIndexRune(line[:start-1], '\n') + 1
		return prev + min(col, start-1-prev), true
	}
	end := indexRune(line[pos:], '\n')
	if end < 0 {
		return 0, false
	}
	next := pos + end + 1
	nextEnd := indexRune(line[next:], '\n')
	if nextEnd < 0 {
		nextEnd = len(line) - next
	}
	return next + min(col, nextEnd), true
}

func indexRune(s []rune, r rune) int {
	for i, c := range s {
		if c == r {
			return i
		}
	}
	return -1
}

func lastIndexRune(s []rune, r rune) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == r {
			return i
		}
	}
	return -1
}
