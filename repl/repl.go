// Package repl is pyaichat's loop: it reads lines (with the line editor of
// repl/term on a terminal, plain lines from a pipe), keeps the py>/ai>
// mode, the prompts and the per-mode history, sends py> input to the
// interpreter and ai> input to the assistant, and decides what Ctrl-C
// means. It knows the interpreter and the assistant only through the
// small interfaces below.
package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pyaichat/pyaichat/repl/highlight"
	"github.com/pyaichat/pyaichat/repl/interp"
	"github.com/pyaichat/pyaichat/repl/prompt"
	"github.com/pyaichat/pyaichat/repl/term"
)

// Interpreter runs what is typed at py>, as python3 -i would.
type Interpreter interface {
	// Push feeds one line typed at the prompt.
	Push(line string) (interp.Outcome, error)
	// PushEOF finishes a pending statement at the end of input.
	PushEOF() (interp.Outcome, error)
	// RunBlock runs a pasted block, statement by statement.
	RunBlock(source string) (interp.Outcome, error)
	// ResetBlock drops a pending statement.
	ResetBlock() error
	// Interrupt raises KeyboardInterrupt in running code, for a Ctrl-C
	// that did not reach it as a signal.
	Interrupt()
	// Busy reports whether user code is running.
	Busy() bool
	// Stuck reports whether the last Ctrl-C has gone unanswered for
	// longer than grace: the code is inside C code that ignores signals.
	Stuck(grace time.Duration) bool
	// Interrupts has a value for each Ctrl-C that reached running code.
	Interrupts() <-chan struct{}
	// SignalErrors has a value when a signal handler that ran while no
	// code did (at the prompt) raised; ShowSignalError then shows it as
	// python3's prompt does, and its Outcome says whether to exit
	// (SystemExit).
	SignalErrors() <-chan struct{}
	ShowSignalError() (interp.Outcome, error)
	// SIGINT says what the user's code set SIGINT to do; DieBySIGINT
	// ends the process by it (SIG_DFL).
	SIGINT() interp.SIGINTAction
	DieBySIGINT()
	// SIGINTToUser says whose a SIGINT at the prompt is: the user
	// code's, done as it set SIGINT to do (py>), or pyaichat's (ai>, or
	// an answer under way). An ignored one is dropped as it arrives.
	SIGINTToUser(user bool)
	// RunSIGINTHandler runs the user's SIGINT handler for a Ctrl-C at
	// the prompt; false when it raised KeyboardInterrupt (the default).
	RunSIGINTHandler() bool
}

// Assistant answers what is typed at ai>.
type Assistant interface {
	// Handle answers one line (a question or a /command), writing to out.
	// Cancelling ctx (Ctrl-C) must stop it promptly, and Handle shows the
	// Ctrl-C itself, in order with what it was showing (the terminal does
	// not echo while a line is answered): the REPL draws nothing for it.
	Handle(ctx context.Context, line string, out io.Writer) error
	// Prepare readies what answering needs, while a question is typed.
	Prepare()
	// Release lets that go again, back at py>.
	Release()
}

