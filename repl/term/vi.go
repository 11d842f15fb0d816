package term

import (
	"slices"
	"unicode"
)

// vi mode, as GNU readline has it with `set editing-mode vi`: a line
// starts in insert mode, where keys go in as in emacs mode; Esc goes to
// command mode, whose keys move, delete, change and put.

// viState is what vi mode keeps between keys.
type viState struct {
	command bool // in command mode
	// op is an operator (d, c) waiting for its motion, and replace says
	// r waits for the character to put in.
	op      rune
	replace bool
}

// viKey handles k in command mode, or Esc in insert mode; taken says
// vi mode took it.
func (ed *editing) viKey(k key) (end *done, taken bool) {
	v := &ed.vi
	if !v.command {
		if k.kind == keyCtrl && k.r == esc {
			v.command = true
			ed.apply(moveEdit(func(line []rune, pos int) int { return max(pos-1, rowStart(line, pos)) }))
			return nil, true
		}
		return nil, false
	}
	if k.kind == keyCtrl || k.kind == keyCSI || k.kind == keyPaste {
		if k.kind == keyCtrl && k.r == '\r' || k.kind == keyCtrl && k.r == '\n' {
			v.command = false
		}
		return nil, false // Enter, Ctrl-C, the arrows... as in insert mode
	}
	switch {
	case v.replace:
		v.replace = false
		if ed.pos < len(ed.line) && ed.line[ed.pos] != '\n' {
			line := slices.Clone(ed.line)
			line[ed.pos] = k.r
			ed.set(line, ed.pos, editOther)
		}
	case v.op != 0:
		ed.viOperator(k.r)
	default:
		ed.viCommand(k.r)
	}
	return nil, true
}

// viMotion is where motion key r takes the cursor from pos; ok is false
// for a key that is no motion.
func viMotion(r rune, line []rune, pos int) (to int, ok bool) {
	switch r {
	case 'h':
		return max(pos-1, rowStart(line, pos)), true
	case 'l', ' ':
		return min(pos+1, max(rowEnd(line, pos)-1, pos)), true
	case '0':
		return rowStart(line, pos), true
	case '^':
		to = rowStart(line, pos)
		for to < len(line) && (line[to] == ' ' || line[to] == '\t') {
			to++
		}
		return to, true
	case '$':
		return max(rowEnd(line, pos)-1, rowStart(line, pos)), true
	case 'w':
		return viWordForward(line, pos), true
	case 'b':
		return backwardWord(line, pos), true
	case 'e':
		return max(forwardWord(line, min(pos+1, len(line)))-1, pos), true
	}
	return pos, false
}

// viWordForward is where w goes: the start of the next word (a run of
// letters and digits, or of other characters that are not blank).
func viWordForward(line []rune, pos int) int {
	class := func(r rune) int {
		switch {
		case unicode.IsSpace(r):
			return 0
		case isWordRune(r) || r == '_':
			return 1
		}
		return 2
	}
	if pos < len(line) {
		c := class(line[pos])
		for pos < len(line) && class(line[pos]) == c && c != 0 {
			pos++
		}
	}
	for pos < len(line) && class(line[pos]) == 0 {
		pos++
	}
	return pos
}

// viCommand is one command-mode key.
func (ed *editing) viCommand(r rune) {
	if to, ok := viMotion(r, ed.line, ed.pos); ok {
		ed.apply(moveEdit(func([]rune, int) int { return to }))
		return
	}
	if cmd, ok := viCommands[r]; ok {
		cmd(ed)
	}
}

