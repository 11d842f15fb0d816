package term

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// EventKind says what ended one ReadLine.
type EventKind int

const (
	EventLine      EventKind = iota // a line was entered
	EventPaste                      // text was pasted (bracketed paste)
	EventInterrupt                  // Ctrl-C at the prompt
	EventEOF                        // Ctrl-D on an empty line
)

// Event is what the user did at a prompt.
type Event struct {
	Kind EventKind
	// Text is the line, or the text typed before a paste plus the paste,
	// or the text Ctrl-C left (EventInterrupt). A block typed as one
	// buffer ends with a line feed.
	Text string
	// Paste is the pasted text alone (EventPaste), for echoing it.
	Paste string
}

// KeyAction is what the key hook makes of a key.
type KeyAction struct {
	Handled bool   // the hook did what the key does; the editor ignores it
	Insert  string // text to insert in the key's place
	// Choices, with more than one, are listed below the line until the
	// next key: the ways the text before the cursor can go on.
	Choices []string
}

// Span colours the runes of a line from Start to End with SGR, the
// parameters of an SGR escape sequence ("1;34").
type Span struct {
	Start, End int
	SGR        string
}

// KeyShiftTab is Shift-TAB, as the key hook is given it.
const KeyShiftTab rune = -2

// EditorConfig configures an Editor.
type EditorConfig struct {
	// KeyHook, if set, sees each TAB (and KeyShiftTab) before the editor
	// does, with the line and the cursor (an index in its runes), on the
	// goroutine reading the line; it may call SetPrompt and SetHistory.
	KeyHook func(key rune, line []rune, pos int) KeyAction
	// MoreLines, if set, says whether Enter in text adds a line to it (a
	// block not yet complete) rather than ending it.
	MoreLines func(text string) bool
	// Highlight, if set, says how to colour the line: spans of it, in
	// order, each with the parameters of its SGR sequence. It runs at
	// every drawing of the line, on the goroutine reading it.
	Highlight func(line []rune) []Span
	// ViMode edits as GNU readline's vi mode does (set editing-mode vi):
	// each line starts in insert mode, and Esc goes to command mode.
	ViMode bool
	// Indent, if set, is what auto-indent puts at the start of a row
	// added to a block after before, the text before the cursor; with it,
	// Backspace in a row's indentation takes a level off.
	Indent func(before string) string
	// HistoryLimit bounds the entries kept.
	HistoryLimit int
	// OnIdle runs, besides returning the Go heap's garbage, after a pause
	// at the prompt (see idleTrim).
	OnIdle func()
	// OnWait, if set, runs each time the editor starts to wait for keys,
	// once its frame is on the screen: work that can wait until the
	// prompt shows, on the goroutine reading the line.
	OnWait func()
	// Suggest, if set, is asked for the rest to suggest after line, the
	// text being edited with the cursor at its end, once per change of the
	// line, on the goroutine reading it; it must return quickly, "" for no
	// suggestion. The suggestion is drawn dim after the cursor, and Right
	// or End there inserts it; any other key leaves it.
	Suggest func(line string) string
}

// Editor is the line editor. Each ReadLine is one serial loop on the
// caller's goroutine: it reads a key (a byte at a time, and only while the
// prompt is up), applies the key's edit to the line, and draws the line
// when no more keys are waiting (see editing).
type Editor struct {
	term *Terminal
	tty  *ttyReader
	out  *frameWriter // the terminal, a frame at a time
	view *lineView    // draws the line, over out
	raw  *rawMode
	hook func(rune, []rune, int) KeyAction
	// moreLines and indent are EditorConfig's.
	moreLines func(string) bool
	indent    func(string) string
	viMode    bool
	// cols is the terminal's width for the view, read once for each
	// prompt and on SIGWINCH at the prompt rather than at every key.
	cols atomic.Int64
	// colsFresh says Width read cols for the coming prompt already.
	colsFresh bool
	// leadIn is written at the start of the next prompt's frame (LeadIn).
	leadIn string

	// waits is told when the editor blocks for keys and when they come
	// (the frame writer sends its frame, the idle trim starts).
	waits func(waiting bool)
	// reading says a prompt reads keys: SIGWINCH and a Ctrl-C between
	// prompts wake its wait, which then finds resized or interrupted set.
	reading, resized, interrupted atomic.Bool

	// What outlives a line: the history Up walks, and the kill ring.
	history      []string
	historyLimit int
	kills        killRing
}