// Options configure the REPL.
type Options struct {
	// Term is the terminal when standard input and output are one; nil
	// means lines come from Pipe.
	Term *term.Terminal
	Pipe *Pipe
	// Dumb says the terminal cannot be driven (TERM=dumb): lines are read
	// as the kernel edits them.
	Dumb bool

	Stdout, Stderr io.Writer

	Interp Interpreter
	// Assistant answers ai>; nil means ai> is unavailable (for the reason
	// given at start).
	Assistant Assistant
	// HistoryDir keeps the history of each mode; "" keeps none.
	HistoryDir string
	// SaveAI, if set, is what an ai> line becomes in its history file (a
	// key the user typed is kept no more there than in the session log);
	// the line recalled in this session is the line as typed.
	SaveAI func(string) string
	// OnIdle runs after a pause at the prompt (see term.EditorConfig).
	OnIdle func()
	// Complete, if set, suggests at py> the rest of the name being typed
	// (see suggest.go): path is the dotted names before it ("os.pa":
	// ["os"]), prefix its start ("pa"); it returns the rest ("th"), or ""
	// for none. It must run no user code and return quickly, with "" when
	// the interpreter is busy.
	Complete func(path []string, prefix string) string
	// Candidates, if set, lists every name Complete could complete
	// prefix to, for TAB's list; the same rules hold.
	Candidates func(path []string, prefix string) []string
	// Arguments, if set, lists the keyword arguments ("name=") of the
	// function a dotted path names that start with prefix, for TAB in a
	// call; the same rules hold as for Complete.
	Arguments func(callee []string, prefix string) []string
	// MoreLines, if set, says whether the py> source typed so far is a
	// statement not yet complete, to which Enter adds a line: the block
	// is then edited whole, and runs whole.
	MoreLines func(source string) bool
	// AutoIndent indents the lines added to a block (see indent).
	AutoIndent bool
	// Highlight colours Python as it is typed at py>.
	Highlight bool
	// ViMode edits lines in vi mode (see term.EditorConfig.ViMode).
	ViMode bool
	// TabToggles makes TAB switch modes everywhere outside a block, as
	// Shift-TAB does, never completing.
	TabToggles bool
	// OnInput, when set, is told of each py> input once it has run: its
	// whole source (a block typed line by line is one input) and how it
	// ended; with a line editor, once the next prompt shows (or the next
	// input comes, or the loop ends). The session log records it.
	OnInput func(source string, o interp.Outcome)
	// Commands are the slash commands besides the REPL's own (/help,
	// /exit, /quit): see Command.
	Commands []Command
	// Host, when set, runs fn on the interpreter's thread, where each py>
	// line typed from its end is then read, run, and followed by the next
	// prompt without a hand-off between threads (pybridge.Interp.Host).
	// CanHost says whether Host may take the next prompt; Await is the
	// line editor's wait for keys there.
	Host    func(fn func()) error
	CanHost func() bool
	Await   term.Await
}

// Loop is one run of the REPL.
type Loop struct {
	opts   Options
	state  *modeState
	read   func(initial string) (term.Event, error) // the next input
	editor *term.Editor                             // nil without a line editor
	plain  *plainReader                             // nil with one
	hist   *histories
	// toPy is code a command handed to py> (Action.ToPy), for the next
	// prompt's line editor.
	toPy string
	// block is the py> block typed so far, for OnInput.
	block []string
	// unlogged tells OnInput of the py> input that ran last, where the
	// line editor has not waited for keys since (see inputDone).
	unlogged func()

	// Ctrl-C bookkeeping.
	aiCancel   atomic.Pointer[context.CancelFunc]
	stuckSince atomic.Int64 // unix nanos of a Ctrl-C that found Python stuck
	abandoned  chan struct{}
	abandon    sync.Once

	// A signal handler's exception to show (see onSignalError):
	// atPrompt ends the prompt's line as Ctrl-C does, after which the
	// loop shows it; deferred waits for the loop's next turn (an answer
	// was on its way).
	signalAtPrompt atomic.Bool
	signalDeferred atomic.Bool
	// exited carries the status of a SystemExit raised by a signal
	// handler while the loop waited on a pipe.
	exited chan int
}

// New prepares a REPL session; the line editor starts with Run.
func New(o Options) (*Loop, error) {
	r := &Loop{opts: o, state: &modeState{}, abandoned: make(chan struct{}), exited: make(chan int, 1)}
	switch {
	case o.Term != nil && !o.Dumb:
		// next reads with the line editor.
	case o.Term != nil:
		r.plain = &plainReader{lines: o.Term.ReadLine, dumb: true, prompts: o.Stdout, state: r.state}
		r.read = r.plain.read
	case o.Pipe != nil:
		r.plain = &plainReader{lines: o.Pipe.line, prompts: o.Stderr, state: r.state}
		r.read = r.plain.read
	default:
		return nil, errors.New("repl: no terminal and no pipe to read")
	}
	if o.Assistant != nil {
		r.SetAssistant(o.Assistant)
	}
	return r, nil
}

// SetAssistant gives ai> its assistant, before Run.
func (r *Loop) SetAssistant(a Assistant) {
	r.opts.Assistant = a
	r.state.onToggle = r.modeChanged
}

