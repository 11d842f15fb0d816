package repl

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/chzyer/readline"
	"github.com/chzyer/readline/runes"
	"golang.org/x/sys/unix"
)

// eventKind says what ended one read of the prompt.
type eventKind int

const (
	evLine      eventKind = iota // a line was entered
	evPaste                      // text was pasted (bracketed paste)
	evInterrupt                  // Ctrl-C at the prompt
	evEOF                        // Ctrl-D on an empty line, or input ended
)

type event struct {
	kind eventKind
	text string // the line, or the text typed before the paste plus the paste
	// pasteOnly is the pasted text alone (evPaste), for echoing it.
	pasteOnly string
}

// lineReader is where the REPL gets its input: a line editor on a terminal,
// or plain lines from a pipe or a dumb terminal.
type lineReader interface {
	// read shows prompt (with initial text already in the line) and
	// returns what the user did. mode may change during the read (TAB).
	read(initial string) (event, error)
	// close restores the terminal.
	close()
}

// editor is the terminal line editor: chzyer/readline over the pump.
type editor struct {
	rl    *readline.Instance
	pump  *pump
	state *modeState
	hist  *histories
	out   *frameWriter // the terminal, a frame at a time
	raw   *rawMode

	mu      sync.Mutex
	pasting bool // the pending Enter came from a paste

	// widthChanged tells readline to read the terminal's width again.
	widthChanged func()
}

// modeState is shared by the REPL loop and the editor's key filter, which
// runs on readline's goroutine.
type modeState struct {
	mu           sync.Mutex
	mode         Mode
	continuation bool // a py> statement is incomplete
	lead         string
	onToggle     func(Mode) // called by set when the mode changes
}

func (s *modeState) get() (Mode, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode, s.continuation
}

// set switches mode and tells onToggle, if set.
func (s *modeState) set(m Mode) {
	s.mu.Lock()
	changed := s.mode != m
	s.mode = m
	onToggle := s.onToggle
	s.mu.Unlock()
	if changed && onToggle != nil {
		onToggle(m)
	}
}

func (s *modeState) setContinuation(c bool) {
	s.mu.Lock()
	s.continuation = c
	s.mu.Unlock()
}

// prompt is the prompt to draw, after any text that output left on the
// line (see setLead).
func (s *modeState) prompt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lead + promptFor(s.mode, s.continuation)
}

// setLead records what the last output left on the terminal's current line.
// The line editor redraws its whole line, so the prompt must carry that
// text to leave it in place, as python3's prompt simply follows it.
func (s *modeState) setLead(lead string) {
	s.mu.Lock()
	s.lead = lead
	s.mu.Unlock()
}

func promptFor(m Mode, cont bool) string {
	if cont {
		return "... "
	}
	if m == ModeAI {
		return "ai> "
	}
	return "py> "
}

const indentUnit = "    "

// indentRune stands for a TAB typed inside a block until the listener
// replaces it with indentUnit (private use; no terminal sends it).
const indentRune = '\ue001'

func newEditor(p *pump, st *modeState, hist *histories, stdout io.Writer, fd int) (*editor, error) {
	e := &editor{pump: p, state: st, hist: hist, out: newFrameWriter(stdout), raw: &rawMode{fd: fd}}
	trim := newIdleTrim(idleTrimAfter, idleTrimMin)
	p.mu.Lock()
	p.editorWaits = func(waiting bool) {
		e.out.readerWaits(waiting)
		trim.waiting(waiting)
	}
	p.mu.Unlock()
	cfg := &readline.Config{
		Prompt:                 st.prompt(),
		Stdin:                  editorReader{p},
		Stdout:                 e.out,
		Stderr:                 e.out,
		HistoryLimit:           historyLimit,
		DisableAutoSaveHistory: true, // per-mode history is ours
		InterruptPrompt:        "^C",
		FuncFilterInputRune:    e.filter,
		Listener:               e,
		FuncMakeRaw:            e.raw.enter,
		FuncExitRaw:            e.raw.exit,
		FuncOnWidthChanged: func(f func()) {
			e.widthChanged = f
			readline.DefaultOnWidthChanged(f) // on SIGWINCH at the prompt
		},
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting the line editor: %w", err)
	}
	e.rl = rl
	e.loadHistory()
	return e, nil
}

// filter runs on readline's goroutine for every rune typed, before
// readline handles it.
func (e *editor) filter(r rune) (rune, bool) {
	r, handle := e.translate(r)
	if handle {
		e.out.keyStart()
	}
	return r, handle
}

