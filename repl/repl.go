// Package repl is pyaichat's terminal front end: it reads lines (a line
// editor on a terminal, plain lines from a pipe), keeps the py>/ai> mode,
// and sends py> input to the embedded interpreter and ai> input to the
// assistant. It owns the terminal: raw mode, bracketed paste, Ctrl-C.
package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chzyer/readline"
	"github.com/chzyer/readline/runes"

	"github.com/pyaichat/pyaichat/pybridge"
)

// Mode is what a line at the prompt is for.
type Mode int

const (
	ModePy Mode = iota // Python, as python3 -i
	ModeAI             // a question for the assistant
)

// Assistant answers what is typed at ai>.
type Assistant interface {
	// Handle answers one line (a question or a /command), writing to out.
	// Cancelling ctx (Ctrl-C) must stop it promptly.
	Handle(ctx context.Context, line string, out io.Writer) error
}

// Options configure one run of the REPL.
type Options struct {
	Stdin          *os.File
	Stdout, Stderr *os.File

	Argv     []string // sys.argv
	Script   string   // run this file first, as python3 -i FILE
	Commands []string // run these -c commands first
	Venv     string   // virtualenv directory ("" for none)

	// NewAssistant builds the ai> assistant once Python is up; recent
	// returns the automatic context of the py> session. Nil means ai> is
	// unavailable.
	NewAssistant func(in *pybridge.Interp, recent func() string) (Assistant, error)
	// OneShot, when set, runs after the setup code instead of the REPL
	// (pyaichat -p); its result is the exit status. Ctrl-C cancels ctx.
	OneShot func(ctx context.Context, out io.Writer) int
}

// Run runs the REPL until the user exits and returns the exit status.
func Run(opts Options) (status int) {
	r := &session{opts: opts, state: &modeState{}}
	return r.run()
}

type session struct {
	opts  Options
	state *modeState
	in    *pybridge.Interp
	input lineReader
	pump  *pump        // the line editor's keys, on a terminal
	plain *plainReader // lines from a pipe or a dumb terminal
	term  *termState
	hist  *histories
	tty   bool

	assistant Assistant

	// Ctrl-C bookkeeping.
	aiCancel   atomic.Pointer[context.CancelFunc]
	stuckSince atomic.Int64 // unix nanos of a Ctrl-C that found Python stuck
}

func (r *session) warn(msg string) {
	fmt.Fprintf(r.opts.Stderr, "pyaichat: %s\n", msg)
}