// SetComplete gives py> its inline suggestions and TAB's lists
// (Options.Complete, Options.Candidates, Options.Arguments), before Run.
func (r *Loop) SetComplete(complete func(path []string, prefix string) string, candidates, arguments func(path []string, prefix string) []string) {
	r.opts.Complete, r.opts.Candidates, r.opts.Arguments = complete, candidates, arguments
}

// startEditor starts the line editor, with the history of py>.
func (r *Loop) startEditor() error {
	r.hist = loadHistories(r.opts.HistoryDir, r.warn, r.opts.SaveAI)
	cfg := term.EditorConfig{KeyHook: r.onTab, HistoryLimit: historyLimit, OnIdle: r.opts.OnIdle, OnWait: r.tellInput, ViMode: r.opts.ViMode}
	if r.opts.AutoIndent {
		cfg.Indent = indent
	}
	if r.opts.MoreLines != nil {
		cfg.MoreLines = r.moreLines
	}
	if r.opts.Highlight {
		cfg.Highlight = r.highlight
	}
	if r.opts.Complete != nil {
		cfg.Suggest = r.suggest
	}
	ed, err := r.opts.Term.NewEditor(cfg)
	if err != nil {
		return err
	}
	r.editor = ed
	ed.SetHistory(r.hist.of(ModePy).entries)
	return nil
}

func (r *Loop) warn(msg string) {
	fmt.Fprintf(r.opts.Stderr, "pyaichat: %s\n", msg)
}

// Run runs the REPL until the user exits, and returns the exit status.
// abandoned says that the user gave up on a Python stuck in C code: the
// interpreter is still running the code and must not be waited for.
func (r *Loop) Run() (status int, abandoned bool) {
	if r.opts.Term != nil && !r.opts.Dumb {
		if err := r.startEditor(); err != nil {
			r.warn(err.Error())
			return 1, false
		}
	}
	stop := r.handleSignals()
	defer stop()
	r.tellSIGINTOwner()
	done := make(chan int, 1)
	go func() { done <- r.loop() }()
	select {
	case status = <-done:
		return status, false
	case status = <-r.exited:
		return status, false
	case <-r.abandoned:
		return 130, true
	}
}

// pending is what the loop carries from one input to the next: the text
// the next prompt starts with, and pasted lines awaiting their unfinished
// last line.
type pending struct {
	initial string
	paste   string
}

// loop reads and runs input until exit.
func (r *Loop) loop() int {
	defer r.tellInput()
	var p pending
	for {
		if r.toPy != "" {
			p.initial, r.toPy = r.toPy, ""
		}
		if status, exit := r.deferredSignalError(); exit {
			return status
		}
		ev, status, exit, err := r.next(p.initial, &p.paste)
		p.initial = ""
		switch {
		case err != nil:
			r.warn(fmt.Sprintf("reading input: %v", err))
			return 1
		case exit:
			return status
		}
		if status, exit := r.handle(ev, &p); exit {
			return status
		}
	}
}

// handle acts on one input: a line, a paste, Ctrl-C or the end of input.
func (r *Loop) handle(ev term.Event, p *pending) (status int, exit bool) {
	mode, cont := r.state.get()
	switch ev.Kind {
	case term.EventEOF:
		return r.endOfInput(cont && p.paste == "")
	case term.EventInterrupt:
		if r.keyKeepsLine(mode, cont) {
			p.initial = ev.Text // as if the key had not been pressed
			return 0, false
		}
		p.paste = ""
		return r.interrupted(mode, cont)
	case term.EventPaste:
		return r.paste(mode, cont, ev.Text, p)
	case term.EventLine:
		return r.line(mode, cont, ev.Text, &p.paste)
	}
	return 0, false
}

// paste runs a pasted block, or keeps it while its last line is unfinished.
func (r *Loop) paste(mode Mode, cont bool, text string, p *pending) (status int, exit bool) {
	if !strings.Contains(text, "\n") {
		// A one-line paste is edited like typed text.
		p.initial = text
		return 0, false
	}
	r.echoPaste(mode, cont, text)
	if !strings.HasSuffix(text, "\n") {
		// Its last line is unfinished: let the user finish it (the whole
		// goes into history then).
		i := strings.LastIndexByte(text, '\n')
		p.paste, p.initial = text[:i+1], text[i+1:]
		r.state.setContinuation(true)
		return 0, false
	}
	if mode == ModePy && !cont {
		// One history entry, recalled whole by Up.
		r.addHistory(mode, strings.TrimSuffix(text, "\n"))
	}
	return r.submit(mode, cont, text, true)
}

