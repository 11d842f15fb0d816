package suggest

import (
	"sync/atomic"
	"time"

	"github.com/pyaichat/pyaichat/repl/quiet"
)

// Runs counts the inputs run at py> and, once one has run and no other
// followed within settleAfterRun, calls settled: the suggester sorts the
// session's names then, while the user reads the output, instead of at the
// first key typed. The wait is a quiet.Timer, which an input does not
// reset (see repl/quiet).
type Runs struct {
	n       atomic.Uint64
	settled atomic.Pointer[func()]
	pause   *quiet.Timer
}

const settleAfterRun = 30 * time.Millisecond

// NewRuns counts from none.
func NewRuns() *Runs {
	r := new(Runs)
	r.pause = quiet.After(settleAfterRun, r.settle)
	return r
}

// Done counts one input run.
func (r *Runs) Done() {
	r.n.Add(1)
	if r.settled.Load() != nil {
		r.pause.Poke()
	}
}

func (r *Runs) settle() {
	if f := r.settled.Load(); f != nil {
		(*f)()
	}
}
