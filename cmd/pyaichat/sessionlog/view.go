package sessionlog

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/pyaichat/pyaichat/agent/termsafe"
	"github.com/pyaichat/pyaichat/repl/prompt"
)

// Summary is one line of `pyaichat sessions`.
type Summary struct {
	ID         string
	Start, End time.Time
	Model      string
	Inputs     int // py> inputs
	Questions  int
	First      string // the first question
	Ended      bool   // an end record: the session did not crash
}

// Summarize sums up the records of session id.
func Summarize(id string, recs []Record) Summary {
	s := Summary{ID: id}
	for _, r := range recs {
		if s.Start.IsZero() {
			s.Start = r.T
		}
		s.End = r.T
		switch r.Ev {
		case "start":
			s.Model = r.Model
		case "py":
			s.Inputs++
		case "question":
			s.Questions++
			if s.First == "" {
				s.First = r.Text
			}
			if r.Model != "" {
				s.Model = r.Model
			}
		case "end":
			s.Ended = true
		}
	}
	return s
}

// List sums up the sessions logged in dir, newest first.
func List(dir string) []Summary {
	names := logNames(dir)
	var out []Summary
	for i := len(names) - 1; i >= 0; i-- {
		p := filepath.Join(dir, names[i])
		recs, err := Read(p)
		if err != nil {
			continue
		}
		out = append(out, Summarize(IDOf(p), recs))
	}
	return out
}

// WriteList prints summaries as a table, one session a line (what could
// drive a terminal spelled out).
func WriteList(w io.Writer, list []Summary) {
	var b strings.Builder
	writeList(&b, list)
	io.WriteString(w, termsafe.Visible(b.String()))
}