// keyKeepsLine says whether Ctrl-C at py> leaves the line as it was, as
// python3's prompt does with what the user's code set SIGINT to do: it is
// ignored (SIG_IGN), or the user's handler ran and did not raise
// KeyboardInterrupt. An exception of another kind from the handler comes
// back through SignalErrors and ends the line, as in python3.
func (r *Loop) keyKeepsLine(mode Mode, cont bool) bool {
	if r.signalAtPrompt.Load() || (mode != ModePy && !cont) {
		return false
	}
	switch r.pySIGINT() {
	case interp.SIGINTIgnored:
		return true
	case interp.SIGINTRaises:
		return r.opts.Interp.RunSIGINTHandler()
	}
	return false
}

// interrupted is Ctrl-C at the prompt (or a signal handler's exception,
// which ends the line as Ctrl-C does). The partial line is discarded,
// never run, as in python3, which says KeyboardInterrupt (a question just
// goes), or shows what the handler raised; or, if the user's code set
// SIGINT to kill, the process dies by it.
func (r *Loop) interrupted(mode Mode, cont bool) (status int, exit bool) {
	if r.signalAtPrompt.Swap(false) {
		if status, exit := r.showSignalError(); exit {
			return status, true
		}
	} else if mode == ModePy || cont {
		if r.pySIGINT() == interp.SIGINTKills {
			r.dieBySIGINT()
		}
		fmt.Fprintln(r.opts.Stdout, "KeyboardInterrupt")
	}
	r.block = r.block[:0]
	if cont {
		r.opts.Interp.ResetBlock()
		r.state.setContinuation(false)
	}
	return 0, false
}

// line runs a line entered at the prompt, after the pasted lines it
// finishes if there are any.
func (r *Loop) line(mode Mode, cont bool, text string, pendingPaste *string) (status int, exit bool) {
	if *pendingPaste != "" {
		text = *pendingPaste + text + "\n"
		*pendingPaste = ""
		r.state.setContinuation(false)
		r.addHistory(mode, strings.TrimSuffix(text, "\n"))
		return r.submit(mode, false, text, true)
	}
	r.addHistory(mode, strings.TrimSuffix(text, "\n"))
	// A line of several rows (a block typed whole, from history, or the
	// assistant's code) runs as a pasted block runs; the editor showed it.
	block := mode == ModePy && strings.Contains(text, "\n")
	if block {
		text += "\n"
	}
	return r.submit(mode, cont, text, block)
}

// endOfInput is Ctrl-D at an empty prompt, or the end of a pipe: the end,
// but for a pending block, which it finishes, as python3 does, running it
// (or reporting it unfinished) before the next prompt.
func (r *Loop) endOfInput(pendingBlock bool) (status int, exit bool) {
	if r.plain != nil {
		io.WriteString(r.plain.prompts, "\n") // as python3 -i does at EOF
	}
	if !pendingBlock {
		return 0, true
	}
	r.state.setContinuation(false)
	out, err := r.opts.Interp.PushEOF()
	if err != nil {
		r.warn(err.Error())
		return 0, false
	}
	r.inputDone("", out)
	return out.Status, out.Exit
}

// next reads the next input. With the line editor, a py> line runs at
// once, and next goes on to the line after it; status and exit say that
// one ended the session. Those lines are read and run on the
// interpreter's thread when Options.Host is set; anything else (ai>, a
// paste, Ctrl-C, Ctrl-D) is back on the loop's goroutine.
func (r *Loop) next(initial string, pendingPaste *string) (term.Event, int, bool, error) {
	if r.editor == nil {
		ev, err := r.read(initial)
		return ev, 0, false, err
	}
	rd := &reading{r: r, initial: initial, paste: pendingPaste}
	for !rd.done {
		if r.canHost() {
			herr := r.opts.Host(func() {
				for rd.one(r.opts.Await) && r.canHost() {
				}
			})
			if herr == nil || rd.done {
				continue
			}
		}
		for rd.one(nil) && !r.canHost() {
		}
	}
	return rd.ev, rd.status, rd.exit, rd.err
}

