package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/config"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog"
	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/repl"
	"github.com/pyaichat/pyaichat/repl/interp"
)

// sessionsDir is where session logs live: $XDG_STATE_HOME/pyaichat/sessions
// ("" when there is no state directory).
func sessionsDir() string {
	if st := xdgPaths().state; st != "" {
		return filepath.Join(st, "sessions")
	}
	return ""
}

// openLog starts this session's log, unless --no-log, log = false or -p
// (a one-shot question is not a session). A log that cannot be written
// is a warning, never a reason not to start.
func openLog(c cmdline, set config.Settings, terminal bool, warn func(string)) *sessionlog.Writer {
	return openLogAs(c, set, terminal, warn, strings.Fields(pybridge.Version() + " ?")[0], "")
}

// openLogAs is openLog for a session whose py> runs the given Python, in
// the named Jupyter kernel ("" for the embedded Python).
func openLogAs(c cmdline, set config.Settings, terminal bool, warn func(string), python, kernel string) *sessionlog.Writer {
	dir := sessionsDir()
	if c.noLog || set.Log.Off || c.question != "" || !terminal || dir == "" {
		return nil
	}
	w, err := sessionlog.CreateNew(dir, time.Now(), sessionlog.Options{
		Keep: set.Log.Keep, MaxBytes: set.Log.MaxBytes,
		Redact: func(s string) string { return llm.RedactKey(s, set.Agent.APIKey) },
		Warn:   warn,
	})
	if err != nil {
		warn(fmt.Sprintf("the session log cannot be written (%v); this session is not logged", err))
		return nil
	}
	cwd, _ := os.Getwd()
	venv := c.venv
	if venv == "" {
		venv = os.Getenv("VIRTUAL_ENV")
	}
	w.Write(sessionlog.Record{Ev: "start", ID: sessionlog.IDOf(w.Path), Version: version,
		Python: python, Venv: venv, Cwd: cwd, Model: set.Agent.Model, Kernel: kernel})
	return w
}

// endLog writes the session's last record.
func endLog(w *sessionlog.Writer, status int) {
	if w == nil {
		return
	}
	w.Write(sessionlog.Record{Ev: "end", Code: &status})
	w.Close()
}

// pyRecord is a py> input and how it ended, as the log keeps it.
func pyRecord(src string, o interp.Outcome) sessionlog.Record {
	r := sessionlog.Record{Ev: "py", Src: src, Status: "ok"}
	switch {
	case o.Exit:
		status := o.Status
		r.Status, r.Code = "exit", &status
	case o.Error != "":
		r.Status, r.Exc = "error", o.Error
	}
	return r
}

// eventRecord is an agent event as the log keeps it; the pieces of text
// and thinking are not kept (the whole answer is), nor what only shows
// the question (the status line's, the summary: its usage is kept).
func eventRecord(ev event.Event) (sessionlog.Record, bool) {
	r := sessionlog.Record{Ev: string(ev.Kind), Text: ev.Text}
	if ev.Kind.Shown() {
		return r, false
	}
	switch ev.Kind {
	case event.Text, event.Thinking:
		return r, false
	case event.Question:
		r.Model = ev.Model
	case event.ToolCall:
		r.CallID, r.Tool, r.Args, r.Step, r.Extra = ev.ID, ev.Tool, ev.Args, ev.Step, ev.Extra
	case event.ToolResult:
		r.CallID, r.Tool, r.Result, r.Size = ev.ID, ev.Tool, ev.Result, ev.Size
	case event.Usage:
		r.Calls = ev.Calls
		if ev.Usage != nil {
			r.In, r.Out = ev.Usage.PromptTokens, ev.Usage.CompletionTokens
		}
	case event.Error:
		r.Kind = ev.ErrorKind
	case event.Compacted:
		r.Calls = ev.Calls
	}
	return r, true
}

// logInputs is repl.Options.OnInput for the log (nil: no log), with
// each input's output when out captures it.
func logInputs(w *sessionlog.Writer, out *outputCapture) func(string, interp.Outcome) {
	if w == nil {
		return nil
	}
	return func(src string, o interp.Outcome) { out.log(w, pyRecord(src, o)) }
}

// outputCapture is --log-output (log_output = true): what each py> input
// printed, copied by the interpreter (pybridge.CaptureOutput), goes into
// its record once start has turned it on.
type outputCapture struct {
	in outputSource
	on atomic.Bool
}

// start turns capture on for a logged session that asked for it, after
// the setup code ran (whose output is not logged).
func (o *outputCapture) start(c cmdline, opts config.Log, w *sessionlog.Writer, warn func(string)) {
	if w == nil && c.logOutput {
		warn("--log-output does nothing: this session is not logged (--no-log, log = false, -p, or no state directory)")
	}
	if w == nil || !(c.logOutput || opts.Output) {
		return
	}
	if err := o.in.CaptureOutput(sessionlog.MaxOutput); err != nil {
		warn(fmt.Sprintf("Python's output is not logged: %v", err))
		return
	}
	o.on.Store(true)
}

