package term

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/chzyer/readline"
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
	// or the text Ctrl-C left (EventInterrupt).
	Text string
	// Paste is the pasted text alone (EventPaste), for echoing it.
	Paste string
}

// KeyAction is what the key hook makes of a key.
type KeyAction struct {
	Handled bool   // the hook did what the key does; the editor ignores it
	Insert  string // text to insert in the key's place
}

// EditorConfig configures an Editor.
type EditorConfig struct {
	// KeyHook, if set, sees each TAB before the editor does, on the
	// editor's goroutine, and may call SetPrompt and SetHistory.
	KeyHook func(key rune) KeyAction
	// HistoryLimit bounds the entries kept.
	HistoryLimit int
	// OnIdle runs, besides returning the Go heap's garbage, after a pause
	// at the prompt (see idleTrim).
	OnIdle func()
	// Suggest, if set, is asked for the rest to suggest after line, the
	// text being edited with the cursor at its end, once per change of the
	// line, on the editor's goroutine; it must return quickly, "" for no
	// suggestion. The suggestion is drawn dim after the cursor, and Right
	// or End there inserts it; any other key leaves it.
	Suggest func(line string) string
}

// Editor is the line editor, chzyer/readline over the pump.
type Editor struct {
	rl    *readline.Instance
	term  *Terminal
	pump  *pump
	out   *frameWriter // the terminal, a frame at a time
	view  *lineView    // draws the line, over out
	raw   *rawMode
	hook  func(rune) KeyAction
	width func() // tells readline the terminal's width changed
	// cols is the terminal's width for readline and the view's redraws,
	// read once for each prompt and on SIGWINCH at the prompt rather than
	// at every key or by each user of it (an ioctl each).
	cols atomic.Int64
	// colsFresh says Width read cols for the coming prompt already.
	colsFresh bool
	// leadIn is written at the start of the next prompt's frame (LeadIn).
	leadIn string

	// waits is told when the editor blocks for keys and when they come
	// (the frame writer sends its frame, the idle trim starts).
	waits func(waiting bool)
	// typing says typeLine reads the keys; resized, that the window
	// changed size meanwhile (watchResize wakes its read).
	typing, resized atomic.Bool
	// openKey is the key FinishLine hands readline first, and promptDue
	// says readline has begun a line and is about to draw its prompt:
	// the keys are let through once it has (promptDrawn).
	openKey   []byte
	promptDue atomic.Bool

	mu sync.Mutex
	// preEchoed are the keys preEcho echoed that the filter has not seen
	// yet, in order.
	preEchoed []rune
	pasting   bool     // the pending Enter came from a paste
	edit      lineEdit // what the last editRune stands for
	// lastHistory is the newest line of the history Up walks, for M-.
	lastHistory string
	// lineStart is the undo list a line readline is to finish starts
	// with, set by FinishLine and taken by the input filter at the
	// line's first key (readline's goroutine calls OnChange for the key
	// that ended a line after the line was returned).
	lineStart *undoList

	// The emacs commands' state (emacs.go), kept by readline's goroutine
	// that handles keys (the input filter and OnChange).
	undo     undoList
	kills    killRing
	lastEdit editKind
	prefix   prefixKey // the key before, if the next key completes it
}

// Private-use characters that stand for events inside readline's input
// (no terminal sends them): a paste (the editor returns the line typed so
// far, and ReadLine adds the paste), and a key the editor does itself
// (editRune, which OnChange swaps for the edit once readline inserted it):
// text the key hook inserts, a suggestion taken, Up and Down inside a
// line of several rows, the emacs commands (emacs.go). A Meta key
// readline has no binding for comes as metaRune plus the key (see
// pump.readFrom), which the editor carries out or drops.
const (
	pasteRune = '\ue000'
	editRune  = '\ue001'
	metaRune  = '\uf700'
)

var pasteMarker = []byte(string(pasteRune))

// isMarker reports whether r is one of the editor's markers for a key,
// which readline may hold in its line for a moment.
func isMarker(r rune) bool { return r >= pasteRune && r <= editRune }