func (r *session) run() (status int) {
	o := r.opts
	r.tty = isTerminal(int(o.Stdin.Fd())) && isTerminal(int(o.Stdout.Fd()))
	r.term = saveTerm(int(o.Stdin.Fd()))
	defer func() {
		// A Go panic while the terminal is raw must not leave it raw.
		if p := recover(); p != nil {
			r.term.restore()
			fmt.Fprintf(o.Stderr, "\npyaichat: internal error: %v\n", p)
			status = 70
		}
	}()

	executable := ""
	venv := o.Venv
	if venv == "" {
		venv = os.Getenv("VIRTUAL_ENV")
	}
	if venv != "" {
		exe, err := pybridge.VenvExecutable(venv)
		if err != nil {
			r.warn(err.Error())
		} else {
			executable = exe
		}
	}

	// On a terminal, pyaichat reads it only while its own prompt is up;
	// user code reads it itself (see pump). From a pipe, lines for the
	// prompt and for user code come from one buffered reader.
	var readLine pybridge.LineReader
	if r.tty {
		tty, err := newTTYReader(o.Stdin)
		if err != nil {
			r.warn(err.Error())
			return 1
		}
		r.pump = newPump(tty)
		if os.Getenv("TERM") == "dumb" {
			r.plain = &plainReader{tty: tty, prompts: o.Stdout, state: r.state}
		}
	} else {
		r.plain = &plainReader{in: bufio.NewReaderSize(o.Stdin, 64*1024), prompts: o.Stderr, state: r.state}
		readLine = func(prompt string, show bool) (string, error) {
			return r.plain.readLine(prompt, show, o.Stdout)
		}
	}

	in, err := pybridge.Start(pybridge.Config{
		Argv: o.Argv, Executable: executable, ReadLine: readLine, CacheDir: pybridge.DefaultCacheDir(),
		OnInterrupt: r.onUserInterrupt,
	})
	if err != nil {
		r.warn(err.Error())
		return 1
	}
	r.in = in
	if err := in.RouteStdin(r.tty); err != nil {
		r.warn(err.Error())
		return 1
	}
	if err := in.SetPath0(o.Script); err != nil {
		r.warn(err.Error())
		return 1
	}

	stopSignals := r.handleSignals()
	defer stopSignals()

	// Setup code, as python3 -i -c CODE / python3 -i FILE.
	for _, c := range o.Commands {
		if out, err := in.RunCommand(c); err != nil {
			r.warn(err.Error())
		} else if out.Exit {
			return r.finish(out.Status)
		}
	}
	if o.Script != "" {
		if out, err := in.RunFile(o.Script); err != nil {
			r.warn(err.Error())
		} else if out.Exit {
			return r.finish(out.Status)
		}
	}
	// python3 runs PYTHONSTARTUP only for a bare interactive session.
	if startup := os.Getenv("PYTHONSTARTUP"); startup != "" && o.Script == "" && len(o.Commands) == 0 && o.OneShot == nil {
		if out, err := in.RunStartup(startup); err != nil {
			r.warn(err.Error())
		} else if out.Exit {
			return r.finish(out.Status)
		}
	}

	if o.NewAssistant != nil {
		a, err := o.NewAssistant(in, r.recentContext)
		if err != nil {
			r.warn(err.Error())
		} else {
			r.assistant = a
			r.state.onToggle = r.modeChanged
		}
	}
	if o.OneShot != nil {
		if r.assistant == nil {
			return r.finish(2)
		}
		ctx, cancel := context.WithCancel(context.Background())
		r.aiCancel.Store(&cancel)
		var code int
		r.whileAsking(func() { code = o.OneShot(ctx, o.Stdout) })
		cancel()
		return r.finish(code)
	}

	if r.plain != nil {
		r.input = r.plain
	} else {
		r.hist = loadHistories(historyDir(), r.warn)
		ed, err := newEditor(r.pump, r.state, r.hist, o.Stdout, int(o.Stdin.Fd()))
		if err != nil {
			r.warn(err.Error())
			return 1
		}
		r.input = ed
	}
	defer r.input.close()
	return r.loop()
}

// loop reads and runs input until exit.
func (r *session) loop() int {
	var initial string
	var pendingPaste string // pasted lines awaiting their unfinished last line
	for {
		ev, err := r.input.read(initial)
		initial = ""
		if err != nil {
			r.warn(fmt.Sprintf("reading input: %v", err))
			return r.finish(1)
		}
		mode, cont := r.state.get()
		switch ev.kind {
		case evEOF:
			if _, ok := r.input.(*plainReader); ok {
				io.WriteString(r.prompts(), "\n") // as python3 -i does at EOF
			}
			if cont && pendingPaste == "" {
				// End of input finishes a pending block, as in python3,
				// which runs it (or reports it unfinished) before exiting.
				r.state.setContinuation(false)
				out, err := r.in.PushEOF()
				if err != nil {
					r.warn(err.Error())
				} else if out.Exit {
					return r.finish(out.Status)
				}
				continue
			}
			return r.finish(0)
		case evInterrupt:
			// The partial line is discarded, never run; as in python3,
			// which says KeyboardInterrupt (a question just goes).
			if mode == ModePy {
				fmt.Fprintln(r.opts.Stdout, "KeyboardInterrupt")
			} else {
				fmt.Fprintln(r.opts.Stdout)
			}
			pendingPaste = ""
			if cont {
				r.in.ResetBlock()
				r.state.setContinuation(false)
			}
		case evPaste:
			text := ev.text
			if !strings.Contains(text, "\n") {
				// A one-line paste is edited like typed text.
				initial = text
				continue
			}
			r.echoPaste(mode, cont, ev)
			if !strings.HasSuffix(text, "\n") {
				// Its last line is unfinished: let the user finish it.
				i := strings.LastIndexByte(text, '\n')
				pendingPaste, initial = text[:i+1], text[i+1:]
				r.state.setContinuation(true)
				continue
			}
			if status, exit := r.submit(mode, cont, text, true); exit {
				return r.finish(status)
			}
		case evLine:
			if pendingPaste != "" {
				text := pendingPaste + ev.text + "\n"
				pendingPaste = ""
				r.state.setContinuation(false)
				r.addHistory(mode, strings.TrimSuffix(text, "\n"))
				if status, exit := r.submit(mode, false, text, true); exit {
					return r.finish(status)
				}
				continue
			}
			r.addHistory(mode, ev.text)
			if status, exit := r.submit(mode, cont, ev.text, false); exit {
				return r.finish(status)
			}
		}
	}
}