// reading is one call of next: what it read last, and whether it ended.
type reading struct {
	r       *Loop
	initial string
	paste   *string
	ev      term.Event
	err     error
	status  int
	exit    bool
	done    bool
}

// one reads an input and runs it if it is a py> line; it reports whether
// next reads on.
func (rd *reading) one(await term.Await) bool {
	r := rd.r
	rd.ev, rd.err = r.editor.ReadLine(r.state.prompt(), rd.initial, await)
	rd.initial = ""
	mode, cont := r.state.get()
	if rd.err != nil || rd.ev.Kind != term.EventLine || mode != ModePy || *rd.paste != "" {
		rd.done = true
		return false
	}
	rd.status, rd.exit = r.line(mode, cont, rd.ev.Text, rd.paste)
	rd.done = rd.exit
	return !rd.exit
}

// canHost says whether the next prompt may be read on the interpreter's
// thread (Options.Host).
func (r *Loop) canHost() bool {
	return r.opts.Host != nil && (r.opts.CanHost == nil || r.opts.CanHost())
}

// onTab is the line editor's key hook. At py>, TAB after a name or an
// attribute being typed completes it (see complete.go), and inside a
// block it indents, as in python3, where switching to ai> would strand
// the block. Anywhere else, and always with Shift-TAB (or with
// Options.TabToggles), it switches modes, keeping what was typed.
func (r *Loop) onTab(key rune, line []rune, pos int) term.KeyAction {
	mode, cont := r.state.get()
	block := cont || slices.Contains(line, '\n')
	switch {
	case key == term.KeyShiftTab:
	case r.opts.TabToggles && block:
		return term.KeyAction{Insert: indentUnit}
	case r.opts.TabToggles:
	case mode == ModePy:
		if a, ok := r.completion(string(line[:pos])); ok {
			return a
		}
		if block {
			return term.KeyAction{Insert: indentUnit}
		}
	}
	mode = r.state.toggle()
	r.editor.SetPrompt(r.state.prompt())
	r.editor.SetHistory(r.hist.of(mode).entries)
	return term.KeyAction{Handled: true}
}

// highlight is the line editor's Highlight: Python's colours at py>.
func (r *Loop) highlight(line []rune) []term.Span {
	if mode, _ := r.state.get(); mode != ModePy {
		return nil
	}
	found := highlight.Python(line)
	spans := make([]term.Span, len(found))
	for i, sp := range found {
		spans[i] = term.Span(sp) // the same fields: repl/term knows no Python
	}
	return spans
}

// moreLines is the line editor's MoreLines: at py>, outside a pending
// statement, whether Enter adds a line to the block typed so far.
func (r *Loop) moreLines(text string) bool {
	mode, cont := r.state.get()
	return mode == ModePy && !cont && r.opts.MoreLines(text)
}

// switchTo changes the mode as TAB does, from the loop.
func (r *Loop) switchTo(m Mode) {
	if cur, _ := r.state.get(); cur == m {
		return
	}
	r.state.set(m)
	if r.editor != nil {
		r.editor.SetPrompt(r.state.prompt())
		r.editor.SetHistory(r.hist.of(m).entries)
	}
}

func (r *Loop) addHistory(m Mode, line string) {
	if r.hist == nil {
		return
	}
	r.hist.add(m, line)
	if r.editor != nil {
		r.editor.AddHistory(line)
	}
}

// echoPaste shows a multi-line paste the way it will run: the first line
// after the prompt, the rest after continuation prompts.
func (r *Loop) echoPaste(mode Mode, cont bool, pasted string) {
	if r.opts.Term == nil {
		return
	}
	// An unfinished last line is left to the editor, which shows it.
	text := pasted[:strings.LastIndexByte(pasted, '\n')]
	lines := strings.Split(text, "\n")
	var b strings.Builder
	for i, l := range lines {
		if i == 0 {
			b.WriteString(promptFor(mode, cont))
		} else {
			b.WriteString(prompt.Continuation)
		}
		b.WriteString(l)
		b.WriteString("\n")
	}
	io.WriteString(r.opts.Stdout, b.String())
}