// begin drops what was written since the last input ended (a thread's
// output between inputs, the assistant's tools'): it is not this input's.
func (o *outputCapture) begin() {
	if o.on.Load() {
		o.in.TakeOutput()
	}
}

// log writes r with the output of its input, and stops capturing once the
// log keeps no more of it (its output_off record says so).
func (o *outputCapture) log(w *sessionlog.Writer, r sessionlog.Record) {
	if !o.on.Load() {
		w.Write(r)
		return
	}
	parts, written := o.in.TakeOutput()
	for _, p := range parts {
		r.Output = append(r.Output, sessionlog.Output{Kind: p.Kind, Text: p.Text})
	}
	r.OutputBytes = written
	w.Write(r)
	if w.OutputOff() {
		o.on.Store(false)
		o.in.StopCapture()
	}
}

// logEvents is Config.Events for the log (nil: no log).
func logEvents(w *sessionlog.Writer) func(event.Event) {
	if w == nil {
		return nil
	}
	var streamed answerParts
	return func(ev event.Event) {
		switch ev.Kind {
		case event.Text:
			streamed.add(w, ev.Text)
		case event.Answer:
			streamed.reset()
		}
		if r, ok := eventRecord(ev); ok {
			w.Write(r)
		}
	}
}

// answerParts keeps an answer in the log as it streams, a line or
// maxAnswerPart bytes at a time, so that a session killed meanwhile keeps
// what was shown; the answer record at the question's end supersedes it.
type answerParts struct{ held strings.Builder }

const maxAnswerPart = 1 << 10

func (a *answerParts) add(w *sessionlog.Writer, text string) {
	a.held.WriteString(text)
	if a.held.Len() < maxAnswerPart && !strings.Contains(text, "\n") {
		return
	}
	w.Write(sessionlog.Record{Ev: "answer_part", Text: a.held.String()})
	a.held.Reset()
}

func (a *answerParts) reset() { a.held.Reset() }

// bothEvents tells a and b of each event; either may be nil.
func bothEvents(a, b func(event.Event)) func(event.Event) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(ev event.Event) { a(ev); b(ev) }
}

const sessionsUsage = `usage: pyaichat sessions                  list recent sessions
       pyaichat sessions show ID          print one as a transcript
       pyaichat sessions export ID FILE   write it as a notebook (.ipynb), script (.py) or Markdown (.md)
ID may be any unique prefix of a session's id.`

// runSessions is `pyaichat sessions ...`.
func runSessions(std stdio, args []string) int {
	dir := sessionsDir()
	if len(args) == 0 || args[0] == "list" {
		sessionlog.WriteList(std.out, sessionlog.List(dir))
		return 0
	}
	var fn func([]sessionlog.Record) error
	switch {
	case args[0] == "show" && len(args) == 2:
		fn = func(recs []sessionlog.Record) error { sessionlog.Transcript(std.out, recs); return nil }
	case args[0] == "export" && len(args) == 3:
		fn = func(recs []sessionlog.Record) error { return sessionlog.Export(recs, args[2]) }
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
		fmt.Fprintln(std.out, sessionsUsage)
		return 0
	default:
		fmt.Fprintln(std.err, sessionsUsage)
		return exitUsage
	}
	path, err := sessionlog.Find(dir, args[1])
	if err != nil {
		std.warn(err.Error())
		return exitUsage
	}
	recs, err := sessionlog.Read(path)
	if err == nil {
		err = fn(recs)
	}
	if err != nil {
		std.warn(err.Error())
		return exitFailed
	}
	return 0
}

// saveCommand is /save FILE, at py> and at ai>.
func saveCommand(w *sessionlog.Writer) repl.Command {
	return repl.Command{Name: "/save", Args: "FILE", Help: "write this session as FILE.ipynb, FILE.py or FILE.md", AtPy: true,
		Run: func(_ context.Context, path string, out io.Writer) (repl.Action, error) {
			save(w, path, out)
			return repl.Action{}, nil
		}}
}

// save is /save FILE: this session so far, exported.
func save(w *sessionlog.Writer, path string, out io.Writer) {
	switch {
	case w == nil:
		fmt.Fprintln(out, "this session is not logged (--no-log or log = false), so there is nothing to save")
		return
	case path == "":
		fmt.Fprintln(out, "usage: /save FILE (.ipynb, .py or .md)")
		return
	}
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	recs, err := sessionlog.Read(w.Path)
	if err == nil {
		err = sessionlog.Export(recs, path)
	}
	if err != nil {
		fmt.Fprintf(out, "could not save: %v\n", err)
		return
	}
	fmt.Fprintf(out, "saved this session to %s\n", path)
}
