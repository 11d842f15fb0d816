package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pyaichat/pyaichat/agent/termsafe"
	"github.com/pyaichat/pyaichat/capabilities/spec"
)

// BoundError is a question stopped by one of the loop's bounds (step cap,
// deadline, repeated calls). Its message says which.
type BoundError struct{ Msg string }

func (e *BoundError) Error() string { return e.Msg }

func isBound(err error) bool {
	var b *BoundError
	return errors.As(err, &b)
}

// errDeadline is the cause of a question's context when its wall-clock
// deadline passes, to tell it apart from Ctrl-C.
var errDeadline = errors.New("question deadline")

// errCancelled is a question stopped by Ctrl-C: its message is one plain
// line for the REPL to print, and errors.Is finds context.Canceled in it.
type errCancelled struct{}

func (errCancelled) Error() string        { return "question cancelled" }
func (errCancelled) Is(target error) bool { return target == context.Canceled }

// maxRepeats is how many repeated identical calls end a question: the
// first repeat is answered with an error the model can act on, the second
// shows that it does not.
const maxRepeats = 2

// bounds is the one place that decides whether a question goes on: tool
// steps, calls per step, repeated identical calls, wall-clock time (with
// Ctrl-C, through the question's context) and the size of each result.
// The loop asks it at each of its turns and does what it says.
type bounds struct {
	maxSteps, maxCalls, resultBytes int
	timeout                         time.Duration
	seen                            map[string]int // calls made, by name and canonical arguments
	repeats                         int
}

func newBounds(c Config) *bounds {
	return &bounds{maxSteps: c.MaxSteps, maxCalls: c.MaxCallsPerStep, resultBytes: c.ToolResultBytes, timeout: c.QuestionTimeout, seen: map[string]int{}}
}

// question is the context of one question: it ends at the deadline
// (errDeadline) or when ctx does (Ctrl-C).
func (b *bounds) question(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, b.timeout, errDeadline)
}

// stop says why the question must end now, or nil: Ctrl-C, the deadline,
// or a model that kept repeating a call (lastCall, the label of the last
// call made, is named).
func (b *bounds) stop(ctx context.Context, lastCall string) error {
	if ctx.Err() != nil {
		return b.ended(ctx)
	}
	if b.repeats >= maxRepeats {
		return &BoundError{fmt.Sprintf("stopped: the model kept repeating the same call (%s)", lastCall)}
	}
	return nil
}

// ended is why ctx ended: its deadline, or Ctrl-C.
func (b *bounds) ended(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errDeadline) {
		return &BoundError{fmt.Sprintf("stopped: the question took longer than %s", b.timeout)}
	}
	return errCancelled{}
}

// step says whether the calls of response step (from 0) may run.
func (b *bounds) step(step int) error {
	if step >= b.maxSteps {
		return &BoundError{fmt.Sprintf("stopped: reached the limit of %d tool steps for one question without an answer; ask a narrower question", b.maxSteps)}
	}
	return nil
}

// call says whether the i-th call (from 0) of a response may run, and
// if not, the result the model gets instead.
func (b *bounds) call(ctx context.Context, i int) (notRun string, ok bool) {
	switch {
	case ctx.Err() != nil:
		return spec.ErrorResult(spec.Canceled, "not run: the user cancelled the question"), false
	case i >= b.maxCalls:
		return spec.ErrorResult(spec.TooManyCalls, fmt.Sprintf("not run: at most %d calls per step", b.maxCalls)), false
	}
	return "", true
}

// repeated counts a call by its name and canonical arguments, and says
// whether it was made before in this question.
func (b *bounds) repeated(key string) bool {
	b.seen[key]++
	if b.seen[key] == 1 {
		return false
	}
	b.repeats++
	return true
}

// result bounds what one tool sends to the model.
func (b *bounds) result(res string) string {
	if len(res) <= b.resultBytes {
		return res
	}
	return termsafe.Prefix(res, b.resultBytes) + fmt.Sprintf("\n[truncated: the result was %d bytes; ask for a narrower expression]", len(res))
}