// submit runs one line (or a pasted block) in the current mode.
func (r *Loop) submit(mode Mode, cont bool, text string, block bool) (status int, exit bool) {
	r.tellInput()
	if mode == ModeAI && !cont {
		line := strings.TrimSpace(text)
		if leaves[line] {
			return 0, true // as exit() at py>
		}
		if c, arg, ok := r.command(line); ok {
			return 0, r.runCommand(c, arg)
		}
		r.ask(line)
		return 0, false
	}
	if !cont && !block {
		if handled, exit := r.pyCommand(text); handled {
			return 0, exit
		}
	}
	in := r.opts.Interp
	var out interp.Outcome
	var err error
	if block {
		if cont {
			// A paste finishing an open block: the block so far plus the
			// paste run as one.
			in.ResetBlock()
		}
		out, err = in.RunBlock(text)
	} else {
		out, err = in.Push(text)
	}
	r.stuckSince.Store(0)
	if err != nil {
		r.block = r.block[:0]
		r.warn(err.Error())
		return 0, false
	}
	r.inputDone(strings.TrimSuffix(text, "\n"), out)
	r.keepPartialLine(out.Partial)
	if out.Exit {
		return out.Status, true
	}
	r.state.setContinuation(out.More)
	return 0, false
}

// pyCommand runs a line typed at py> that names an AtPy command (Command).
func (r *Loop) pyCommand(text string) (handled, exit bool) {
	if r.opts.Term == nil {
		return false, false
	}
	c, arg, ok := r.command(text)
	if !ok || !c.AtPy {
		return false, false
	}
	return true, r.runCommand(c, arg)
}

// inputDone collects the lines of a py> block and tells OnInput of the
// whole input once it has run.
func (r *Loop) inputDone(text string, out interp.Outcome) {
	if r.opts.OnInput == nil {
		return
	}
	if text != "" || len(r.block) > 0 {
		r.block = append(r.block, text)
	}
	if out.More {
		return
	}
	source := strings.TrimRight(strings.Join(r.block, "\n"), "\n")
	r.block = r.block[:0]
	if strings.TrimSpace(source) == "" {
		return
	}
	r.tellInput() // the input before, if still untold: order is kept
	if r.editor == nil {
		r.opts.OnInput(source, out)
		return
	}
	// The line editor tells it once the next prompt shows
	// (EditorConfig.OnWait): the session log's write then comes after
	// the prompt, not between the input's output and the prompt, where
	// it made every line's round trip longer.
	r.unlogged = func() { r.opts.OnInput(source, out) }
}

// tellInput tells OnInput of the input that ran last, if it was not
// told yet. Every path from one input to the next passes here: the next
// prompt's wait, the next input (submit), the end of the loop.
func (r *Loop) tellInput() {
	if f := r.unlogged; f != nil {
		r.unlogged = nil
		f()
	}
}

// modeChanged readies the assistant while the user types a question at
// ai>, and lets it go on the way back to py>. It runs on the line editor's
// goroutine, so the work (a job on the interpreter's thread) is left to
// another.
func (r *Loop) modeChanged(m Mode) {
	r.tellSIGINTOwner()
	if m == ModeAI {
		go r.opts.Assistant.Prepare()
		return
	}
	go r.opts.Assistant.Release()
}

// whileAsking runs fn, which asks the assistant, with the terminal's echo
// off, so that keys typed while an answer streams wait for the next prompt
// instead of landing in the answer. Ctrl-C still interrupts, and
// onInterrupt shows it as the terminal would have.
func (r *Loop) whileAsking(fn func()) {
	if r.opts.Term == nil {
		fn()
		return
	}
	r.opts.Term.WithoutEcho(fn)
}

