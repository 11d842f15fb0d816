package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pyaichat/pyaichat/agent"
	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/redact"
	"github.com/pyaichat/pyaichat/agent/view"
	"github.com/pyaichat/pyaichat/capabilities"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/config"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/jsonreport"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog/live"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/suggest"
	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/repl"
	"github.com/pyaichat/pyaichat/repl/interp"
	"github.com/pyaichat/pyaichat/repl/term"
)

// exitPatience is how long exit waits for Python's threads and atexit
// handlers (as long as python3 does) before it says what it waits for.
const exitPatience = 3 * time.Second

// runInteractive is pyaichat's REPL, or with -p its one question: the
// setup code runs first, as python3 -i runs it.
func runInteractive(std stdio, c cmdline, set config.Settings, cfgErr error, startPy pythonStarter) (status int) {
	opts, readLine, err := openInput(std, c.unbuffered())
	if err != nil {
		std.warn(err.Error())
		return 1
	}
	if opts.Term != nil {
		defer recoverRaw(opts.Term, std, &status)
	}
	in, err := startPy(c, readLine, opts.Term != nil, std.warn)
	var exited pybridge.ExitError
	if errors.As(err, &exited) {
		return exited.Status // Python said why
	}
	if err != nil {
		std.warn(err.Error())
		return 1
	}
	it, err := newInteractive(std, c, set, opts, in)
	if err != nil {
		std.warn(err.Error())
		return 1
	}
	return it.run(cfgErr)
}

// recoverRaw ends pyaichat after a Go panic with the terminal's modes put
// back: a panic while the terminal is raw must not leave it raw.
func recoverRaw(tm *term.Terminal, std stdio, status *int) {
	if p := recover(); p != nil {
		tm.Restore()
		fmt.Fprintf(std.err, "\npyaichat: internal error: %v\n", p)
		*status = 70
	}
}

// interactive is one session of the REPL over the embedded Python: what
// runInteractive builds, and what its steps share.
type interactive struct {
	std     stdio
	c       cmdline
	set     config.Settings
	opts    repl.Options
	in      sessionPython
	ran     *suggest.Runs
	capture *live.Capture
	lg      *sessionlog.Writer
	session *repl.Loop
}

// newInteractive wires the REPL to in: the interpreter as the REPL sees
// it, the session log, images, the commands of py>.
func newInteractive(std stdio, c cmdline, set config.Settings, opts repl.Options, in sessionPython) (*interactive, error) {
	if set.REPL.NoMagics {
		if err := in.SetMagics(false); err != nil {
			std.warn(err.Error())
		}
	}
	it := &interactive{std: std, c: c, set: set, in: in, ran: suggest.NewRuns(), capture: live.NewCapture(in)}
	opts.Interp = interpreter{in, it.ran, it.capture}
	it.lg = openLog(c, set, opts.Term != nil, std.warn)
	showImages(in, opts.Term, it.lg, std.warn)
	opts.OnInput = live.Inputs(it.lg, it.capture)
	opts.Commands = []repl.Command{live.SaveCommand(it.lg)}
	opts.Host, opts.CanHost, opts.Await = in.Host, in.CanHost, in.AwaitInput
	opts.MoreLines, opts.TabToggles = in.MoreLines, set.REPL.TabToggles
	opts.Highlight = opts.Term != nil && colorWanted(true)
	opts.ViMode = editingMode(set.REPL.EditingMode) == "vi"
	opts.AutoIndent = autoIndent(set.REPL.AutoIndent)
	opts.SaveAI = it.aiHistoryLine
	it.opts = opts
	var err error
	it.session, err = repl.New(opts)
	return it, err
}

// autoIndent is whether blocks typed at py> are indented as they are
// typed: only where the config file says so. Off, input typed or
// scripted with its own indentation (a tutorial's examples, a terminal
// script) runs as in python3 -i; on, that indentation would add to the
// editor's.
func autoIndent(set *bool) bool { return set != nil && *set }

// finish ends the session: its log, the terminal's modes, then Python,
// which waits for its threads and atexit handlers as python3 does.
func (it *interactive) finish(status int) int {
	endLog(it.lg, status)
	restoreTerm(it.opts.Term)
	return it.in.Exit(status, exitPatience, func(what string) {
		it.std.warn(fmt.Sprintf("waiting for %s (Ctrl-C stops the wait)", what))
	})
}