// viCommands are command mode's keys besides the motions.
var viCommands = map[rune]func(ed *editing){
	'i': func(ed *editing) { ed.vi.command = false },
	'a': func(ed *editing) {
		ed.vi.command = false
		ed.apply(moveEdit(func(line []rune, pos int) int { return min(pos+1, rowEnd(line, pos)) }))
	},
	'I': func(ed *editing) { ed.vi.command = false; ed.apply(moveEdit(rowStart)) },
	'A': func(ed *editing) { ed.vi.command = false; ed.apply(moveEdit(rowEnd)) },
	'x': func(ed *editing) { ed.viDelete(ed.pos, min(ed.pos+1, rowEnd(ed.line, ed.pos))) },
	'X': func(ed *editing) { ed.viDelete(max(ed.pos-1, rowStart(ed.line, ed.pos)), ed.pos) },
	'D': func(ed *editing) { ed.viDelete(ed.pos, rowEnd(ed.line, ed.pos)) },
	'C': func(ed *editing) { ed.viDelete(ed.pos, rowEnd(ed.line, ed.pos)); ed.vi.command = false },
	'S': func(ed *editing) {
		ed.viDelete(rowStart(ed.line, ed.pos), rowEnd(ed.line, ed.pos))
		ed.vi.command = false
	},
	's': func(ed *editing) {
		ed.viDelete(ed.pos, min(ed.pos+1, rowEnd(ed.line, ed.pos)))
		ed.vi.command = false
	},
	'd': func(ed *editing) { ed.vi.op = 'd' },
	'c': func(ed *editing) { ed.vi.op = 'c' },
	'r': func(ed *editing) { ed.vi.replace = true },
	'u': func(ed *editing) { ed.apply(undoneEdit(ed.undo.undo)) },
	'p': func(ed *editing) { ed.viPut(true) },
	'P': func(ed *editing) { ed.viPut(false) },
	'~': (*editing).viToggleCase,
	'k': (*editing).up,
	'-': (*editing).up,
	'j': (*editing).down,
	'+': (*editing).down,
	'v': (*editing).editExternally,
}

// viPut puts the last kill after the cursor (p) or before it (P).
func (ed *editing) viPut(after bool) {
	at := ed.pos
	if after && at < len(ed.line) {
		at++
	}
	ed.apply(func(line []rune, _ int) ([]rune, int, editKind) {
		out, to, ok := ed.e.kills.yank(line, at)
		if !ok {
			return line, ed.pos, editOther
		}
		return out, max(to-1, at), editYank
	})
}

// viToggleCase is ~: the case of the character under the cursor changes,
// and the cursor moves on.
func (ed *editing) viToggleCase() {
	if ed.pos >= len(ed.line) {
		return
	}
	line := slices.Clone(ed.line)
	c := line[ed.pos]
	if unicode.IsUpper(c) {
		line[ed.pos] = unicode.ToLower(c)
	} else {
		line[ed.pos] = unicode.ToUpper(c)
	}
	ed.set(line, min(ed.pos+1, max(rowEnd(line, ed.pos)-1, ed.pos)), editOther)
}

// viOperator is the key after d or c: a motion (or the operator again,
// for the whole row), whose span it deletes.
func (ed *editing) viOperator(r rune) {
	v := &ed.vi
	op := v.op
	v.op = 0
	from, to := ed.pos, 0
	switch {
	case r == op:
		from, to = rowStart(ed.line, ed.pos), rowEnd(ed.line, ed.pos)
	case r == 'w' && op == 'c':
		// cw changes to the end of the word, as vi does.
		to = forwardWord(ed.line, ed.pos)
	case r == '$':
		to = rowEnd(ed.line, ed.pos)
	default:
		m, ok := viMotion(r, ed.line, ed.pos)
		if !ok {
			return
		}
		to = m
		if r == 'e' {
			to++
		}
	}
	if from > to {
		from, to = to, from
	}
	ed.viDelete(from, min(to, len(ed.line)))
	if op == 'c' {
		v.command = false
	}
}

// viDelete kills the text from from to to into the kill ring.
func (ed *editing) viDelete(from, to int) {
	if from >= to {
		return
	}
	ed.e.kills.kill(ed.line[from:to], false, false)
	line := slices.Concat(ed.line[:from], ed.line[to:])
	pos := from
	if ed.vi.command && pos >= rowEnd(line, pos) && pos > rowStart(line, pos) {
		pos-- // command mode's cursor stays on a character
	}
	ed.set(line, pos, editKillForward)
}