// keepPartialLine makes the next prompt follow output that did not end its
// line, as in python3: the line editor redraws its whole line, prompt
// included, so the prompt carries that text (partial, from sys.stdout) to
// leave it in place. Text it could not redraw faithfully (escape
// sequences, very long) is kept by moving to a new line instead.
func (r *Loop) keepPartialLine(partial string) {
	r.state.setLead("")
	if r.opts.Term == nil {
		return
	}
	width := r.width()
	if partial == "" {
		// Output that bypassed sys.stdout (os.write, a subprocess, C code)
		// may have left the cursor mid-line, where the editor's redraw
		// would erase it. A line's worth of spaces then a carriage return
		// is invisible when the cursor is at the start of a line, and
		// otherwise wraps to a new one, leaving that output in place (the
		// way zsh keeps a command's unterminated output). Without a line
		// editor (TERM=dumb) nothing redraws the line.
		if r.editor != nil && width > 1 {
			r.editor.LeadIn(strings.Repeat(" ", width) + "\r")
		}
		return
	}
	if utf8.RuneCountInString(partial) > maxLead || strings.IndexFunc(partial, notPrintable) >= 0 {
		io.WriteString(r.opts.Stdout, "\n")
		return
	}
	lead, full := lastRow([]rune(partial), width)
	if full {
		// The text filled its last row: the prompt starts the next one.
		io.WriteString(r.opts.Stdout, "\r\n")
	}
	r.state.setLead(string(lead))
}

// width is the terminal's width, read for the coming prompt.
func (r *Loop) width() int {
	if r.editor != nil {
		return r.editor.Width()
	}
	return r.opts.Term.Width()
}

// lastRow is the part of text on its last row of a terminal width columns
// wide, where the rows before it stay as they are; full reports that the
// text ends exactly at a row's end (the cursor waits there to wrap).
func lastRow(text []rune, width int) (row []rune, full bool) {
	if width <= 0 {
		return text, false
	}
	start, col := 0, 0
	for i, c := range text {
		w := term.RuneWidth(c)
		if col+w > width {
			start, col = i, 0
		}
		col += w
	}
	if col == width {
		return nil, true
	}
	return text[start:], false
}

const maxLead = 200

func notPrintable(c rune) bool { return !unicode.IsPrint(c) && c != ' ' }

// ask hands a line typed at ai> to the assistant; Ctrl-C cancels it.
func (r *Loop) ask(line string) {
	if line == "" {
		return
	}
	if r.opts.Assistant == nil {
		fmt.Fprintln(r.opts.Stdout, "pyaichat: the assistant is unavailable (see the warning at start); TAB returns to py>")
		return
	}
	cancelled, err := r.Ask(func(ctx context.Context) error {
		return r.opts.Assistant.Handle(ctx, line, r.opts.Stdout)
	})
	if err != nil && !cancelled && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(r.opts.Stdout, "pyaichat: %v\n", err)
	}
}

// Ask runs fn, which asks the assistant, as a question at ai> runs: the
// terminal does not echo meanwhile, and Ctrl-C cancels fn's context
// (cancelled then reports it).
func (r *Loop) Ask(fn func(ctx context.Context) error) (cancelled bool, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.aiCancel.Store(&cancel)
	r.tellSIGINTOwner()
	defer func() {
		r.aiCancel.Store(nil)
		r.tellSIGINTOwner()
	}()
	r.whileAsking(func() { err = fn(ctx) })
	return ctx.Err() != nil, err
}

// WatchInterrupts handles Ctrl-C until stop is called, outside Run (pyaichat
// -p, setup code).
func (r *Loop) WatchInterrupts() (stop func()) { return r.handleSignals() }

// handleSignals turns Ctrl-C into the right action for what is running.
// At a line-editor prompt the terminal is raw and Ctrl-C is a key, not a
// signal; while user code runs, SIGINT is Python's and the interpreter
// tells of it (onUserInterrupt). A signal here means a question is being
// answered, a plain prompt is waiting, or Ctrl-C came between two prompts.
func (r *Loop) handleSignals() (stop func()) {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-ch:
				r.onInterrupt()
			case <-r.opts.Interp.Interrupts():
				r.onUserInterrupt()
			case <-r.opts.Interp.SignalErrors():
				r.onSignalError()
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
		wg.Wait()
	}
}

// stuckGrace is how long a Ctrl-C may go unanswered before the next one
// offers to abandon the session. Python running Python code answers within
// its thread switch interval (5 ms); inside C code it does not answer.
const stuckGrace = 50 * time.Millisecond

