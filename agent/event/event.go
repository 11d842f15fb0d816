// Package event is what the ai> loop (package agent) tells of a question
// as it answers it, and the small interface of what shows it: the
// terminal renderer (agent/view), the session log and -p's JSON
// (cmd/pyaichat) consume the same values. It is a package of its own so
// that the renderer needs nothing of the loop, and the loop nothing of
// the renderer.
package event

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/pyaichat/pyaichat/agent/llm"
)

// Kind names what happened in a question.
type Kind string

// The events of one question, in the order they can happen. Text and
// Thinking come as the stream delivers them; Answer once, with the whole
// answer, before Usage; then Error or Cancelled when the question did not
// end with an answer; Summary last, always. Busy and Summary are for what
// shows the question; a record of it (the log, JSON) has no use for them.
// A slash command is shown through a view too: its Output or Listing, then
// Cancelled after Ctrl-C, then Summary (with no Totals).
const (
	Question   Kind = "question"    // Text: the question
	Busy       Kind = "busy"        // Text: what is waited for; Tool: the tool that runs, "" for the model
	Thinking   Kind = "thinking"    // Text: a piece of reasoning
	Text       Kind = "text"        // Text: a piece of the answer
	ToolCall   Kind = "tool_call"   // ID, Tool, Args, Step, Extra
	ToolResult Kind = "tool_result" // ID, Tool, Result (as sent), Size
	Notice     Kind = "notice"      // Text: a retry, a cut response...
	Answer     Kind = "answer"      // Text: the whole answer shown
	Usage      Kind = "usage"       // Usage (when the server told), Calls
	Error      Kind = "error"       // Text: one line; ErrorKind
	Cancelled  Kind = "cancelled"   // Ctrl-C
	Summary    Kind = "summary"     // Summary: what the question did
	Output     Kind = "output"      // Text: what a slash command printed, prose a terminal wraps at words
	Listing    Kind = "listing"     // Text: what a slash command printed that is data or code, shown as it is
	// Compacted: older exchanges left the conversation; Text is the
	// summary that stands for all that left so far ("" when there is
	// none: they were dropped), Calls how many exchanges were kept.
	Compacted Kind = "compacted"
)

// Shown says whether an event only serves to show the question (Busy,
// Summary, Output, Listing): a record of the question leaves it out.
func (k Kind) Shown() bool { return k == Busy || k == Summary || k == Output || k == Listing }

// Event is one thing that happened while a question was answered. Every
// text in it has had the API key redacted, and a tool
// result is exactly what was sent to the model (filtered and capped).
type Event struct {
	Kind      Kind
	Model     string // Question
	Text      string
	ID        string // the tool call's id
	Tool      string
	Args      string
	Result    string
	Size      int // bytes of Result
	Usage     *llm.Usage
	Spend     *Spend // Usage: the context used and the cost, with Usage
	Calls     int    // Usage: the tool calls the question made
	ErrorKind string
	// Step is a ToolCall's response in its question, from 1: the calls
	// of one assistant message share it. Extra is the call's
	// extra_content as the server sent it (Gemini's thought signature),
	// which a resumed conversation must send back.
	Step  int
	Extra json.RawMessage
	// Summary is the Summary event's.
	Summary *Totals
}

// Totals is what a question did, for the line that ends it.
type Totals struct {
	Calls          []string // each call run, as a label: get_repr(df.shape)
	Sent, Declined int      // results the user was asked about (share = "ask")
	Redacted       int      // secrets redacted from what was sent
	Usage          *llm.Usage
	Spend          *Spend // with Usage
}

// Spend is what a question used of the model's context, and what it
// cost where the prices are known.
type Spend struct {
	Context int      // tokens of the question's last request
	Window  int      // the model's context window in tokens; 0 when unknown
	CostUSD *float64 // nil when no price is known
}

// Share says how full the context was: the share of the window when it
// is known, else the tokens.
func (s *Spend) Share() string {
	if s.Window <= 0 {
		return fmt.Sprintf("%d tokens", s.Context)
	}
	return fmt.Sprintf("%d%% of %s", (s.Context*100+s.Window/2)/s.Window, shortTokens(s.Window))
}

// shortTokens is a token count as 128k or 1M.
func shortTokens(n int) string {
	switch {
	case n >= 1000000 && n%1000000 < 50000:
		return fmt.Sprintf("%dM", (n+500000)/1000000)
	case n >= 1000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	}
	return fmt.Sprint(n)
}

// FormatUSD is a cost in US dollars with the precision small costs need.
func FormatUSD(usd float64) string {
	if usd < 0.01 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// Outgoing is one tool result about to be sent under share = "ask": what
// the user is asked about.
type Outgoing struct {
	Tool      string // the capability the model called
	Arguments string // its arguments, as the model wrote them
	// Result is exactly what would be sent: filtered and capped.
	Result string
	// Preview is what to show the user before asking: the call on one
	// line, then the start of Result (bounded), indented, every character
	// that could drive a terminal spelled out, the API key redacted. It
	// ends with a newline.
	Preview string
}

// Confirm asks whether o may be sent; it should end early with ctx's
// error when ctx is cancelled.
type Confirm func(ctx context.Context, o Outgoing) (bool, error)

// View shows one question: every event, as it happens, and the question
// under share = "ask", around which it draws. Its methods are called on
// the question's goroutine.
type View interface {
	Event(Event)
	// Confirm asks, through ask, whether o may be sent.
	Confirm(ctx context.Context, o Outgoing, ask Confirm) (bool, error)
}

// NewView makes the View of one question: the answer goes to out and
// notices (retries, the summary line) to notices, which may be out
// itself. ctx is cancelled by Ctrl-C, and by nothing else.
type NewView func(ctx context.Context, out, notices io.Writer) View
