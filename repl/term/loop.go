package term

import (
	"errors"
	"slices"
)

// editing is one line being read: the buffer (the text and the cursor),
// what the emacs commands keep between keys, and whether the screen shows
// the buffer as it is. Its loop (run) reads a key, applies it, and draws
// the line only when no more keys are waiting, so keys typed ahead or sent
// together are drawn once.
type editing struct {
	e     *Editor
	await Await
	line  []rune
	pos   int
	undo  undoList
	// last is what the last edit did (kills in a row join, M-y follows a
	// yank), and prefix a key that the next key completes.
	last   editKind
	prefix prefixKey
	stale  bool // the screen does not show the line as it is
	// walk is the history entry shown (len(history) for the line being
	// edited), and edited that line while another is shown.
	walk   int
	edited []rune
	// search, while not nil, is an incremental history search (C-r, C-s).
	search *historySearch
	// vi is vi mode's state, where the editor is in vi mode.
	vi viState
	// waited says the key being handled was read after a wait (not typed
	// ahead), and echoed how much of its echo the wait wrote.
	waited bool
	echoed int
}

func newEditing(e *Editor, initial string, await Await) *editing {
	ed := &editing{e: e, await: await, line: []rune(initial), stale: true, walk: len(e.history)}
	ed.pos = len(ed.line)
	ed.undo.reset(ed.line, true)
	return ed
}

// done is what ends a line: the event, or an error.
type done struct {
	ev  Event
	err error
}

// run reads keys until one ends the line.
func (ed *editing) run() (Event, error) {
	e := ed.e
	if e.takeInterrupt() {
		return Event{Kind: EventInterrupt, Text: string(ed.line)}, nil
	}
	ahead := false // the last key came with more behind it
	for {
		b, err := ed.nextByte(ahead)
		ahead = !ed.waited
		if errors.Is(err, errWoken) {
			if end := ed.woken(); end != nil {
				return end.ev, end.err
			}
			continue
		}
		if err != nil {
			return Event{}, err
		}
		k, err := readKey(b, keyBytes{ed}, ed.e.viMode)
		if err != nil {
			return Event{}, err
		}
		if end := ed.handle(k); end != nil {
			return end.ev, end.err
		}
	}
}

// nextByte reads the next key's first byte: at once when ahead says keys
// are coming together, otherwise drawing the line and then waiting for
// one (through await, if set, which may echo a printable key at the end
// of the line).
func (ed *editing) nextByte(ahead bool) (byte, error) {
	e := ed.e
	ed.waited, ed.echoed = false, 0
	if ahead {
		// Keys typed ahead or sent together: one read each, without the
		// wait's own reads (its wake-up check, the poller).
		if b, ok := e.tty.readyByte(); ok {
			return b, nil
		}
	}
	ed.draw()
	var arm echoArm
	if ed.echoesAhead() {
		arm = e.armEcho
	}
	b, echoed, err := e.tty.readByteAwaiting(func() {
		ed.waited = true
		e.waits(true)
	}, ed.await, arm)
	if ed.waited {
		e.waits(false)
	}
	ed.echoed = echoed
	if e.tty.typedAhead() {
		// Keys came behind it: it is drawn with them, once (the wait
		// did not echo it).
		ed.waited = false
	}
	return b, err
}

// echoesAhead says a printable key typed now would go in at the end of
// the line as it is, so it may be echoed before the line is drawn again.
func (ed *editing) echoesAhead() bool {
	return ed.pos == len(ed.line) && ed.prefix == prefixNone && ed.search == nil && !ed.vi.command
}

// keyBytes reads the rest of a key: waiting, as the key's first byte did.
type keyBytes struct{ ed *editing }

func (k keyBytes) next() (byte, error) {
	b, _, err := k.ed.e.tty.readByteAwaiting(nil, k.ed.await, nil)
	return b, err
}

func (k keyBytes) ready() (byte, bool) { return k.ed.e.tty.readyByte() }

func (k keyBytes) unread(b byte) { k.ed.e.tty.unread([]byte{b}) }

