package term

import (
	"errors"

	"github.com/chzyer/readline"
)

// typed is what typeLine took.
type typed struct {
	line []rune
	done bool // Enter ended the line
	// key is the first byte of a key left to readline (not done), or nil
	// when a Ctrl-C between prompts was queued for it.
	key []byte
	// undo is the line's changes, for readline's undo (C-_) after it.
	undo *undoList
}

// typeLine takes a line typed from its end, the way nearly every line is
// entered, on the caller's goroutine: printable ASCII, Backspace, Enter.
// readline takes every key through two goroutines of its own (its reader,
// which the pump feeds, and its editing loop) before the line reaches the
// caller's, and lays the whole line out again for each key: a line of
// `1+1` took twice as long from its keys to its result as in python3.
// The first key of any other kind ends typeLine, and readline goes on
// from there with the line as typed so far (ReadLine), so that editing,
// history, search, completion, pastes and Ctrl-C are all still
// readline's and the pump's.
//
// A key read as soon as it was typed is echoed at once (echoAhead); keys
// that came together (typed ahead) are drawn together, once, when they
// have all been taken, and then the suggestion for the line is drawn.
func (e *Editor) typeLine(initial string, await Await) (typed, error) {
	e.pump.typing(true)
	e.typing.Store(true)
	defer func() {
		e.typing.Store(false)
		e.pump.typing(false)
		e.term.tty.woken() // a wake-up for this read that came too late
	}()
	t := &lineTyping{e: e, line: []rune(initial), undo: new(undoList), stale: true}
	t.undo.reset(t.line, true)
	if !e.pump.idle() {
		// A Ctrl-C (or a signal handler's exception, which ends the line
		// as one) came after StartLine chose this lane but before the
		// flag above said so: it queued its key and woke no read, and
		// readline takes it from the queue.
		return t.unfinished(nil), nil
	}
	ahead := false // the last key came with more behind it
	for {
		b, waited, echoed, err := e.nextKey(ahead, await, t.draw)
		ahead = !waited
		switch {
		case errors.Is(err, errWoken):
			if res, end := t.woken(); end {
				return res, nil
			}
			continue
		case err != nil:
			return typed{}, err
		}
		if res, end := t.key(b, waited, echoed); end {
			return res, nil
		}
	}
}

// lineTyping is the line typeLine builds, and whether the screen shows it
// as it is.
type lineTyping struct {
	e     *Editor
	line  []rune
	undo  *undoList
	stale bool // the screen does not show line as it is
}

// draw brings the screen up to date before a wait for the next key.
func (t *lineTyping) draw() {
	if t.stale {
		t.e.drawFrame(t.e.view.redraw(t.line))
		t.stale = false
	}
}

// unfinished hands the line to readline with the key typeLine does not
// take.
func (t *lineTyping) unfinished(key []byte) typed {
	t.undo.now(t.line)
	return typed{line: t.line, key: key, undo: t.undo}
}

// woken acts on a wake-up of the wait for a key; end says typeLine ends.
func (t *lineTyping) woken() (res typed, end bool) {
	e := t.e
	if e.resized.Swap(false) {
		// Straight to the terminal, which may have rewrapped the line:
		// nothing of the last drawing can be assumed.
		e.out.flush()
		e.out.Write(e.view.redraw(t.line))
		return typed{}, false
	}
	if !e.pump.idle() {
		return t.unfinished(nil), true // a Ctrl-C between prompts
	}
	return typed{}, false
}

// key takes one byte typed; end says typeLine ends, with res.
func (t *lineTyping) key(b byte, waited bool, echoed int) (res typed, end bool) {
	e := t.e
	switch {
	case b >= ' ' && b < 0x7f:
		t.undo.typedAtEnd(t.line)
		t.line = append(t.line, rune(b))
		if !e.echoTyped(rune(b), waited, echoed) {
			t.stale = true
			return typed{}, false
		}
		// Echoed; the redraw before the next wait draws the suggestion
		// for the line.
		t.stale = e.view.suggest != nil
	case b == '\r' || b == '\n':
		// Without a suggestion, as Enter leaves the line, in a frame that
		// stays open for the line's end (ReadLine's leave): where the
		// screen shows the line as typed, the frame comes to that end
		// alone, and otherwise (a suggestion erased, keys drawn across
		// the right margin) to the whole line again, so that the
		// terminal's output holds the line whole, as readline leaves it,
		// for whatever reads it as text.
		e.drawFrame(e.view.redrawPlain(t.line))
		return typed{line: t.line, done: true}, true
	case b == readline.CharCtrlL:
		e.clearScreen()
		e.out.Write(e.view.redraw(t.line))
		t.stale = false
	case (b == 0x7f || b == 0x08) && len(t.line) > 0 && t.line[len(t.line)-1] != '\n':
		t.undo.erasedAtEnd(t.line)
		t.line = t.line[:len(t.line)-1]
		t.stale = true
	default:
		return t.unfinished([]byte{b}), true
	}
	return typed{}, false
}

// nextKey reads typeLine's next byte: at once when ahead says keys are
// coming together, otherwise waiting for one (through await, if set), and
// then first calling idle and telling waits. waited says it waited, and
// echoed how many bytes of the key's echo the wait wrote (armEcho).
func (e *Editor) nextKey(ahead bool, await Await, idle func()) (b byte, waited bool, echoed int, err error) {
	if ahead {
		// Keys typed ahead or sent together: one read each, without the
		// wait's own reads (its wake-up check, the poller).
		if b, ok := e.term.tty.readyByte(); ok {
			return b, false, 0, nil
		}
	}
	b, echoed, err = e.term.tty.readByteAwaiting(func() {
		waited = true
		idle()
		e.waits(true)
	}, await, e.armEcho)
	if waited {
		e.waits(false)
	}
	return b, waited, echoed, err
}

// echoTyped echoes r, typed at the end of the line and read after a wait
// (waited), unless the wait echoed it itself (echoed bytes: armEcho). It
// reports whether the screen shows r; otherwise the line is to be drawn.
func (e *Editor) echoTyped(r rune, waited bool, echoed int) bool {
	if echoed > 0 {
		return e.echoedAhead(r, echoed)
	}
	return waited && e.echoAhead(r)
}

// drawFrame writes a drawing of the line as the frame of a key: the frame
// writer holds it until the editor waits for keys or returns, and sends
// what it changes on the screen.
func (e *Editor) drawFrame(drawing []byte) {
	e.out.keyStart(true)
	e.out.Write(drawing)
	e.out.keyDone()
}