// prompts is where the plain reader writes prompts.
func (r *session) prompts() io.Writer {
	if pr, ok := r.input.(*plainReader); ok {
		return pr.prompts
	}
	return r.opts.Stdout
}

func (r *session) addHistory(m Mode, line string) {
	if r.hist == nil {
		return
	}
	r.hist.add(m, line)
	if ed, ok := r.input.(*editor); ok {
		ed.rl.SaveHistory(line)
	}
}

// echoPaste shows a multi-line paste the way it will run: the first line
// after the prompt, the rest after continuation prompts.
func (r *session) echoPaste(mode Mode, cont bool, ev event) {
	if !r.tty {
		return
	}
	// An unfinished last line is left to the editor, which shows it.
	text := ev.text[:strings.LastIndexByte(ev.text, '\n')]
	lines := strings.Split(text, "\n")
	var b strings.Builder
	for i, l := range lines {
		if i == 0 {
			b.WriteString(promptFor(mode, cont))
		} else {
			b.WriteString("... ")
		}
		b.WriteString(l)
		b.WriteString("\n")
	}
	io.WriteString(r.opts.Stdout, b.String())
}

// submit runs one line (or a pasted block) in the current mode.
func (r *session) submit(mode Mode, cont bool, text string, block bool) (status int, exit bool) {
	if mode == ModeAI && !cont {
		r.ask(strings.TrimSpace(text))
		return 0, false
	}
	var out pybridge.Outcome
	var err error
	if block {
		if cont {
			// A paste finishing an open block: the block so far plus the
			// paste run as one.
			r.in.ResetBlock()
		}
		out, err = r.in.RunBlock(text)
	} else {
		out, err = r.in.Push(text)
	}
	r.stuckSince.Store(0)
	if err != nil {
		r.warn(err.Error())
		return 0, false
	}
	r.keepPartialLine(out.Partial)
	if out.Exit {
		return out.Status, true
	}
	r.state.setContinuation(out.More)
	return 0, false
}

// modeChanged readies the assistant's tools while the user types a
// question at ai>, and lets them go on the way back to py>. It runs on the
// line editor's goroutine, so the work (a job on the interpreter's thread)
// is left to another.
func (r *session) modeChanged(m Mode) {
	if m == ModeAI {
		if p, ok := r.assistant.(interface{ Prepare() }); ok {
			go p.Prepare()
		}
		return
	}
	go r.in.DiscardIsolated()
}

// recentContext is the automatic context of the py> session.
func (r *session) recentContext() string {
	s, err := r.in.RecentContext()
	if err != nil {
		return ""
	}
	return s
}

// whileAsking runs fn, which asks the assistant, with the terminal's echo
// off, so that keys typed while an answer streams wait for the next prompt
// instead of landing in the answer. Ctrl-C still interrupts, and
// onInterrupt shows it as the terminal would have.
func (r *session) whileAsking(fn func()) {
	if !r.tty {
		fn()
		return
	}
	withoutEcho(int(r.opts.Stdin.Fd()), fn)
}