// run greets, runs the setup code, and then asks -p's question or runs
// the REPL until exit.
func (it *interactive) run(cfgErr error) int {
	color := colorWanted(it.opts.Term != nil)
	if it.opts.Term != nil {
		greet(it.std, it.c, color)
	}
	// With -p, stdin is part of the question when it is not a terminal (as
	// the llm CLI takes it): a terminal would wait for Ctrl-D when only
	// stdout was redirected. Stdout is the answer's alone: the setup's
	// output goes to stderr.
	question := it.c.question
	if question != "" && !term.IsTerminal(it.std.in) {
		question = withStdin(question, it.std)
	}
	report := jsonReportFor(it.c, it.set.Agent.Model, question, it.std.out)
	stop := it.session.WatchInterrupts()
	s, exit := setupFor(it.in, it.c, it.std)
	stop()
	if exit {
		report.Finish("setup_exit", fmt.Sprintf("the setup code exited with status %d", s), s)
		return it.finish(s)
	}
	startCapture(it.capture, it.c, it.set.Log, it.lg, it.std.warn)
	// Go's environment is the one the process started with (Python's
	// os.environ changes do not reach it), so the filter is the same
	// whenever it is built; it is built once, here, for all three users.
	it.set.Agent = withSecrets(it.set.Agent)
	assistant := it.assistant(cfgErr, question != "", color, report)
	if question != "" {
		if assistant == nil {
			return it.finish(exitUsage)
		}
		return it.finish(askOnce(it.session, assistant, question, it.std, report))
	}
	if it.c.resume != "" {
		live.Resume(sessionsDir(), it.c.resume, live.Into{Loop: it.session, Assistant: assistant, In: it.in, Term: it.opts.Term,
			Log: it.lg, Capture: it.capture, Out: it.std.out, Warn: it.std.warn, Prose: func(s string) string { return prose(it.std.out, s) }})
	}
	if it.opts.Term != nil && !it.set.REPL.NoSuggest {
		startSuggestions(it.session, it.in, it.ran, it.std.warn)
	}
	status, abandoned := it.session.Run()
	if abandoned {
		// Python is still inside the code that ignored Ctrl-C: it cannot
		// be finalized, only left.
		endLog(it.lg, status)
		restoreTerm(it.opts.Term)
		return status
	}
	return it.finish(status)
}

// assistant gives ai> its assistant and the assistant's commands, or nil
// with a warning when the configuration cannot be used.
func (it *interactive) assistant(cfgErr error, oneShot, color bool, report *jsonreport.Report) *agent.Conversation {
	if cfgErr != nil {
		it.std.warn(fmt.Sprintf("ai> is unavailable: %v", cfgErr))
		return nil
	}
	recent := func() string { s, _ := it.in.RecentContext(); return s }
	reg := newRegistry(it.set.Agent.Secrets, it.in, sysPathKey(it.c))
	loadUserCapabilities(reg, it.set.CapabilityModules, it.std.warn)
	assistant := newAssistant(it.set.Agent, reg, recent, it.opts.Term, oneShot, it.std, color, bothEvents(report.Events(), live.Events(it.lg)))
	it.session.SetAssistant(assistant)
	it.session.AddCommands(assistantCommands(assistant)...)
	return assistant
}

// startSuggestions gives py> its inline suggestions, or says why not.
func startSuggestions(session *repl.Loop, in suggest.Interpreter, ran *suggest.Runs, warn func(string)) {
	sg, err := suggest.Start(in, ran)
	if err != nil {
		warn(err.Error())
		return
	}
	session.SetComplete(sg.Complete, sg.Candidates, sg.Arguments)
}

// showImages draws figures and rich values on the terminal, and saves
// those it cannot draw beside the session's log (ID/figure-N.png).
func showImages(in sessionPython, tm *term.Terminal, lg *sessionlog.Writer, warn func(string)) {
	if tm != nil {
		in.SetDisplay(tm)
	}
	if lg != nil {
		if err := in.SetFigureDir(sessionlog.FilesDir(lg.Path)); err != nil {
			warn(err.Error())
		}
	}
}

func restoreTerm(tm *term.Terminal) {
	if tm != nil {
		tm.Restore()
	}
}