// NewEditor starts the line editor on t.
func (t *Terminal) NewEditor(cfg EditorConfig) (*Editor, error) {
	e := &Editor{term: t, pump: t.pump, out: newFrameWriter(t.out), raw: &rawMode{fd: t.fd}, hook: cfg.KeyHook}
	e.out.echoDst = t.echo
	e.cols.Store(int64(t.Width()))
	e.view = newLineView(e.out, e.columns)
	e.view.suggest = cfg.Suggest
	e.view.drew = e.promptDrawn
	trim := newIdleTrim(idleTrimAfter, idleTrimMin, cfg.OnIdle)
	e.waits = func(waiting bool) {
		e.out.readerWaits(waiting)
		trim.waiting(waiting)
	}
	e.pump.mu.Lock()
	e.pump.editorWaits = e.waits
	e.pump.echo = e.preEcho
	e.pump.mu.Unlock()
	rc := &readline.Config{
		Stdin:                  editorReader{e.pump},
		Stdout:                 e.view,
		Stderr:                 e.out,
		Painter:                e.view,
		HistoryLimit:           cfg.HistoryLimit,
		DisableAutoSaveHistory: true, // the caller keeps the history
		// Ctrl-C and Ctrl-D leave no ^C or ^D on the line, as in python3
		// ("\n" is chzyer/readline's spelling of nothing).
		InterruptPrompt:     "\n",
		EOFPrompt:           "\n",
		FuncFilterInputRune: e.filter,
		Listener:            e,
		FuncMakeRaw:         e.raw.enter,
		FuncExitRaw:         e.raw.exit,
		// Not readline's own SIGWINCH handling, which only takes the new
		// width: the line stays as the terminal left it until the next
		// key, and that redraw went up the rows of the line laid out at
		// the new width instead of the rows the terminal has (see
		// lineView). watchResize redraws it at once.
		FuncOnWidthChanged: func(f func()) { e.width = f },
		FuncGetWidth:       e.columns,
		// readline asks whether the process's own descriptors 0 and 1 are
		// a terminal, and draws nothing if not; the editor only ever runs
		// on the terminal it was given.
		ForceUseInteractive: true,
	}
	rl, err := readline.NewEx(rc)
	if err != nil {
		return nil, fmt.Errorf("starting the line editor: %w", err)
	}
	e.rl = rl
	e.watchResize()
	return e, nil
}

// watchResize redraws the line when the window changes size at the
// prompt. (While user code runs SIGWINCH is Python's, and ReadLine takes
// the width again.)
func (e *Editor) watchResize() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, unix.SIGWINCH)
	go func() {
		for range ch {
			e.readWidth()
			if e.typing.Load() {
				e.resized.Store(true)
				e.term.tty.wake()
				continue
			}
			// A redraw only while readline reads keys for a line: its
			// clearing goes up the rows the view drew, and its drawing
			// lays the line out at the new width.
			e.rl.Refresh()
		}
	}()
}

// readWidth reads the terminal's width again, for readline and the view.
func (e *Editor) readWidth() {
	w := int64(e.term.Width())
	if e.cols.Swap(w) != w && e.width != nil {
		e.width()
	}
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

// filter runs on readline's goroutine for every rune typed, before
// readline handles it.
func (e *Editor) filter(r rune) (rune, bool) {
	e.pump.seen.Add(int64(max(utf8.RuneLen(r), 1)))
	echoed := e.takePreEchoed(r)
	e.startLine()
	r, handle := e.translate(r)
	if handle {
		if !echoed {
			e.echoAhead(r)
		}
		e.out.keyStart(false)
	}
	return r, handle
}

// startLine takes the undo list FinishLine left for a new line, at its
// first key, and starts the line's run of commands afresh.
func (e *Editor) startLine() {
	e.mu.Lock()
	start := e.lineStart
	e.lineStart = nil
	e.mu.Unlock()
	if start != nil {
		e.undo = *start
		e.lastEdit, e.prefix = editOther, prefixNone
	}
}

// preEcho echoes a printable key the pump has just read, when the editor
// has handled every key before it (see pump.atRest) and nothing of its
// drawing is held: ahead of readline's goroutines, which take it on
// through a buffered reader, a channel and another goroutine (a third
// of the way from a key to its echo). It echoes as the filter does
// (echoAhead); the filter then knows the key was echoed.
func (e *Editor) preEcho(b byte) {
	if !e.echoAhead(rune(b)) {
		return
	}
	e.mu.Lock()
	e.preEchoed = append(e.preEchoed, rune(b))
	e.mu.Unlock()
}

// takePreEchoed reports whether r, the key the filter has, is one preEcho
// echoed. Keys reach the filter in the order they were read, so it is
// the first one waiting, or none was.
func (e *Editor) takePreEchoed(r rune) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.preEchoed) == 0 {
		return false
	}
	if e.preEchoed[0] != r {
		e.preEchoed = e.preEchoed[:0] // cannot happen; draw the rest normally
		return false
	}
	e.preEchoed = e.preEchoed[1:]
	return true
}

