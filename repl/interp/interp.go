// Package interp holds the words the REPL and the interpreter under it
// share: what running py> input led to, what SIGINT does to the user's
// code, and the read a key wait makes on the waiting thread. It is a leaf
// so that repl, repl/term and the cgo bridge name one type each, and the
// composition root passes values through without converting them.
package interp

// Outcome is what running py> input led to.
type Outcome struct {
	More   bool // the statement is incomplete: show the continuation prompt
	Exit   bool // the code raised SystemExit
	Status int  // the exit status CPython would use, when Exit
	// Error is the type of the exception the input raised (shown as a
	// traceback), or of its SyntaxError; "" when it ran without one.
	Error string
	// Partial is what the code's output left on the terminal's current
	// line (print(x, end="")), to draw the next prompt after it.
	Partial string
}

// SIGINTAction is what the user's code set SIGINT to do: python3's prompt
// does that with a Ctrl-C or a SIGINT, and so does the REPL at py>.
type SIGINTAction int

const (
	SIGINTRaises  SIGINTAction = iota // a Python handler: KeyboardInterrupt by default
	SIGINTKills                       // SIG_DFL: the process dies by it
	SIGINTIgnored                     // SIG_IGN: nothing happens
)

// ReadAhead is a read that a key wait makes on the waiting thread as soon
// as FD is readable, before it returns to Go, and the echo of a key that
// read gave: a person at the keyboard waits for the echo, and what Go does
// first on the way out of a wait can take two thread wake-ups. (Once a
// wait has lasted 10 ms the runtime's monitor marks the goroutine for
// preemption, and a goroutine locked to its thread, as the interpreter's
// is, is then handed to another thread and back before it runs on.)
type ReadAhead struct {
	FD  int    // one of the descriptors waited on; non-blocking
	Buf []byte // what the read may fill
	// Echo is written to EchoFD (-1: nowhere), followed by the key, when
	// the read gave one byte from ' ' to '~': a key typed and read as it
	// was typed, which the caller can tell how to draw beforehand.
	Echo   []byte
	EchoFD int
	N      int // bytes read, 0 when none were
	Echoed int // bytes of Echo and the key written, 0 when none were
	// Behind says more input was waiting behind the key: it was not
	// echoed, and is drawn with the keys that follow it.
	Behind bool
}

// Graphics is what the terminal can draw images with, and the room it has
// for them: the protocol ("kitty", "iterm2", "sixel", or "" when it can draw
// none), a cell's size in pixels, and the window in cells.
type Graphics struct {
	Protocol   string
	CellWidth  int
	CellHeight int
	Cols, Rows int
}