// newAssistant is the assistant over the capabilities of in, told of
// the session's recent inputs by recent. Each question's events go to
// three consumers: its view, which draws it on std.out (agent/view, in
// colour if color), and events (nil: nobody), the session log's and -p's
// JSON.
func newAssistant(cfg agent.Config, reg *capabilities.Registry, recent func() string, tm *term.Terminal, oneShot bool, std stdio, color bool, events func(event.Event)) *agent.Conversation {
	look := lookOf(std.out, color)
	// The view draws Ctrl-C's line, as repl.Assistant asks: the ^C where
	// the REPL's terminal does not echo it, and at ai> the line that says
	// so.
	look.Echo = tm != nil
	if !oneShot {
		look.Cancelled = "(cancelled)"
	}
	cfg.View = view.For(look)
	if cfg.Share == agent.ShareAsk {
		cfg.Confirm = confirmer(tm, oneShot, std)
	}
	cfg.Events = events
	return agent.NewConversation(cfg, capabilityTools(reg), recent)
}

// withSecrets is cfg with the environment and the filter of secrets
// built from it once: the capabilities' copy, the assistant and the ai>
// history all take the same variables for secrets.
func withSecrets(cfg agent.Config) agent.Config {
	cfg.Environ = os.Environ()
	cfg.Secrets = cfg.Filter()
	return cfg
}

// newRegistry is the capabilities of in, whose copy wipes the values of
// the variables secrets takes for secrets; sysPathKey ("": unknown) lets
// a start skip looking for user capabilities (capabilities.Options).
func newRegistry(secrets *redact.Filter, in capabilities.Session, sysPathKey string) *capabilities.Registry {
	return capabilities.New(in, capabilities.Options{SecretEnv: secrets.SecretVar, SysPathKey: sysPathKey})
}

// loadUserCapabilities adds the user's capabilities to reg before the
// first prompt, so that a module's own imports are done in the session
// (the copy a capability runs in refuses imports) and a broken one is
// said at once.
func loadUserCapabilities(reg *capabilities.Registry, modules []string, warn func(string)) {
	for _, problem := range reg.LoadUser(context.Background(), modules, entryPointCache()) {
		warn(problem)
	}
}

// greet is what a terminal shows before the first prompt: python3's
// banner (not with -q or -p), and a warning when the python3 on PATH is
// another version.
func greet(std stdio, c cmdline, color bool) {
	if !c.quiet && c.question == "" {
		banner(std.err, color)
	}
	if msg := pythonMismatch(); msg != "" {
		std.warn(msg)
	}
}

// setupFor runs the setup code (runSetup), with its output on stderr for
// -p, whose stdout is the answer's.
func setupFor(in setupRunner, c cmdline, std stdio) (status int, exit bool) {
	setup := func() { status, exit = runSetup(in, c, c.question == "", std.warn) }
	if c.question == "" {
		setup()
	} else if err := setupToStderr(setup); err != nil {
		std.warn(err.Error())
	}
	return status, exit
}

// aiHistoryLine is what an ai> line becomes in the history file: filtered
// by the filter the question is filtered by before it is sent and logged,
// so that a key typed at ai> is on disk no more than in the log. The
// first ai> line comes after run has built the filter.
func (it *interactive) aiHistoryLine(line string) string {
	out, _ := it.set.Agent.Secrets.Text(line)
	return out
}

// openInput is the REPL's input: a terminal, read only at pyaichat's
// prompt, or a pipe, whose lines the prompt and user code (readLine) take
// in turn; unbuffered, it reads no byte past the line it needs.
func openInput(std stdio, unbuffered bool) (opts repl.Options, readLine pybridge.LineReader, err error) {
	opts = repl.Options{Stdout: std.out, Stderr: std.err, HistoryDir: xdgPaths().state, OnIdle: pybridge.TrimCHeap}
	if !term.IsTerminal(std.in) || !term.IsTerminal(std.out) {
		opts.Pipe = repl.NewPipe(std.in, unbuffered)
		readLine = func(prompt string, show bool) (string, error) { return opts.Pipe.UserLine(prompt, show, std.out) }
		return opts, readLine, nil
	}
	if opts.Term, err = term.Open(std.in, std.out); err != nil {
		return opts, nil, err
	}
	opts.Dumb = os.Getenv("TERM") == "dumb"
	return opts, nil, nil
}

