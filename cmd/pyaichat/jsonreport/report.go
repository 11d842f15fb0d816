// Package jsonreport is what -p --json and --json-stream print. --json
// prints one result object; --json-stream prints each event as a JSON
// line as it happens, then the same result object as its last line, with
// "event":"result".
//
// The result's error.kind says what failed, and the exit status follows
// it: not_configured and config 2, failed and bound 1, cancelled 130;
// setup_exit, with the status, where the setup code ended pyaichat (a
// SystemExit from -c, -m or FILE is shown and the question still asked,
// as python3 -i goes on to its prompt).
package jsonreport

import (
	"encoding/json"
	"io"
	"strings"
	"sync"

	"github.com/pyaichat/pyaichat/agent/event"
)

type toolCall struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Arguments   string `json:"arguments"`
	Result      string `json:"result"`
	ResultBytes int    `json:"result_bytes"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// ContextTokens is the last request's prompt: how full the context
	// is; ContextWindow is 0 and CostUSD null when not known.
	ContextTokens int      `json:"context_tokens"`
	ContextWindow int      `json:"context_window"`
	CostUSD       *float64 `json:"cost_usd"`
}

type failure struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Report is one question's report: its fields are the result object.
type Report struct {
	Event     string     `json:"event,omitempty"` // "result" in a stream
	Model     string     `json:"model"`
	Question  string     `json:"question"`
	Answer    string     `json:"answer"`
	ToolCalls []toolCall `json:"tool_calls"`
	Usage     *usage     `json:"usage"` // null when the server did not say
	Error     *failure   `json:"error,omitempty"`
	Status    int        `json:"status"`
	calls     map[string]int
	text      strings.Builder
	answered  bool
	mu        sync.Mutex
	out       io.Writer
	stream    bool
}

// New collects a -p question's events for out; stream writes each one
// as it comes.
func New(model, question string, stream bool, out io.Writer) *Report {
	return &Report{Model: model, Question: question, ToolCalls: []toolCall{}, calls: map[string]int{}, out: out, stream: stream}
}

// Events is agent.Config.Events for the report (nil: no report).
func (r *Report) Events() func(event.Event) {
	if r == nil {
		return nil
	}
	return r.event
}

// event is agent.Config.Events: the report keeps what records the
// question, not what only shows it (the status line's, the summary).
func (r *Report) event(ev event.Event) {
	if ev.Kind.Shown() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stream {
		r.line(streamEvent(ev))
	}
	switch ev.Kind {
	case event.Question:
		r.Model = ev.Model
	case event.Text:
		r.text.WriteString(ev.Text)
	case event.Answer:
		r.Answer, r.answered = ev.Text, true
	case event.ToolCall:
		r.calls[ev.ID] = len(r.ToolCalls)
		r.ToolCalls = append(r.ToolCalls, toolCall{ID: ev.ID, Name: ev.Tool, Arguments: ev.Args})
	case event.ToolResult:
		if i, ok := r.calls[ev.ID]; ok {
			r.ToolCalls[i].Result, r.ToolCalls[i].ResultBytes = ev.Result, ev.Size
		}
	case event.Usage:
		if ev.Usage != nil {
			r.Usage = usageOf(ev)
		}
	}
}

// Finish prints the result with its error and exit status (nothing
// without a report).
func (r *Report) Finish(kind, msg string, status int) int {
	if r == nil {
		return status
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.answered {
		r.Answer = r.text.String()
	}
	if kind != "" {
		r.Error = &failure{Kind: kind, Message: msg}
	}
	r.Status = status
	if r.stream {
		r.Event = "result"
	}
	r.line(r)
	return status
}

func (r *Report) line(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	r.out.Write(append(b, '\n'))
}

// streamEvent is one line of --json-stream.
func streamEvent(ev event.Event) map[string]any {
	m := map[string]any{"event": string(ev.Kind)}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set("text", ev.Text)
	set("model", ev.Model)
	set("id", ev.ID)
	set("name", ev.Tool)
	set("arguments", ev.Args)
	set("kind", ev.ErrorKind)
	switch ev.Kind {
	case event.ToolResult:
		m["result"], m["result_bytes"] = ev.Result, ev.Size
	case event.Usage:
		m["calls"] = ev.Calls
		if ev.Usage != nil {
			m["usage"] = usageOf(ev)
		}
	}
	return m
}

// usageOf is a Usage event's tokens, context and cost, as reported.
func usageOf(ev event.Event) *usage {
	u := ev.Usage
	ju := &usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if sp := ev.Spend; sp != nil {
		ju.ContextTokens, ju.ContextWindow, ju.CostUSD = sp.Context, sp.Window, sp.CostUSD
	}
	return ju
}