// keepPartialLine makes the next prompt follow output that did not end its
// line, as in python3: the line editor redraws its whole line, prompt
// included, so the prompt carries that text (partial, from sys.stdout) to
// leave it in place. Text it could not redraw faithfully (escape
// sequences, very long) is kept by moving to a new line instead.
func (r *session) keepPartialLine(partial string) {
	r.state.setLead("")
	if !r.tty {
		return
	}
	width := readline.GetScreenWidth()
	if partial == "" {
		// Output that bypassed sys.stdout (os.write, a subprocess, C code)
		// may have left the cursor mid-line, where the editor's redraw
		// would erase it. A line's worth of spaces then a carriage return
		// is invisible when the cursor is at the start of a line, and
		// otherwise wraps to a new one, leaving that output in place (the
		// way zsh keeps a command's unterminated output). Without a line
		// editor (TERM=dumb) nothing redraws the line.
		if _, editing := r.input.(*editor); editing && width > 1 {
			io.WriteString(r.opts.Stdout, strings.Repeat(" ", width)+"\r")
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

// lastRow is the part of text on its last row of a terminal width columns
// wide, where the rows before it stay as they are; full reports that the
// text ends exactly at a row's end (the cursor waits there to wrap).
func lastRow(text []rune, width int) (row []rune, full bool) {
	if width <= 0 {
		return text, false
	}
	start, col := 0, 0
	for i, c := range text {
		w := runes.Width(c)
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
func (r *session) ask(line string) {
	if line == "" {
		return
	}
	if r.assistant == nil {
		fmt.Fprintln(r.opts.Stdout, "pyaichat: the assistant is unavailable (see the warning at start); TAB returns to py>")
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.aiCancel.Store(&cancel)
	var err error
	r.whileAsking(func() { err = r.assistant.Handle(ctx, line, r.opts.Stdout) })
	r.aiCancel.Store(nil)
	cancelled := ctx.Err() != nil
	cancel()
	switch {
	case cancelled || errors.Is(err, context.Canceled):
		// The assistant ends its output on a line of its own, after the
		// terminal's echoed ^C too.
		fmt.Fprintln(r.opts.Stdout, "(cancelled)")
	case err != nil:
		fmt.Fprintf(r.opts.Stdout, "pyaichat: %v\n", err)
	}
}

// handleSignals turns SIGINT into the right action for what is running.
// At a line-editor prompt the terminal is raw and Ctrl-C is a key, not a
// signal; while user code runs, SIGINT is Python's (onUserInterrupt). A
// signal here means a question is being answered, a plain prompt is
// waiting, or Ctrl-C came between two prompts.
func (r *session) handleSignals() (stop func()) {
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
// offers to abandon the session.
const stuckGrace = 500 * time.Millisecond

func (r *session) onInterrupt() {
	if c := r.aiCancel.Load(); c != nil {
		if r.tty {
			// The terminal does not echo while a question runs (see
			// whileAsking): show the key as it would.
			io.WriteString(r.opts.Stdout, "^C")
		}
		(*c)()
		return
	}
	switch {
	case r.in != nil && r.in.Busy():
		// Between pyaichat's step and the user's code.
		r.in.Interrupt()
	case r.plain != nil:
		r.plain.interrupt()
	case r.pump != nil:
		r.pump.ctrlCBetweenPrompts()
	}
}

// onUserInterrupt is a Ctrl-C that reached running user code, which
// Python has been told of: if Python has not acted on the one before, it
// is stuck inside C code, and pyaichat offers to abandon the session.
func (r *session) onUserInterrupt() {
	if r.in.Stuck(stuckGrace) {
		if since := r.stuckSince.Load(); since != 0 {
			r.abandon()
			return
		}
		r.stuckSince.Store(time.Now().UnixNano())
		fmt.Fprint(r.opts.Stderr, "\npyaichat: Python is busy inside C code and cannot be interrupted.\n"+
			"Press Ctrl-C again to abandon this session (history is kept), or wait.\n")
	}
}

// abandon ends a session whose Python cannot be interrupted, without
// waiting for it.
func (r *session) abandon() {
	fmt.Fprintln(r.opts.Stderr, "pyaichat: session abandoned.")
	r.restoreTerminal()
	os.Exit(130)
}

func (r *session) restoreTerminal() {
	if r.tty {
		io.WriteString(r.opts.Stdout, bracketedPasteOff)
	}
	r.term.restore()
}

// finish restores the terminal and finalizes Python, bounded so that a
// non-daemon thread that never ends cannot hang the exit.
func (r *session) finish(status int) int {
	r.restoreTerminal()
	if r.in != nil && !r.in.Close(finalizeTimeout) {
		r.warn("Python threads are still running; exiting without waiting for them")
	}
	return status
}

const finalizeTimeout = 3 * time.Second