// translate is the key map on top of readline's: the paste marker ends
// the line, TAB switches modes or indents.
func (e *editor) translate(r rune) (rune, bool) {
	switch r {
	case readline.CharCtrlZ:
		e.suspend()
		return 0, false
	case pasteRune:
		e.mu.Lock()
		e.pasting = true
		e.mu.Unlock()
		return readline.CharEnter, true
	case readline.CharTab:
		mode, cont := e.state.get()
		if cont {
			// Inside an incomplete py> block TAB indents, as in python3;
			// switching to ai> there would strand the block. The listener
			// below swaps this marker for the indentation.
			return indentRune, true
		}
		next := ModeAI
		if mode == ModeAI {
			next = ModePy
		}
		e.state.set(next)
		e.rl.SetPrompt(e.state.prompt())
		e.loadHistory()
		return 0, false // readline refreshes the line with the new prompt
	}
	return r, true
}

// OnChange implements readline.Listener, called after readline handled a
// key (and with key 0 before it draws the prompt): the key's output may go
// out, and the indent marker that the filter put in place of a TAB typed
// inside a block is expanded.
func (e *editor) OnChange(line []rune, pos int, key rune) ([]rune, int, bool) {
	if key != 0 {
		e.out.keyDone()
	}
	if key != indentRune || pos == 0 || pos > len(line) || line[pos-1] != indentRune {
		return nil, 0, false
	}
	out := make([]rune, 0, len(line)+len(indentUnit))
	out = append(out, line[:pos-1]...)
	out = append(out, []rune(indentUnit)...)
	out = append(out, line[pos:]...)
	return out, pos - 1 + len(indentUnit), true
}

// loadHistory gives readline the history of the current mode.
func (e *editor) loadHistory() {
	mode, _ := e.state.get()
	e.rl.ResetHistory()
	for _, h := range e.hist.of(mode).entries {
		e.rl.SaveHistory(h)
	}
}

func (e *editor) read(initial string) (event, error) {
	// While user code ran, SIGWINCH was Python's: the window may have
	// changed size unseen.
	if e.widthChanged != nil {
		e.widthChanged()
	}
	prompt := e.state.prompt()
	e.out.promptStart()
	e.rl.SetPrompt(prompt)
	// Straight to the terminal: readline's own writer redraws the prompt.
	io.WriteString(e.out, bracketedPasteOn)

	// Raw before readline draws the prompt (ReadlineWithDefault draws it
	// before readline itself switches modes), in the terminal's foreground
	// if a child that took it has ended.
	reclaimForeground(e.raw.fd)
	if err := e.raw.enter(); err != nil {
		return event{}, fmt.Errorf("terminal: %w", err)
	}
	// The initial text goes in before keys may arrive, or keys typed
	// ahead would be overwritten by it. (Setting it redraws the line, which
	// is wasted on an empty one.)
	if initial != "" {
		e.rl.Operation.SetBuffer(initial)
	}
	e.pump.setEditor(true)
	line, err := e.rl.Readline()
	// Paste mode goes off with the editor's last frame, in one write.
	io.WriteString(e.out, bracketedPasteOff)
	e.out.flush()
	e.pump.setEditor(false)
	e.raw.exit()
	e.mu.Lock()
	pasting := e.pasting
	e.pasting = false
	e.mu.Unlock()

	switch {
	case pasting:
		// The editor ended the line it showed; clear it, since the REPL
		// shows the text again with the paste in it.
		io.WriteString(e.out, eraseLines(rows(prompt+line, readline.GetScreenWidth())))
		paste, _ := e.pump.takePaste()
		return event{kind: evPaste, text: line + paste, pasteOnly: paste}, nil
	case errors.Is(err, readline.ErrInterrupt):
		return event{kind: evInterrupt}, nil
	case errors.Is(err, io.EOF):
		return event{kind: evEOF}, nil
	case err != nil:
		return event{}, err
	}
	return event{kind: evLine, text: line}, nil
}

func (e *editor) close() {
	// readline's Close hangs while its reader goroutine is blocked; the
	// terminal state is restored by the REPL's saved termios instead.
}

const (
	bracketedPasteOn  = "\x1b[?2004h"
	bracketedPasteOff = "\x1b[?2004l"
)

// rows is how many terminal rows text takes at the given width.
func rows(text string, width int) int {
	w := runes.WidthAll([]rune(text))
	if width <= 0 || w == 0 {
		return 1
	}
	return (w + width - 1) / width
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
func (e *editor) suspend() {
	e.raw.exit()
	io.WriteString(e.out, "\r\n")
	e.out.flush()
	// Returns once pyaichat is continued (fg), or at once when discarded.
	unix.Kill(0, unix.SIGTSTP)
	e.raw.enter()
	e.rl.Refresh()
}