// draw brings the screen up to date before a wait for the next key.
func (ed *editing) draw() {
	if !ed.stale {
		return
	}
	ed.stale = false
	if ed.search != nil {
		ed.e.drawFrame(ed.search.redraw(ed.e.view))
		return
	}
	ed.e.drawFrame(ed.e.view.redrawAt(ed.line, ed.pos))
}

// woken acts on a wake-up of the wait for a key: the window's new size,
// or a Ctrl-C between prompts, which ends the line.
func (ed *editing) woken() *done {
	e := ed.e
	if e.resized.Swap(false) {
		e.readWidth()
		// Straight to the terminal, which may have rewrapped the line:
		// nothing of the last drawing can be assumed.
		e.out.flush()
		e.out.forget()
		ed.stale = true
		return nil
	}
	if e.takeInterrupt() {
		return ed.interrupt()
	}
	return nil
}

// interrupt ends the line as Ctrl-C does: the line stays on the screen as
// typed, without its suggestion, and no ^C is left on it, as in python3.
func (ed *editing) interrupt() *done {
	ed.endSearch(true)
	ed.e.drawFrame(ed.e.view.redrawPlain(ed.line))
	return &done{ev: Event{Kind: EventInterrupt, Text: string(ed.line)}}
}

// enter ends the line, drawn whole without a suggestion, with the cursor
// at its end, so that the terminal's output holds the line whole for
// whatever reads it as text.
func (ed *editing) enter() *done {
	ed.e.drawFrame(ed.e.view.redrawPlain(ed.line))
	return &done{ev: Event{Kind: EventLine, Text: blockText(ed.line)}}
}

// paste ends the line with a paste: the line typed so far and the pasted
// text, which the caller shows as it will run. The line is erased here.
func (ed *editing) paste(text string) *done {
	e := ed.e
	e.out.flush()
	e.out.Write(e.view.clear())
	return &done{ev: Event{Kind: EventPaste, Text: string(ed.line) + text, Paste: text}}
}

// ctrlCAhead takes the keys typed right after a Ctrl-C: as python3 takes
// them, where the terminal's SIGINTs that come before the first is handled
// merge into one and each drops the keys typed before it. The bytes
// already there are read up to a line end; those up to the last Ctrl-C
// among them go with it, and the rest are kept for the next prompt.
func (ed *editing) ctrlCAhead() {
	var after []byte
	for {
		b, ok := ed.e.tty.readyByte()
		if !ok {
			break
		}
		after = append(after, b)
		if b == ctrlC {
			after = after[:0]
			continue
		}
		if isLineEnd(b) {
			break
		}
	}
	ed.e.tty.unread(after)
}

// set puts text in the line, the cursor at pos, as one change.
func (ed *editing) set(line []rune, pos int, kind editKind) {
	at := ed.pos
	ed.line, ed.pos = line, min(max(pos, 0), len(line))
	switch kind {
	case editCase:
		ed.undo.rewrote(ed.line, at, ed.pos, 0)
	case editTransposeChars:
		ed.undo.rewrote(ed.line, ed.pos-2, ed.pos, 1)
	default:
		ed.undo.changed(ed.line, ed.pos)
	}
	ed.last = kind
	ed.stale = true
}

// apply runs one of the emacs commands on the line.
func (ed *editing) apply(edit lineEdit) {
	if edit == nil {
		ed.last = editOther
		return
	}
	line, pos, kind := edit(slices.Clone(ed.line), ed.pos)
	ed.set(line, pos, kind)
}

// typed takes a printable character typed at the cursor.
func (ed *editing) typed(r rune) {
	atEnd := ed.echoesAhead()
	ed.set(slices.Insert(ed.line, ed.pos, r), ed.pos+1, editOther)
	if atEnd && ed.e.echoTyped(r, ed.waited, ed.echoed) {
		// Echoed; the redraw before the next wait draws the suggestion
		// for the line, and its colours.
		ed.stale = ed.e.view.suggest != nil || ed.e.view.highlight != nil
	}
}