// echoAhead writes a character typed at the end of the line to the
// terminal before readline handles it: readline's redraw after each key
// lays out the whole line again (several passes over it, in its own
// width tables, which on a line of 2,000 characters took most of a key's
// time), and so did the inline suggestion (a call to the interpreter).
// The redraw still runs, and keeps readline's buffer, history and cursor
// as they are for every key; it draws what the echo drew, so the frame
// writer sends nothing for it but the suggestion, drawn a moment after
// the key. Only where the key goes in as it is: not in history search or
// completion (readline draws those itself). It reports whether it wrote.
func (e *Editor) echoAhead(r rune) bool {
	if e.rl.Operation.IsSearchMode() || e.rl.Operation.IsInCompleteMode() {
		return false
	}
	ahead, ok := e.view.echoAhead(r)
	return ok && e.out.echo(ahead, 0)
}

// armEcho says what a wait for the lane's next key is to write before
// that key, if it reads a printable one alone: echoAhead's drawing for it,
// worked out before it comes, so that the thread that waited can echo
// the key as soon as it reads it (ReadAhead).
func (e *Editor) armEcho() (before []byte, fd int, ok bool) {
	plan, ok := e.view.echoPlan()
	if !ok {
		return nil, -1, false
	}
	return e.out.echoPrefix(plan)
}

// echoedAhead records r as echoed by the wait that read it, which wrote
// the first written bytes of armEcho's drawing and r (see echoAhead). It
// reports false where the line must be drawn again.
func (e *Editor) echoedAhead(r rune, written int) bool {
	ahead, ok := e.view.echoAhead(r)
	if !ok {
		e.out.forget()
		return false
	}
	return e.out.echo(ahead, written)
}

// translate is the key map on top of readline's: the paste marker ends
// the line, Ctrl-Z suspends, Ctrl-\ quits, and TAB goes to the key hook.
func (e *Editor) translate(r rune) (rune, bool) {
	if edit, ok := e.emacsCommand(r); ok {
		if edit == nil {
			return 0, false
		}
		return e.marked(edit), true
	}
	switch r {
	case readline.CharCtrlL:
		// readline's own sends the cursor home and leaves the rest to
		// its redraw, which erases only from there.
		e.clearScreen()
		return 0, false // readline draws the line again
	case readline.CharCtrlZ:
		e.suspend()
		return 0, false
	case ctrlBackslash:
		e.quit()
		return 0, false
	case pasteRune:
		e.mu.Lock()
		e.pasting = true
		e.mu.Unlock()
		return readline.CharEnter, true
	case readline.CharPrev, readline.CharNext:
		if to, ok := e.rowMove(r == readline.CharPrev); ok {
			return e.marked(moveEdit(func(line []rune, _ int) int { return min(to, len(line)) })), true
		}
	case readline.CharForward, readline.CharLineEnd:
		if hint := e.view.shownHint(); hint != "" {
			return e.marked(insertEdit([]rune(hint))), true
		}
	case readline.CharTab:
		if e.hook == nil {
			return r, true
		}
		a := e.hook(r)
		switch {
		case a.Insert != "":
			return e.marked(insertEdit([]rune(a.Insert))), true
		case a.Handled:
			return 0, false // readline refreshes the line
		}
	}
	return r, true
}

// OnChange implements readline.Listener, called after readline handled a
// key (and with key 0 before it draws the prompt): the key's output may go
// out, the marker that the filter put in place of a key is swapped for
// what the key does, and the undo list takes the line as it now is.
func (e *Editor) OnChange(line []rune, pos int, key rune) ([]rune, int, bool) {
	if key == 0 {
		e.promptDue.Store(true)
		return nil, 0, false
	}
	e.out.keyDone()
	at := pos - 1 // where readline put a marker: the cursor before the key
	out, to, kind, swapped := e.swapMarker(line, pos, key)
	if swapped {
		line, pos = out, to
	}
	switch {
	case key == readline.CharPrev || key == readline.CharNext:
		e.undo.reset(line, false) // a line from the history starts its own
	case swapped && kind == editCase:
		e.undo.rewrote(line, at, pos, 0)
	case swapped && kind == editTransposeChars:
		e.undo.rewrote(line, pos-2, pos, 1)
	default:
		e.undo.changed(line, pos)
	}
	e.lastEdit = kind
	return out, to, swapped
}