// Exit statuses of pyaichat -p (besides a SystemExit from the setup code).
const (
	exitAnswered  = 0   // the answer was printed
	exitFailed    = 1   // the question failed: the server, the network, a bound
	exitUsage     = 2   // the command line or the configuration is wrong
	exitCancelled = 130 // Ctrl-C
)

// jsonReportFor is the report of -p --json or --json-stream, or nil.
func jsonReportFor(c cmdline, model, question string, out io.Writer) *jsonreport.Report {
	if question == "" || !(c.json || c.jsonStream) {
		return nil
	}
	return jsonreport.New(model, question, c.jsonStream, out)
}

// askOnce is pyaichat -p: the answer alone goes to stdout, or with
// --json and --json-stream, the report (the answer is in it).
func askOnce(session *repl.Loop, assistant *agent.Conversation, question string, std stdio, report *jsonreport.Report) int {
	assistant.Notices = std.err
	stop := session.WatchInterrupts()
	defer stop()
	var answer io.Writer = std.out
	if report != nil {
		answer = io.Discard
	}
	cancelled, err := session.Ask(func(ctx context.Context) error { return assistant.Ask(ctx, question, answer) })
	kind, msg, status := "", "", exitAnswered
	switch {
	case cancelled:
		kind, msg, status = "cancelled", "cancelled", exitCancelled
	case err != nil:
		kind, msg, status = agent.ErrorKindOf(err), err.Error(), exitFailed
		if kind == agent.ErrorNotConfigured {
			status = exitUsage
		}
	}
	if msg != "" {
		std.warn(msg)
	}
	report.Finish(kind, msg, status)
	return status
}

// confirmer asks, under share = "ask", whether a tool result may be sent:
// on the terminal, with the result shown on stdout at ai>, and for -p on
// stderr (stdout is the answer's alone) unless stderr goes elsewhere than
// the terminal, where nobody would see the question. Without a terminal
// (-p in a pipe, input piped in) there is no one to ask: no result is
// sent, and stderr says so once rather than waiting for an answer that
// cannot come.
func confirmer(tm *term.Terminal, oneShot bool, std stdio) func(context.Context, event.Outgoing) (bool, error) {
	if tm == nil {
		var once sync.Once
		return func(context.Context, event.Outgoing) (bool, error) {
			once.Do(func() { std.warn(`share = "ask" needs a terminal to ask on; tool results were not sent`) })
			return false, nil
		}
	}
	var out io.Writer = std.out
	if oneShot && term.IsTerminal(std.err) {
		out = std.err
	}
	return func(ctx context.Context, o event.Outgoing) (bool, error) {
		io.WriteString(out, o.Preview)
		return tm.AskYesNo(ctx, out, "send this to the model? [y/N] ")
	}
}

// maxStdinQuestion bounds how much of stdin -p adds to the question.
const maxStdinQuestion = 100 << 10

// withStdin is question with what stdin holds after it, cut (and said so,
// to the model and on stderr) past maxStdinQuestion.
func withStdin(question string, std stdio) string {
	data, err := io.ReadAll(io.LimitReader(std.in, maxStdinQuestion+1))
	if err != nil {
		std.warn(fmt.Sprintf("reading standard input: %v", err))
	}
	if len(data) == 0 {
		return question
	}
	note := ""
	if len(data) > maxStdinQuestion {
		data = data[:maxStdinQuestion]
		note = fmt.Sprintf("\n[standard input was cut at its first %d bytes]", maxStdinQuestion)
		std.warn(fmt.Sprintf("standard input is longer than %d bytes; the question has its first %d", maxStdinQuestion, maxStdinQuestion))
	}
	return question + "\n\nStandard input:\n" + strings.ToValidUTF8(string(data), "\uFFFD") + note
}

// interpreter is the REPL's view of the embedded Python. ran counts the
// inputs run at py>, after which names may have changed (suggester);
// output, once started, keeps each input's output for the log.
type interpreter struct {
	sessionPython
	ran    *suggest.Runs
	output *live.Capture
}

func (i interpreter) Push(line string) (interp.Outcome, error) {
	defer i.ran.Done()
	i.output.Begin()
	return i.sessionPython.Push(line)
}

func (i interpreter) PushEOF() (interp.Outcome, error) {
	defer i.ran.Done()
	i.output.Begin()
	return i.sessionPython.PushEOF()
}