// NewEditor starts the line editor on t.
func (t *Terminal) NewEditor(cfg EditorConfig) (*Editor, error) {
	e := &Editor{term: t, tty: t.tty, out: newFrameWriter(t.out), raw: &rawMode{fd: t.fd}, hook: cfg.KeyHook, historyLimit: cfg.HistoryLimit,
		moreLines: cfg.MoreLines, indent: cfg.Indent, viMode: cfg.ViMode}
	e.out.echoDst = t.echo
	e.readWidth()
	e.view = newLineView(e.out, e.columns)
	e.view.suggest = cfg.Suggest
	e.view.highlight = cfg.Highlight
	trim := newIdleTrim(idleTrimAfter, idleTrimMin, cfg.OnIdle)
	e.waits = func(waiting bool) {
		e.out.readerWaits(waiting)
		trim.waiting(waiting)
		if waiting && cfg.OnWait != nil {
			cfg.OnWait()
		}
	}
	e.watchResize()
	return e, nil
}

// watchResize has the line drawn again when the window changes size at
// the prompt. (While user code runs SIGWINCH is Python's, and ReadLine
// takes the width again.)
func (e *Editor) watchResize() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, unix.SIGWINCH)
	go func() {
		for range ch {
			if e.reading.Load() {
				e.resized.Store(true)
				e.tty.wake()
			}
		}
	}()
}

// readWidth reads the terminal's width again; where it cannot be read
// (a terminal that was never given a size says 0), the line is laid out
// in 80 columns.
func (e *Editor) readWidth() {
	w := e.term.Width()
	if w <= 0 {
		w = 80
	}
	e.cols.Store(int64(w))
}

// Width reads the terminal's width for the coming prompt, which then
// takes it as it is, and returns it. It is called, as ReadLine is, from
// the loop's goroutine.
func (e *Editor) Width() int {
	e.readWidth()
	e.colsFresh = true
	return e.columns()
}

// LeadIn has s written at the start of the next prompt's frame, in the
// same write as the prompt.
func (e *Editor) LeadIn(s string) { e.leadIn += s }

// columns is the terminal's width as last read (readWidth).
func (e *Editor) columns() int { return int(e.cols.Load()) }

// SetPrompt changes the prompt of the line being read (from the key hook).
func (e *Editor) SetPrompt(prompt string) { e.view.setPrompt(prompt) }

// SetHistory replaces the history that Up and Down walk.
func (e *Editor) SetHistory(lines []string) {
	e.history = append(e.history[:0:0], lines...)
	e.trimHistory()
}

// AddHistory adds a line to the history that Up and Down walk.
func (e *Editor) AddHistory(line string) {
	e.history = append(e.history, line)
	e.trimHistory()
}

func (e *Editor) trimHistory() {
	if e.historyLimit > 0 && len(e.history) > e.historyLimit {
		e.history = e.history[len(e.history)-e.historyLimit:]
	}
}

// CtrlC hands the editor a Ctrl-C that came as a signal while no prompt
// was up: between two prompts the terminal is cooked, and the key would
// otherwise be lost where python3 reports it. The next prompt (or the one
// starting) ends at once as Ctrl-C does. Keys read ahead are dropped, as
// the terminal drops its queue on a Ctrl-C.
func (e *Editor) CtrlC() {
	e.interrupted.Store(true)
	e.tty.wake()
}

// ReadLine shows prompt, with initial already in the line, and returns
// what the user did. The keys are waited for through await, if set (see
// Await).
func (e *Editor) ReadLine(prompt, initial string, await Await) (Event, error) {
	// While user code ran, SIGWINCH was not pyaichat's: the window may
	// have changed size unseen.
	if !e.colsFresh {
		e.readWidth()
	}
	e.colsFresh = false
	e.out.hold()
	e.view.reset() // the prompt starts a row of its own
	e.SetPrompt(prompt)
	io.WriteString(e.out, e.leadIn+bracketedPasteOn)
	e.leadIn = ""
	// Raw before the prompt shows, in the terminal's foreground if a
	// child that took it has ended: a key typed as soon as the prompt
	// shows must arrive as a key.
	reclaimForeground(e.raw.fd)
	if err := e.raw.enter(); err != nil {
		e.out.flush()
		return Event{}, fmt.Errorf("terminal: %w", err)
	}
	e.reading.Store(true)
	defer e.reading.Store(false)
	ed := newEditing(e, initial, await)
	ev, err := ed.run()
	// A paste's line was erased, for the caller to show it as it runs;
	// any other line stays, with the cursor on a row of its own after it.
	lineEnd := ""
	if err == nil && ev.Kind != EventPaste {
		lineEnd = "\n"
		e.view.ended()
	}
	return ev, e.leave(lineEnd, err)
}

