package app

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog"
	"github.com/pyaichat/pyaichat/pybridge/kernel"
	"github.com/pyaichat/pyaichat/repl/interp"
)

// kernelInterp is the REPL's interpreter when py> runs in a Jupyter
// kernel: each input goes as an execute_request, and its stream, result
// and error messages are shown as the kernel sends them. Lines typed one
// at a time are gathered until the kernel says the input is complete
// (is_complete_request), as IPython's console does.
type kernelInterp struct {
	client         *kernel.Client
	stdout, stderr io.Writer
	// plain strips the kernel's colours, for output that is not a terminal.
	plain bool
	warn  func(string)

	pending []string // the lines of an unfinished input
	busy    atomic.Bool
	// keepKernel is set when the input that asked to leave asked to leave
	// the kernel running (IPython's exit(keep_kernel=True)), which an
	// owned kernel cannot be.
	keepKernel atomic.Bool

	mu     sync.Mutex
	output []sessionlog.Output // the last input's output, for the session log
}

// kernelAnswer bounds how long a request that runs no user code (is the
// input complete?, an interrupt) may wait for the kernel: a hang, not a
// measure.
const kernelAnswer = 30 * time.Second

// leaveWords are the inputs that leave pyaichat rather than go to the
// kernel, where IPython's exit would end the kernel itself: an attached
// kernel stays running (an owned one is shut down by pyaichat), as
// Ctrl-D leaves jupyter console. exit(keep_kernel=True) and the like
// still go to the kernel.
var leaveWords = map[string]bool{"exit": true, "quit": true, "exit()": true, "quit()": true}

func (k *kernelInterp) Push(line string) (interp.Outcome, error) {
	if len(k.pending) == 0 && leaveWords[strings.TrimSpace(line)] {
		return interp.Outcome{Exit: true}, nil
	}
	k.pending = append(k.pending, line)
	source := strings.Join(k.pending, "\n")
	if strings.TrimSpace(source) == "" {
		k.pending = nil
		return interp.Outcome{}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), kernelAnswer)
	verdict, err := k.client.IsComplete(ctx, source)
	cancel()
	if err != nil {
		k.pending = nil
		return interp.Outcome{}, err
	}
	if verdict.Status == "incomplete" {
		return interp.Outcome{More: true}, nil
	}
	k.pending = nil
	return k.run(source)
}

func (k *kernelInterp) PushEOF() (interp.Outcome, error) {
	source := strings.Join(k.pending, "\n")
	k.pending = nil
	if strings.TrimSpace(source) == "" {
		return interp.Outcome{}, nil
	}
	return k.run(source)
}

func (k *kernelInterp) RunBlock(source string) (interp.Outcome, error) {
	k.pending = nil
	return k.run(source)
}

func (k *kernelInterp) ResetBlock() error {
	k.pending = nil
	return nil
}

// run executes one whole input and shows its output.
func (k *kernelInterp) run(source string) (interp.Outcome, error) {
	k.busy.Store(true)
	defer k.busy.Store(false)
	k.mu.Lock()
	k.output = nil
	k.mu.Unlock()
	var partial string
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go k.watchHeartbeat(ctx, cancel)
	reply, err := k.client.Execute(ctx, source, kernel.ExecuteOptions{StoreHistory: true}, func(o kernel.Output) {
		partial = k.show(o, partial)
	})
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
			err = cause
		}
		return interp.Outcome{Partial: partial}, err
	}
	out := interp.Outcome{Partial: partial}
	if reply.Status == "error" {
		out.Error = reply.EName
	}
	if exit, keep := reply.AsksExit(); exit {
		out.Exit = true
		k.keepKernel.Store(keep)
	}
	return out, nil
}

// Heartbeat checks while an input runs: the first after heartbeatEvery,
// then as often; missing heartbeatMisses in a row (each given up after
// heartbeatPatience, a bound on a hang) gives the input up, so that a
// kernel that died or whose host went away does not hold the prompt.
const (
	heartbeatEvery    = 2 * time.Second
	heartbeatPatience = 5 * time.Second
	heartbeatMisses   = 2
)

// watchHeartbeat pings the kernel until ctx ends, and ends ctx when the
// kernel stops answering.
func (k *kernelInterp) watchHeartbeat(ctx context.Context, cancel context.CancelCauseFunc) {
	ticker := time.NewTicker(heartbeatEvery)
	defer ticker.Stop()
	for misses := 0; ; {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		ping, stop := context.WithTimeout(ctx, heartbeatPatience)
		err := k.client.Heartbeat(ping)
		stop()
		if err == nil || ctx.Err() != nil {
			misses = 0
			continue
		}
		if misses++; misses >= heartbeatMisses {
			cancel(fmt.Errorf("the kernel stopped answering its heartbeat (it may have died, or its host is unreachable): %w", err))
			return
		}
	}
}

// show writes one output and returns what the output so far left on the
// terminal's current line.
func (k *kernelInterp) show(o kernel.Output, partial string) string {
	var w io.Writer = k.stdout
	var text, kind string
	switch o.Kind {
	case kernel.Stream:
		text, kind = o.Text, o.Name
		if o.Name == "stderr" {
			w = k.stderr
		}
	case kernel.Result, kernel.Display:
		text, kind = withNewline(o.Text), "result"
	case kernel.Error:
		text, kind = withNewline(strings.Join(o.Traceback, "\n")), "error"
		w = k.stderr
	}
	if k.plain {
		text = ansiEscape().ReplaceAllString(text, "")
	}
	k.mu.Lock()
	k.output = append(k.output, sessionlog.Output{Kind: kind, Text: ansiEscape().ReplaceAllString(text, "")})
	k.mu.Unlock()
	io.WriteString(w, text)
	if w != k.stdout {
		return partial
	}
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		return text[i+1:]
	}
	return partial + text
}

// lastOutput is what the last input printed, for the session log.
func (k *kernelInterp) lastOutput() []sessionlog.Output {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.output
}

// ansiEscape matches the SGR sequences IPython colours tracebacks with.
var ansiEscape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;]*m") })

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// Interrupt passes a Ctrl-C on to the kernel, as an interrupt_request on
// its control channel (the kernel runs elsewhere: no signal reaches it).
func (k *kernelInterp) Interrupt() {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), kernelAnswer)
		defer cancel()
		if err := k.client.Interrupt(ctx); err != nil {
			k.warn(fmt.Sprintf("the kernel did not take the interrupt: %v", err))
		}
	}()
}

func (k *kernelInterp) Busy() bool { return k.busy.Load() }

// Stuck is never said of a kernel: a Ctrl-C it does not act on is sent
// again by the next one, and the kernel is not this process to abandon.
func (k *kernelInterp) Stuck(time.Duration) bool { return false }

// Interrupts and SignalErrors are the embedded Python's own signals; a
// kernel's come back as its output.
func (k *kernelInterp) Interrupts() <-chan struct{}              { return nil }
func (k *kernelInterp) SignalErrors() <-chan struct{}            { return nil }
func (k *kernelInterp) ShowSignalError() (interp.Outcome, error) { return interp.Outcome{}, nil }

// SIGINT at the prompt is pyaichat's: the line is dropped, as IPython's
// console drops it.
func (k *kernelInterp) SIGINT() interp.SIGINTAction { return interp.SIGINTRaises }
func (k *kernelInterp) DieBySIGINT()                {}
func (k *kernelInterp) RunSIGINTHandler() bool      { return false }
func (k *kernelInterp) SIGINTToUser(bool)           {}