func writeList(w io.Writer, list []Summary) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no sessions logged yet")
		return
	}
	fmt.Fprintf(w, "%-20s  %-16s  %8s  %-16s  %5s  %4s  %s\n", "ID", "START", "DURATION", "MODEL", "PY>", "AI>", "FIRST QUESTION")
	for _, s := range list {
		dur := s.End.Sub(s.Start).Round(time.Second).String()
		if !s.Ended {
			dur += "*" // no end record: still running, or killed
		}
		fmt.Fprintf(w, "%-20s  %-16s  %8s  %-16s  %5d  %4d  %s\n", s.ID, s.Start.Local().Format("2006-01-02 15:04"),
			dur, clip(s.Model, 16), s.Inputs, s.Questions, clip(oneLine(s.First), 60))
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Transcript writes a session as a person reads it: py> inputs with how
// they ended, questions, the tool calls made for them and the answers.
// What the model and the session wrote is shown with anything that could
// drive a terminal spelled out, as the REPL shows it.
func Transcript(w io.Writer, recs []Record) {
	var b strings.Builder
	transcript(&b, recs)
	io.WriteString(w, termsafe.Visible(b.String()))
}

func transcript(w io.Writer, recs []Record) {
	var start time.Time
	for _, r := range recs {
		switch r.Ev {
		case "start":
			start = r.T
			sessionStart(w, r)
		case "end":
			fmt.Fprintf(w, "[session ended with status %d after %s]\n", code(r), r.T.Sub(start).Round(time.Second))
		case "truncated", "output_off":
			fmt.Fprintf(w, "[%s]\n", r.Text)
		case "py":
			pyInput(w, r)
		default:
			agentRecord(w, r)
		}
	}
}

// sessionStart writes the heading: which session, when, with what, where.
func sessionStart(w io.Writer, r Record) {
	fmt.Fprintf(w, "session %s, started %s; pyaichat %s, Python %s, model %s\n", r.ID, r.T.Local().Format("2006-01-02 15:04:05"), r.Version, r.Python, r.Model)
	fmt.Fprintf(w, "in %s", r.Cwd)
	if r.Venv != "" {
		fmt.Fprintf(w, ", virtualenv %s", r.Venv)
	}
	if r.Kernel != "" {
		fmt.Fprintf(w, "; py> on the Jupyter kernel %s", r.Kernel)
	}
	fmt.Fprintln(w)
}

// agentRecord writes a record of the ai> side: a question, the calls made
// for it, the answer and what happened on the way.
func agentRecord(w io.Writer, r Record) {
	switch r.Ev {
	case "question":
		fmt.Fprintln(w, prefixed(r.Text, prompt.AI, prompt.Continuation))
	case "tool_call":
		fmt.Fprintf(w, "    [call %s %s]\n", r.Tool, oneLine(r.Args))
	case "tool_result":
		fmt.Fprintf(w, "    [result of %s: %d bytes sent] %s\n", r.Tool, r.Size, clip(oneLine(r.Result), 100))
	case "answer":
		fmt.Fprintln(w, strings.TrimRight(r.Text, "\n"))
	case "notice":
		fmt.Fprintf(w, "    [%s]\n", r.Text)
	case "usage":
		if r.In+r.Out > 0 {
			fmt.Fprintf(w, "    [tokens: %d in, %d out]\n", r.In, r.Out)
		}
	case "error":
		fmt.Fprintf(w, "    [error: %s]\n", r.Text)
	case "cancelled":
		fmt.Fprintln(w, "    [cancelled]")
	case "compacted":
		compacted(w, r)
	}
}

// pyInput writes a py> input, its output if logged, and how it ended.
func pyInput(w io.Writer, r Record) {
	fmt.Fprintln(w, prefixed(r.Src, prompt.Py, prompt.Continuation))
	if out := outputText(r.Output); out != "" {
		fmt.Fprintln(w, out)
	}
	switch r.Status {
	case "error":
		fmt.Fprintf(w, "    [raised %s]\n", r.Exc)
	case "exit":
		fmt.Fprintf(w, "    [exit %d]\n", code(r))
	}
}

// compacted writes a compaction and the summary that stands for what
// left the conversation.
func compacted(w io.Writer, r Record) {
	if r.Text == "" {
		fmt.Fprintf(w, "    [earlier exchanges dropped; %d kept]\n", r.Calls)
		return
	}
	fmt.Fprintf(w, "    [earlier exchanges compacted; %d kept; summary:]\n%s\n", r.Calls, prefixed(r.Text, "    ", "    "))
}

func code(r Record) int {
	if r.Code == nil {
		return 0
	}
	return *r.Code
}

// prefixed puts first before the first line of text and then before the
// others, as the prompts show a block.
func prefixed(text, first, then string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = then + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// Exchange is one question and its answer, for resuming a conversation,
// with the tool calls the model made for it, one Step a response.
type Exchange struct {
	Question, Answer string
	Steps            []Step
}

// Step is the tool calls of one response, in order, with their results.
type Step struct{ Calls []Call }

// Call is one tool call as it was sent and answered.
type Call struct {
	ID, Tool, Args, Result string
	Extra                  json.RawMessage
}

// Restored is what a session leaves to a session that resumes it: the
// conversation and the py> inputs that ran without an error, in order.
type Restored struct {
	ID string
	// Summary is the note that stands for the exchanges compacted
	// before Conversation, if any.
	Summary      string
	Conversation []Exchange
	Inputs       []string
}

// maxChain bounds how many resumed sessions Load follows back.
const maxChain = 20

// Load is what the session logged at path leaves to one that resumes it.
// A session that itself resumed another (a "resumed" record) carries
// that one's conversation before its own, and so on back, as long as the
// earlier logs are kept; its inputs are its own, which is the state it
// had.
func Load(path string) (Restored, error) {
	recs, err := Read(path)
	if err != nil {
		return Restored{}, err
	}
	out := Restore(IDOf(path), recs)
	dir := filepath.Dir(path)
	for depth := 0; depth < maxChain; depth++ {
		from := resumedFrom(recs)
		if from == "" {
			break
		}
		if recs, err = Read(filepath.Join(dir, from+Ext)); err != nil {
			break // pruned: what is left is still a conversation
		}
		if out.Summary != "" {
			break // the summary stands for what came before
		}
		earlier := Restore(from, recs)
		out.Summary = earlier.Summary
		out.Conversation = append(earlier.Conversation, out.Conversation...)
	}
	return out, nil
}

func resumedFrom(recs []Record) string {
	for _, r := range recs {
		if r.Ev == "resumed" {
			return r.Text
		}
	}
	return ""
}

// notLogged answers a call whose result the log lacks, as the agent
// answers a call it did not run, so that every id stays answered.
const notLogged = `{"error":{"type":"NotRun","message":"no result was logged"}}`

// Restore reads what Restored needs from a session's records. A question
// that got no answer is restored with the reason, as the conversation
// held it.
func Restore(id string, recs []Record) Restored {
	out := Restored{ID: id}
	var open *Exchange
	step := -1
	for _, r := range recs {
		switch r.Ev {
		case "py":
			if r.Status == "ok" {
				out.Inputs = append(out.Inputs, r.Src)
			}
		case "question":
			out.Conversation = append(out.Conversation, Exchange{Question: r.Text})
			open, step = &out.Conversation[len(out.Conversation)-1], -1
		case "compacted":
			open = out.compact(r, open)
		default:
			if open != nil {
				open.apply(r, &step)
			}
		}
	}
	out.dropUnanswered()
	return out
}

// apply adds a record of the open exchange: a call, its result, the
// answer, or why there was none.
func (e *Exchange) apply(r Record, step *int) {
	switch r.Ev {
	case "tool_call":
		e.addCall(r, step)
	case "tool_result":
		e.answerCall(r.CallID, r.Result)
	case "answer":
		e.Answer = r.Text
	case "error":
		e.noAnswer(r.Text)
	case "cancelled":
		e.noAnswer("interrupted")
	}
}

// noAnswer records why a question got no answer, unless it got one.
func (e *Exchange) noAnswer(reason string) {
	if e.Answer == "" {
		e.Answer = "(no answer: " + reason + ")"
	}
}

// dropUnanswered drops a question that never ended (the session was
// killed).
func (out *Restored) dropUnanswered() {
	kept := out.Conversation[:0]
	for _, e := range out.Conversation {
		if e.Answer != "" {
			kept = append(kept, e)
		}
	}
	out.Conversation = kept
}

// compact applies a compacted record: the exchanges before the last
// r.Calls were summarised (r.Text), or dropped without a summary. It
// returns the open exchange, which moved, or nil if it was dropped.
func (out *Restored) compact(r Record, open *Exchange) *Exchange {
	out.Summary = r.Text
	kept := min(max(r.Calls, 0), len(out.Conversation))
	if kept == len(out.Conversation) {
		return open
	}
	out.Conversation = append(out.Conversation[:0:0], out.Conversation[len(out.Conversation)-kept:]...)
	if open == nil || kept == 0 {
		return nil
	}
	return &out.Conversation[len(out.Conversation)-1]
}

// addCall adds a logged call, to the step before it when it has the same
// step number (step, the last one seen), else as a step of its own: a log
// older than step numbers (Step 0) has each call on its own.
func (e *Exchange) addCall(r Record, step *int) {
	if r.Step != *step || r.Step == 0 || len(e.Steps) == 0 {
		e.Steps = append(e.Steps, Step{})
		*step = r.Step
	}
	s := &e.Steps[len(e.Steps)-1]
	s.Calls = append(s.Calls, Call{ID: r.CallID, Tool: r.Tool, Args: r.Args, Result: notLogged, Extra: r.Extra})
}

// answerCall sets the result of the last call with id.
func (e *Exchange) answerCall(id, result string) {
	for i := len(e.Steps) - 1; i >= 0; i-- {
		calls := e.Steps[i].Calls
		for j := len(calls) - 1; j >= 0; j-- {
			if calls[j].ID == id {
				calls[j].Result = result
				return
			}
		}
	}
}