func (i interpreter) RunBlock(source string) (interp.Outcome, error) {
	defer i.ran.Done()
	i.output.Begin()
	return i.sessionPython.RunBlock(source)
}

// assistantCommands are the assistant's slash commands in the REPL's
// table, and /code, which hands a code block of the last answer to py>.
func assistantCommands(conv *agent.Conversation) []repl.Command {
	var table []repl.Command
	for _, c := range conv.Commands() {
		table = append(table, repl.Command{Name: c.Name, Args: c.Args, Help: c.Help,
			Run: func(ctx context.Context, arg string, out io.Writer) (repl.Action, error) {
				return repl.Action{}, c.Run(ctx, arg, out)
			}})
	}
	code := repl.Command{Name: "/code", Args: "[N]", Help: "the last answer's Python block (or block [N]) in the py> line",
		Run: func(_ context.Context, arg string, out io.Writer) (repl.Action, error) {
			code, err := conv.CodeBlock(arg)
			if err != nil {
				_, werr := fmt.Fprintln(out, err.Error())
				return repl.Action{}, werr
			}
			return repl.Action{ToPy: true, Code: code}, nil
		}}
	return append(table, code)
}

// startPython starts the interpreter as every mode of pyaichat needs it:
// the virtualenv, sys.argv and sys.path[0] as python3 would have them, and
// stdin on a terminal left to user code.
func startPython(c cmdline, readLine pybridge.LineReader, terminal bool, warn func(string)) (*pybridge.Interp, error) {
	executable := ""
	venv := c.venv
	if venv == "" {
		venv = os.Getenv("VIRTUAL_ENV")
	}
	if venv != "" {
		exe, err := pybridge.VenvExecutable(venv)
		switch {
		case err != nil && c.venv != "":
			return nil, err // asked for on the command line: an error
		case err != nil:
			warn(err.Error() + "; starting without it") // $VIRTUAL_ENV: pyaichat starts without it
		default:
			executable = exe
		}
	}
	in, err := pybridge.Start(pybridge.Config{
		Args: c.pythonArgs(), Executable: executable, ReadLine: readLine, CacheDir: xdgPaths().cache,
	})
	if err != nil {
		return nil, err
	}
	if err := in.RouteStdin(terminal); err != nil {
		return nil, err
	}
	if c.safePath {
		// -P and -I leave sys.path alone, but for a directory or zip file
		// run as the script, which python3 still puts first, as its
		// __main__ is imported from there.
		if c.script == "" {
			return in, nil
		}
		return in, in.SetMainImporter(c.script)
	}
	// As python3: the script's directory, the current directory for -m,
	// or "" for -c and the bare REPL.
	path0 := c.script
	if c.module != "" {
		if path0, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("the current directory: %w", err)
		}
	}
	if err := in.SetPath0(path0); err != nil {
		return nil, err
	}
	return in, nil
}

// runSetup runs the code pyaichat was given before its prompt, as python3
// -i runs it: the -c commands, -m module or FILE, or, for a bare interactive
// session (startup), the file named by PYTHONSTARTUP. A failure is shown
// and the rest goes on; exit reports a SystemExit, with its status.
func runSetup(in setupRunner, c cmdline, startup bool, warn func(string)) (status int, exit bool) {
	var steps []func() (interp.Outcome, error)
	for _, code := range c.commands {
		steps = append(steps, func() (interp.Outcome, error) { return in.RunCommand(code) })
	}
	if c.module != "" {
		steps = append(steps, func() (interp.Outcome, error) { return in.RunModule(c.module) })
	}
	if c.script != "" {
		steps = append(steps, func() (interp.Outcome, error) {
			if c.skipFirstLine {
				if err := in.SkipSourceFirstLine(); err != nil {
					return interp.Outcome{}, err
				}
			}
			return in.RunFile(c.script)
		})
	}
	if path := os.Getenv("PYTHONSTARTUP"); path != "" && startup && len(steps) == 0 && !c.ignoreEnv {
		steps = append(steps, func() (interp.Outcome, error) { return in.RunStartup(path) })
	}
	for _, step := range steps {
		out, err := step()
		if err != nil {
			warn(err.Error())
			continue
		}
		if out.Exit {
			return out.Status, true
		}
	}
	return 0, false
}
