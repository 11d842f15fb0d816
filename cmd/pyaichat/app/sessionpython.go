package app

import (
	"time"

	"github.com/pyaichat/pyaichat/capabilities"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog/live"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/suggest"
	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/repl"
	"github.com/pyaichat/pyaichat/repl/interp"
)

// sessionPython is the interpreter as an interactive session drives it: the
// embedded CPython (*pybridge.Interp), or a test's fake, so that start-up
// can be tested without starting CPython. It is made of what each of the
// session's parts needs of it.
type sessionPython interface {
	repl.Interpreter     // py>
	capabilities.Session // the assistant's capabilities
	setupRunner          // -c, -m, FILE, PYTHONSTARTUP
	live.Source          // --log-output
	suggest.Interpreter  // inline suggestions
	RecentContext() (string, error)
	SetMagics(on bool) error
	// MoreLines says whether a py> block typed so far is incomplete
	// (repl.Options.MoreLines).
	MoreLines(source string) bool
	// Host, CanHost and AwaitInput let the REPL read keys on the
	// interpreter's thread (repl.Options.Host).
	Host(fn func()) error
	CanHost() bool
	AwaitInput(fds []int, ahead *interp.ReadAhead) (bool, error)
	SetDisplay(d pybridge.Display)
	SetFigureDir(dir string) error
	// Exit ends the interpreter as python3 ends, and returns the status
	// the process exits with.
	Exit(status int, patience time.Duration, notice func(waitingFor string)) int
}

// pythonStarter starts the interpreter of an interactive session with
// readLine as its input() on a pipe (nil on a terminal).
type pythonStarter func(c cmdline, readLine pybridge.LineReader, terminal bool, warn func(string)) (sessionPython, error)

// embeddedPython starts the CPython pyaichat embeds.
func embeddedPython(c cmdline, readLine pybridge.LineReader, terminal bool, warn func(string)) (sessionPython, error) {
	in, err := startPython(c, readLine, terminal, warn)
	if err != nil {
		return nil, err // not a nil *Interp in a non-nil sessionPython
	}
	return in, nil
}

// setupRunner runs the code pyaichat is given before its first prompt.
type setupRunner interface {
	RunCommand(source string) (interp.Outcome, error)
	RunModule(name string) (interp.Outcome, error)
	RunFile(path string) (interp.Outcome, error)
	RunStartup(path string) (interp.Outcome, error)
	SkipSourceFirstLine() error
}