// swapMarker swaps the marker readline inserted for key, if key is one,
// for the edit it stands for.
func (e *Editor) swapMarker(line []rune, pos int, key rune) ([]rune, int, editKind, bool) {
	if key != editRune || pos == 0 || pos > len(line) || line[pos-1] != key {
		return nil, 0, editOther, false
	}
	e.mu.Lock()
	edit := e.edit
	e.mu.Unlock()
	out, to, kind := edit(slices.Concat(line[:pos-1], line[pos:]), pos-1)
	return out, to, kind, true
}

// marked is the marker for a key the editor does itself: edit, which
// OnChange applies where readline inserted the marker.
func (e *Editor) marked(edit lineEdit) rune {
	e.mu.Lock()
	e.edit = edit
	e.mu.Unlock()
	return editRune
}

// rowMove is where Up (or Down) puts the cursor in a line of several
// rows: the same place on the row above (below), or its end if shorter.
// ok is false on the first (last) row, where the key walks the history.
func (e *Editor) rowMove(up bool) (to int, ok bool) {
	line, pos := e.view.current()
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

// SetPrompt changes the prompt of the line being read (from the key hook).
func (e *Editor) SetPrompt(prompt string) {
	e.view.setPrompt(prompt)
	e.rl.SetPrompt(prompt)
}

// SetHistory replaces the history that Up and Down walk.
func (e *Editor) SetHistory(lines []string) {
	e.rl.ResetHistory()
	for _, l := range lines {
		e.rl.SaveHistory(l)
	}
	e.mu.Lock()
	e.lastHistory = ""
	if len(lines) > 0 {
		e.lastHistory = lines[len(lines)-1]
	}
	e.mu.Unlock()
}

// AddHistory adds a line to the history that Up and Down walk.
func (e *Editor) AddHistory(line string) {
	e.rl.SaveHistory(line)
	e.mu.Lock()
	e.lastHistory = line
	e.mu.Unlock()
}

// ReadLine shows prompt, with initial already in the line, and returns what
// the user did.
func (e *Editor) ReadLine(prompt, initial string) (Event, error) {
	ev, rest, err := e.StartLine(prompt, initial, nil)
	if err != nil || rest == nil {
		return ev, err
	}
	return e.FinishLine(rest)
}

// Unfinished is a line StartLine left to FinishLine.
type Unfinished struct {
	prompt, initial string
	key             []byte    // the key that ended the typing lane, or nil
	undo            *undoList // the lane's changes to initial, or nil
}

// StartLine is ReadLine up to the first key that the typing lane does not
// take (see typeLine): a line typed from its end and entered comes back
// whole, with rest nil. Otherwise FinishLine(rest) reads the rest of it
// with readline, on a goroutine that may wait for other goroutines (key
// hooks, completion): StartLine's caller need not. The lane waits for
// keys through await, if set.
func (e *Editor) StartLine(prompt, initial string, await Await) (ev Event, rest *Unfinished, err error) {
	// While user code ran, SIGWINCH was not pyaichat's: the window may
	// have changed size unseen.
	if !e.colsFresh {
		e.readWidth()
	}
	e.colsFresh = false
	e.mu.Lock()
	e.preEchoed = e.preEchoed[:0]
	e.mu.Unlock()
	lane := e.columns() > 0 && e.pump.idle()
	e.out.promptStart(lane)
	e.view.reset() // the prompt starts a row of its own
	e.SetPrompt(prompt)
	// Straight to the terminal: readline's own writer redraws the prompt.
	io.WriteString(e.out, e.leadIn+bracketedPasteOn)
	e.leadIn = ""

	// Raw before readline draws the prompt (ReadlineWithDefault draws it
	// before readline itself switches modes), in the terminal's foreground
	// if a child that took it has ended.
	reclaimForeground(e.raw.fd)
	if err := e.raw.enter(); err != nil {
		return Event{}, nil, fmt.Errorf("terminal: %w", err)
	}
	rest = &Unfinished{prompt: prompt, initial: initial}
	if lane {
		t, err := e.typeLine(initial, await)
		if err != nil {
			return Event{}, nil, e.leave("", err)
		}
		if t.done {
			e.view.ended()
			return Event{Kind: EventLine, Text: string(t.line)}, nil, e.leave("\n", nil)
		}
		// readline goes on from the line as typed, drawing what is
		// drawn already: its frame holds until it waits for a key.
		rest.initial, rest.key, rest.undo = string(t.line), t.key, t.undo
		e.out.promptStart(false)
	}
	return Event{}, rest, nil
}

// FinishLine reads the rest of the line StartLine began, with readline.
func (e *Editor) FinishLine(u *Unfinished) (Event, error) {
	prompt, initial, key := u.prompt, u.initial, u.key
	// The initial text goes in before keys may arrive, or keys typed
	// ahead would be overwritten by it. (Setting it redraws the line, which
	// is wasted on an empty one.)
	if initial != "" {
		e.rl.Operation.SetBuffer(initial)
	}
	start := u.undo
	if start == nil {
		start = new(undoList)
		start.reset([]rune(initial), true)
	}
	e.mu.Lock()
	e.lineStart = start
	e.mu.Unlock()
	e.openKey = key
	line, err := e.rl.Readline()
	e.pump.setEditor(false)
	e.leave("", nil)
	e.mu.Lock()
	pasting := e.pasting
	e.pasting = false
	e.mu.Unlock()

	switch {
	case pasting:
		// The editor ended the line it showed; clear it, since the caller
		// shows the text again with the paste in it.
		io.WriteString(e.out, eraseLines(rows(prompt+line, e.columns())))
		paste, _ := e.pump.takePaste()
		return Event{Kind: EventPaste, Text: line + paste, Paste: paste}, nil
	case errors.Is(err, readline.ErrInterrupt):
		return Event{Kind: EventInterrupt, Text: line}, nil
	case errors.Is(err, io.EOF):
		return Event{Kind: EventEOF}, nil
	case err != nil:
		return Event{}, err
	}
	return Event{Kind: EventLine, Text: line}, nil
}

// promptDrawn is called after the line view wrote a drawing of the line.
// The first one after readline began a line is its prompt, and the keys
// for the line are let through only then. readline's goroutine that reads
// keys does not always wait for a line to begin: after a key the filter
// drops (a TAB the key hook handled) or a paste, it reads ahead. Keys
// typed ahead that reached it were then taken into the line, Enter
// included, before readline drew its prompt, and that prompt, drawn
// last, erased the line that ran.
func (e *Editor) promptDrawn() {
	if e.promptDue.CompareAndSwap(true, false) {
		e.pump.open(e.openKey)
	}
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

// CtrlC hands the editor a Ctrl-C that came as a signal while no prompt
// was up (see pump.ctrlCBetweenPrompts).
func (e *Editor) CtrlC() { e.pump.ctrlCBetweenPrompts() }

const (
	bracketedPasteOn  = "\x1b[?2004h"
	bracketedPasteOff = "\x1b[?2004l"
)

// rows is how many terminal rows text takes at the given width.
func rows(text string, width int) int {
	if width <= 0 {
		return 1
	}
	var at cell
	for _, r := range text {
		if r == '\n' {
			// The next row starts with the continuation prompt.
			at = cell{at.row + 1, 0}
			for _, c := range ContinuationPrompt {
				at = at.put(c, width)
			}
			continue
		}
		if r == '\t' {
			// Drawn as spaces, which wrap one by one.
			for range readline.TabWidth {
				at = at.put(' ', width)
			}
			continue
		}
		at = at.put(r, width)
	}
	return at.row + 1
}

// eraseLines moves up n rows from the start of the line below them and
// clears from there down.
func eraseLines(n int) string {
	return fmt.Sprintf("\x1b[%dA\r\x1b[J", n)
}

// suspend is Ctrl-Z at the prompt, done as the terminal's own Ctrl-Z would
// do it (the line editor keeps ISIG off): SIGTSTP to pyaichat's process
// group, with the terminal in the mode it had before. readline's own
// handling also signals the parent process (stopping whatever started
// pyaichat, if it does not ignore SIGTSTP) and waits for a SIGCONT that never
// comes when the kernel discards the stop, as it does in a process group
// with no shell to continue it (pyaichat as a session leader). Then, as
// python3 does there, Ctrl-Z does nothing.
func (e *Editor) suspend() {
	e.raw.exit()
	io.WriteString(e.out, "\r\n")
	e.out.flush()
	e.view.reset()
	// Returns once pyaichat is continued (fg), or at once when discarded.
	unix.Kill(0, unix.SIGTSTP)
	e.raw.enter()
	e.rl.Refresh()
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
