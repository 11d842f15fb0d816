package pybridge

// The types pybridge shares with its callers, the same with cgo or without
// (nocgo.go).

import (
	"errors"
	"fmt"

	"github.com/pyaichat/pyaichat/repl/interp"
)

// Error is a Python exception that reached Go.
type Error struct {
	Type      string // exception type name, e.g. "NameError"
	Message   string // str(exception)
	Traceback string // formatted as Python prints it
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Type
	}
	return e.Type + ": " + e.Message
}

// ErrClosed is returned for jobs submitted after Close.
var ErrClosed = errors.New("pybridge: interpreter is closed")

// LineReader supplies lines to user code that reads stdin (input(),
// sys.stdin). prompt is shown first when showPrompt is set. It returns the
// line with its newline, io.EOF at end of input, or ErrInterrupted when the
// user pressed Ctrl-C while it waited.
type LineReader func(prompt string, showPrompt bool) (string, error)

// ErrInterrupted is returned by a LineReader cut short by Ctrl-C.
var ErrInterrupted = errors.New("interrupted")

// Config says how to start the interpreter.
type Config struct {
	// Args is a python3 command line without the program's name: python3's
	// options, then -c cmd, -m mod or a file, and what follows. Python
	// reads it as python3 does (sys.flags, sys.warnoptions, sys._xoptions,
	// sys.argv); it runs nothing in it. Empty is the bare REPL's.
	Args []string
	// Executable becomes sys.executable; a virtualenv's bin/python makes
	// that venv active. Empty means RealExecutable().
	Executable string
	// ReadLine serves input() and sys.stdin. Nil means end of input.
	ReadLine LineReader
	// CacheDir keeps pyaichat's helper modules compiled between runs
	// (see codeCache). Empty means they are compiled every time.
	CacheDir string
}

// Error types of isolated calls, besides the Python exception types that the
// helper itself reports.
const (
	ErrTypeTimeout   = "Timeout"        // the deadline passed; the copy was killed
	ErrTypeCanceled  = "Canceled"       // the context ended first; the copy was killed
	ErrTypeCrashed   = "Crashed"        // the copy died without a result (a signal, os._exit)
	ErrTypeIsolation = "IsolationError" // the copy could not be made (pipe, fork), or its result was over 64 MiB
)

// IsolationStats counts what isolated calls did, for tests and benchmarks.
type IsolationStats struct {
	Prepared  int64 // ready copies made
	Used      int64 // isolated calls answered by a ready copy
	Forked    int64 // isolated calls that forked a copy on demand
	Discarded int64 // ready copies discarded unused (a job ran, Close, a thread)
	Skipped   int64 // requests for a copy refused: other Python threads exist
	Ready     bool  // a ready copy is waiting now
}

// OutputPart is one run of what Python wrote while output is captured
// (CaptureOutput), in the order written.
type OutputPart struct {
	// Kind is "stdout", "stderr", "result" (what sys.displayhook showed)
	// or "error" (a traceback or a SyntaxError shown).
	Kind string
	Text string
}

// CallKind says what a helper call may do, and so where and how it runs.
type CallKind int

const (
	// CallHelper: a helper of pyaichat's that runs no user code but may
	// change the session (it discards a ready copy, PrepareIsolated).
	CallHelper CallKind = iota
	// CallUserCode: the helper may run the user's code; Ctrl-C reaches
	// it as KeyboardInterrupt.
	CallUserCode
	// CallReadOnly: the helper runs no user code and changes nothing a
	// later isolated call could see (no object of the session, no module,
	// no cache the isolated helper reads), so a ready copy of the session
	// stays. The cyclic garbage collector is off during the call, so that
	// no user __del__ runs in it.
	CallReadOnly
	// CallIsolated: the helper runs in a fork()ed copy of the session (see
	// isolated), so that whatever it does to objects (user __repr__,
	// properties, walrus, list.append) never reaches the session. ctx must
	// have a deadline: the copy is killed then (an *Error of Type
	// ErrTypeTimeout), or when ctx is canceled (ErrTypeCanceled).
	CallIsolated
)

// ExitError is Start's error when Python exits as it starts, as python3
// does for a command line it refuses, having said why: the process
// should exit with Status.
type ExitError struct{ Status int }

func (e ExitError) Error() string {
	return fmt.Sprintf("Python exited with status %d as it started", e.Status)
}

// Display is where images are drawn: the user's terminal. cmd/pyaichat
// adapts repl/term's Terminal to it.
type Display interface {
	// Graphics is what the terminal draws images with, and its size.
	Graphics() interp.Graphics
	// DrawImage draws a PNG image at the cursor and ends the line.
	DrawImage(png []byte) error
}