// leave ends a prompt: the terminal leaves raw mode, then what ends the
// line, if the editor has not written it, and bracketed paste off go out
// with the editor's last frame, in one write. In that order, keys typed
// once the line's end shows (the answer to an input() it runs) reach a
// cooked terminal, which takes their Enter as the end of a line: a raw one
// keeps it as a carriage return, which a read in cooked mode then does
// not end on. It returns err.
func (e *Editor) leave(lineEnd string, err error) error {
	e.raw.exit()
	io.WriteString(e.out, lineEnd+bracketedPasteOff)
	e.out.flush()
	return err
}

// takeInterrupt reports whether a Ctrl-C between prompts is waiting, and
// drops the keys read ahead with it.
func (e *Editor) takeInterrupt() bool {
	if !e.interrupted.Swap(false) {
		return false
	}
	e.tty.dropUnread()
	return true
}

const (
	bracketedPasteOn  = "\x1b[?2004h"
	bracketedPasteOff = "\x1b[?2004l"
)

// suspend is Ctrl-Z at the prompt, done as the terminal's own Ctrl-Z would
// do it (the line editor keeps ISIG off): SIGTSTP to pyaichat's process
// group, with the terminal in the mode it had before. As python3 does in a
// process group with no shell to continue it (pyaichat as a session
// leader), where the kernel discards the stop, Ctrl-Z then does nothing.
func (e *Editor) suspend() {
	e.raw.exit()
	io.WriteString(e.out, "\r\n")
	e.out.flush()
	e.view.reset()
	// Returns once pyaichat is continued (fg), or at once when discarded.
	unix.Kill(0, unix.SIGTSTP)
	e.raw.enter()
}

// ctrlBackslash is the key the terminal sends for Ctrl-\.
const ctrlBackslash = 0x1c

// quit is Ctrl-\ at the prompt, done as in python3 -i, where GNU readline
// leaves the terminal's signal keys on: SIGQUIT to pyaichat's process
// group, which ends it by that signal (dumping core where that is allowed)
// unless user code ignores or handles SIGQUIT. Nothing is printed, as
// python3 prints nothing; the terminal goes back to the mode it had before
// the prompt, as on every way out of pyaichat (python3 leaves it raw, to
// the shell).
func (e *Editor) quit() {
	e.out.flush()
	io.WriteString(e.out, bracketedPasteOff)
	e.raw.exit()
	// The terminal signals the whole process group. That signal may be
	// taken by another of pyaichat's threads while this one goes on; the
	// one sent to this thread is taken before tgkill returns, so the
	// terminal is not made raw again by a process about to end.
	unix.Kill(0, unix.SIGQUIT)
	signalThisThread(unix.SIGQUIT)
	// Still here: SIGQUIT was ignored or handled.
	io.WriteString(e.out, bracketedPasteOn)
	e.raw.enter()
}

// clearScreenSeq is what GNU readline writes for Ctrl-L (python3's): the
// cursor home, the whole screen erased. The prompt and the line are then
// drawn again from the top, by the caller.
const clearScreenSeq = "\x1b[H\x1b[2J"

// clearScreen clears the terminal for Ctrl-L, after whatever is held:
// the view draws its next drawing from the top row.
func (e *Editor) clearScreen() {
	e.out.flush()
	io.WriteString(e.out, clearScreenSeq)
	e.view.atTop()
}

// armEcho says what a wait for the next key is to write before that key,
// if it reads a printable one alone: echoAhead's drawing for it, worked
// out before it comes, so that the thread that waited can echo the key as
// soon as it reads it (ReadAhead).
func (e *Editor) armEcho() (before []byte, fd int, ok bool) {
	plan, ok := e.view.echoPlan()
	if !ok {
		return nil, -1, false
	}
	return e.out.echoPrefix(plan)
}

// echoTyped echoes r, typed at the end of the line and read after a wait
// (waited), unless the wait echoed it itself (echoed bytes: armEcho). It
// reports whether the screen shows r; otherwise the line is to be drawn.
// A key read as soon as it was typed is echoed at once, ahead of the
// redraw that also draws the suggestion for the line; keys typed ahead
// are drawn together, once, when they have all been taken.
func (e *Editor) echoTyped(r rune, waited bool, echoed int) bool {
	if echoed > 0 {
		ahead, ok := e.view.echoAhead(r)
		if !ok {
			e.out.forget()
			return false
		}
		return e.out.echo(ahead, echoed)
	}
	if !waited {
		return false
	}
	ahead, ok := e.view.echoAhead(r)
	return ok && e.out.echo(ahead, 0)
}

// drawFrame writes a drawing of the line as the frame of a key: the frame
// writer holds it until the editor waits for keys or returns, and sends
// what it changes on the screen.
func (e *Editor) drawFrame(drawing []byte) {
	e.out.hold()
	e.out.Write(drawing)
}
