// Package live keeps the running session's log: it records each py>
// input with what it printed and the assistant's events, saves the
// session so far (/save), and resumes an earlier session into this one
// (--continue, --resume). The log's format and reading are sessionlog's.
package live

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog"
	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/repl/interp"
)

// PyRecord is a py> input and how it ended, as the log keeps it.
func PyRecord(src string, o interp.Outcome) sessionlog.Record {
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

// Inputs is repl.Options.OnInput for the log (nil: no log), with each
// input's output when out captures it.
func Inputs(w *sessionlog.Writer, out *Capture) func(string, interp.Outcome) {
	if w == nil {
		return nil
	}
	return func(src string, o interp.Outcome) { out.log(w, PyRecord(src, o)) }
}

// Capture is --log-output (log_output = true): what each py> input
// printed, copied by the interpreter (pybridge's CaptureOutput), goes
// into its record once Start has turned it on.
type Capture struct {
	in Source
	on atomic.Bool
}

// Source copies what Python prints: the embedded interpreter.
type Source interface {
	CaptureOutput(limit int) error
	TakeOutput() (parts []pybridge.OutputPart, written int)
	StopCapture()
}

// NewCapture copies what in prints, off until Start.
func NewCapture(in Source) *Capture { return &Capture{in: in} }

// Start turns capture on, after the setup code ran (whose output is not
// logged).
func (o *Capture) Start(warn func(string)) {
	if err := o.in.CaptureOutput(sessionlog.MaxOutput); err != nil {
		warn(fmt.Sprintf("Python's output is not logged: %v", err))
		return
	}
	o.on.Store(true)
}

// Begin drops what was written since the last input ended (a thread's
// output between inputs, the assistant's tools'): it is not this input's.
func (o *Capture) Begin() {
	if o.on.Load() {
		o.in.TakeOutput()
	}
}

// log writes r with the output of its input, and stops capturing once the
// log keeps no more of it (its output_off record says so).
func (o *Capture) log(w *sessionlog.Writer, r sessionlog.Record) {
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

// Events is agent.Config.Events for the log (nil: no log).
func Events(w *sessionlog.Writer) func(event.Event) {
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
