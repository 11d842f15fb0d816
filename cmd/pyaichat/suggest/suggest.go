// Package suggest gives py> its inline suggestions (repl.Options.Complete):
// the rest of the name being typed, from the session's namespace, the
// builtins, keywords and attributes, through a read-only helper on the
// interpreter's thread that runs no user code (python/suggest.py).
package suggest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/python"
)

// suggestModule is the helper behind py>'s inline suggestions.
const suggestModule = "_pyaichat_suggest"

// suggestWait bounds how long a key waits for a suggestion: the
// interpreter's thread answers in microseconds when idle, but a thread of
// the user's may hold the GIL; the key is not held up for it.
const suggestWait = 100 * time.Millisecond

// suggestPause is how long keys get no suggestion after one was given up.
const suggestPause = time.Second

// Suggester completes names at py> for repl.Options.Complete, on the
// interpreter's thread, through a read-only call that runs no user code
// (python/suggest.py).
type Suggester struct {
	in  Interpreter
	gen *atomic.Uint64 // counts what ran at py>: the helper's sorted names are kept while it stays
	// stalled is when suggestions may be asked again (unix nanos) after a
	// call outlived suggestWait: its job still waits for the GIL, and keys
	// meanwhile get none rather than queue more calls behind it.
	stalled atomic.Int64
}

// newSuggester loads the helper, before the first prompt (loading runs a
// job that may not wait for a key).
func newSuggester(in Interpreter, gen *atomic.Uint64) (*Suggester, error) {
	if err := in.LoadModule(suggestModule, python.Suggest); err != nil {
		return nil, err
	}
	return &Suggester{in: in, gen: gen}, nil
}

// Interpreter is what suggestions need of the interpreter: a helper
// module loaded, its read-only calls, and whether user code is running.
type Interpreter interface {
	LoadModule(name, source string) error
	Call(ctx context.Context, kind pybridge.CallKind, module, fn, arg string) (string, error)
	Busy() bool
}

// Start loads the helper and returns what py> asks for its suggestions
// and TAB's lists (repl.Options.Complete, Candidates, Arguments); the
// helper's sorted names are brought up to date once ran's inputs settle.
func Start(in Interpreter, ran *Runs) (*Suggester, error) {
	sg, err := newSuggester(in, &ran.n)
	if err != nil {
		return nil, fmt.Errorf("inline suggestions are off: %w", err)
	}
	warm := sg.warm
	ran.settled.Store(&warm)
	return sg, nil
}

// warm brings the helper's sorted names up to date with the session (the
// cost of the first key after a line that made many names), unless the
// interpreter is busy: then the first key does it.
func (s *Suggester) warm() { s.Complete(nil, "") }

// Candidates lists the names prefix may complete to after path, for TAB.
func (s *Suggester) Candidates(path []string, prefix string) []string {
	list := s.ask("candidates", path, prefix)
	if list == "" {
		return nil
	}
	return strings.Split(list, "\n")
}

// Arguments lists the keyword arguments of the function callee names
// that start with prefix, for TAB inside a call.
func (s *Suggester) Arguments(callee []string, prefix string) []string {
	list := s.ask("arguments", callee, prefix)
	if list == "" {
		return nil
	}
	return strings.Split(list, "\n")
}

// Complete returns the rest of the name to suggest after prefix, or "".
func (s *Suggester) Complete(path []string, prefix string) string {
	return s.ask("suggest", path, prefix)
}

// ask calls the helper's fn for path and prefix, "" where the
// interpreter is busy, or was too slow of late.
func (s *Suggester) ask(fn string, path []string, prefix string) string {
	if s.in.Busy() {
		return ""
	}
	if time.Now().UnixNano() < s.stalled.Load() {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), suggestWait)
	defer cancel()
	arg := strconv.FormatUint(s.gen.Load(), 10) + "\n" + strings.Join(path, ".") + "\n" + prefix
	rest, err := s.in.Call(ctx, pybridge.CallReadOnly, suggestModule, fn, arg)
	if err != nil {
		if ctx.Err() != nil {
			s.stalled.Store(time.Now().Add(suggestPause).UnixNano())
		}
		return ""
	}
	return rest
}
