package app

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/config"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog/live"
	"github.com/pyaichat/pyaichat/pybridge"
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

// startCapture turns --log-output on for a logged session that asked for
// it, after the setup code ran (whose output is not logged).
func startCapture(out *live.Capture, c cmdline, opts config.Log, w *sessionlog.Writer, warn func(string)) {
	if w == nil && c.logOutput {
		warn("--log-output does nothing: this session is not logged (--no-log, log = false, -p, or no state directory)")
	}
	if w == nil || !(c.logOutput || opts.Output) {
		return
	}
	out.Start(warn)
}

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