func (r *Loop) onInterrupt() {
	if c := r.aiCancel.Load(); c != nil {
		(*c)()
		return
	}
	if r.opts.Interp.Busy() {
		// Between pyaichat's step and the user's code.
		r.opts.Interp.Interrupt()
		return
	}
	switch r.pySIGINT() {
	case interp.SIGINTIgnored:
		return
	case interp.SIGINTKills:
		r.dieBySIGINT()
	}
	switch {
	case r.editor != nil:
		r.editor.CtrlC()
	case r.opts.Term != nil:
		r.opts.Term.Interrupt()
	}
}

// onUserInterrupt is a Ctrl-C that reached running user code, which
// Python has been told of: if Python has not acted on the one before, it
// is stuck inside C code, and pyaichat offers to abandon the session.
func (r *Loop) onUserInterrupt() {
	if !r.opts.Interp.Stuck(stuckGrace) {
		return
	}
	if since := r.stuckSince.Load(); since != 0 {
		fmt.Fprintln(r.opts.Stderr, "\npyaichat: session abandoned.")
		r.abandon.Do(func() { close(r.abandoned) })
		return
	}
	r.stuckSince.Store(time.Now().UnixNano())
	fmt.Fprint(r.opts.Stderr, "\npyaichat: Python is busy inside C code and cannot be interrupted.\n"+
		"Press Ctrl-C again to abandon this session (history is kept), or wait.\n")
}

// onSignalError is a signal handler's exception raised at the prompt (or
// as code ended). python3's prompt, whose read the signal interrupted,
// drops the line being typed and shows it; so the line editor's line ends
// as for Ctrl-C and the loop shows it. A pipe's read cannot be ended and
// loses nothing: it is shown at once, and the prompt again after it. An
// answer on its way is let finish first.
func (r *Loop) onSignalError() {
	switch {
	case r.aiCancel.Load() != nil:
		r.signalDeferred.Store(true)
	case r.editor != nil:
		r.signalAtPrompt.Store(true)
		r.editor.CtrlC()
	case r.opts.Term != nil:
		r.signalAtPrompt.Store(true)
		r.opts.Term.Interrupt()
	default:
		io.WriteString(r.plain.prompts, "\n")
		if _, cont := r.state.get(); cont {
			r.opts.Interp.ResetBlock()
			r.state.setContinuation(false)
		}
		if status, exit := r.showSignalError(); exit {
			r.exited <- status
			return
		}
		io.WriteString(r.plain.prompts, r.state.prompt())
	}
}

// deferredSignalError shows a signal handler's exception that came while
// an answer was on its way (onSignalError).
func (r *Loop) deferredSignalError() (status int, exit bool) {
	if !r.signalDeferred.Swap(false) {
		return 0, false
	}
	return r.showSignalError()
}

// showSignalError shows a signal handler's exception; exit says it was
// SystemExit, with its status.
func (r *Loop) showSignalError() (status int, exit bool) {
	out, err := r.opts.Interp.ShowSignalError()
	if err != nil {
		r.warn(err.Error())
		return 0, false
	}
	return out.Status, out.Exit
}

// tellSIGINTOwner tells the interpreter whose a SIGINT at the prompt is
// now (pySIGINT): the user code's at py>, pyaichat's at ai> and while an
// answer is under way.
func (r *Loop) tellSIGINTOwner() {
	mode, _ := r.state.get()
	r.opts.Interp.SIGINTToUser(mode == ModePy && r.aiCancel.Load() == nil)
}

// pySIGINT is what SIGINT does at the prompt: at py>, what the user's
// code set; at ai>, pyaichat's own (it cancels or discards).
func (r *Loop) pySIGINT() interp.SIGINTAction {
	if mode, _ := r.state.get(); mode != ModePy {
		return interp.SIGINTRaises
	}
	return r.opts.Interp.SIGINT()
}

// dieBySIGINT ends the process by SIGINT, as python3 ends under SIG_DFL,
// with the terminal as it was.
func (r *Loop) dieBySIGINT() {
	if r.opts.Term != nil {
		r.opts.Term.Restore()
	}
	r.opts.Interp.DieBySIGINT()
}
