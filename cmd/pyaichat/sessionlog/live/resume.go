package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pyaichat/pyaichat/agent"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/termsafe"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog"
	"github.com/pyaichat/pyaichat/repl"
	"github.com/pyaichat/pyaichat/repl/interp"
	"github.com/pyaichat/pyaichat/repl/prompt"
	"github.com/pyaichat/pyaichat/repl/term"
)

// Into is what --continue and --resume need of the new session.
type Into struct {
	Loop      *repl.Loop
	Assistant *agent.Conversation // nil when ai> is unavailable
	In        repl.Interpreter
	Term      *term.Terminal // nil: no terminal to ask on
	Log       *sessionlog.Writer
	Capture   *Capture
	// Out is where resuming speaks, Prose lays a paragraph out for it,
	// and Warn says what went wrong.
	Out   io.Writer
	Prose func(string) string
	Warn  func(string)
}

// Latest is the id that resumes the newest session (--continue).
const Latest = "\x00latest"

// maxReplayShown bounds the inputs listed before asking; all of them run.
const maxReplayShown = 30

// Resume restores an earlier session of dir (id, or Latest) into this one:
// its conversation, so the next question carries it, and, if the user says
// so, its py> inputs that ran without an error, run again in order up to
// the first that fails. Nothing runs without a y.
func Resume(dir, id string, r Into) {
	var path string
	var err error
	if id == Latest {
		path, err = sessionlog.Latest(dir, logPath(r.Log))
	} else {
		path, err = sessionlog.Find(dir, id)
	}
	var old sessionlog.Restored
	if err == nil {
		old, err = sessionlog.Load(path)
	}
	if err != nil {
		r.Warn("cannot resume: " + err.Error())
		return
	}
	if r.Log != nil {
		r.Log.Write(sessionlog.Record{Ev: "resumed", Text: old.ID})
	}
	out := r.Out
	if r.Assistant != nil && (len(old.Conversation) > 0 || old.Summary != "") {
		r.Assistant.Resume(old.Summary, conversationMessages(old.Conversation))
	}
	fmt.Fprintln(out, r.Prose(fmt.Sprintf("resuming session %s: %s restored%s", old.ID, plural(len(old.Conversation), "question and its answer", "questions and their answers"), callsNote(old.Conversation))))
	if len(old.Inputs) == 0 {
		return
	}
	fmt.Fprintf(out, "its py> inputs that ran without an error (%d):\n", len(old.Inputs))
	for i, src := range old.Inputs {
		if i == maxReplayShown {
			fmt.Fprintf(out, "  ... and %d more\n", len(old.Inputs)-i)
			break
		}
		fmt.Fprintln(out, termsafe.Visible(indentBlock(src)))
	}
	if r.Term == nil {
		fmt.Fprintln(out, r.Prose("not run again: there is no terminal to ask on"))
		return
	}
	var yes bool
	r.Loop.Ask(func(ctx context.Context) error {
		yes, err = r.Term.AskYesNo(ctx, out, "run them again now? [y/N] ")
		return err
	})
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(out)
	}
	if !yes {
		fmt.Fprintln(out, "not run")
		return
	}
	replay(old.Inputs, r)
}

// conversationMessages is a logged conversation in the wire form it was
// sent: each question, for each response that called tools an assistant
// message with those calls and a tool message with each result (the same
// ids), then the answer. The text a response said before its calls is in
// the answer, which the log keeps whole.
func conversationMessages(conv []sessionlog.Exchange) []llm.Message {
	var msgs []llm.Message
	for _, e := range conv {
		msgs = append(msgs, llm.Message{Role: "user", Content: e.Question})
		for _, step := range e.Steps {
			calls := make([]llm.ToolCall, len(step.Calls))
			for i, c := range step.Calls {
				calls[i] = llm.ToolCall{ID: c.ID, Type: "function", Name: c.Tool, Arguments: c.Args, Extra: c.Extra}
			}
			msgs = append(msgs, llm.Message{Role: "assistant", ToolCalls: calls})
			for _, c := range step.Calls {
				msgs = append(msgs, llm.Message{Role: "tool", ToolCallID: c.ID, Content: c.Result})
			}
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Content: e.Answer})
	}
	return msgs
}

// replay runs inputs as pasted blocks, each shown first, and stops at the
// first that raises or exits.
func replay(inputs []string, r Into) {
	out := r.Out
	for i, src := range inputs {
		fmt.Fprintln(out, termsafe.Visible(indentBlockWith(src, prompt.Py)))
		r.Capture.Begin()
		o, err := r.In.RunBlock(src + "\n")
		res := interp.Outcome{Exit: o.Exit, Status: o.Status, Error: o.Error}
		if r.Log != nil && err == nil {
			r.Capture.log(r.Log, PyRecord(src, res))
		}
		switch {
		case err != nil:
			r.Warn(err.Error())
		case o.Exit:
			fmt.Fprintf(out, "stopped: that input exited (status %d); %d not run\n", o.Status, len(inputs)-i-1)
		case o.Error != "":
			fmt.Fprintf(out, "stopped: that input raised %s; %d not run\n", o.Error, len(inputs)-i-1)
		default:
			continue
		}
		return
	}
	fmt.Fprintf(out, "ran %s again\n", plural(len(inputs), "input", "inputs"))
}

// callsNote says how many tool calls come back with the conversation.
func callsNote(conv []sessionlog.Exchange) string {
	n := 0
	for _, e := range conv {
		for _, s := range e.Steps {
			n += len(s.Calls)
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", with %s (results as they were then)", plural(n, "tool call", "tool calls"))
}

func logPath(w *sessionlog.Writer) string {
	if w == nil {
		return ""
	}
	return w.Path
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func indentBlock(src string) string { return indentBlockWith(src, "  ") }

// indentBlockWith shows a block as the prompts show it: first before its
// first line, continuation prompts before the rest.
func indentBlockWith(src, first string) string {
	lines := strings.Split(src, "\n")
	then := first
	if len(first) >= len(prompt.Continuation) {
		then = strings.Repeat(" ", len(first)-len(prompt.Continuation)) + prompt.Continuation
	}
	var b strings.Builder
	for i, l := range lines {
		if i == 0 {
			io.WriteString(&b, first+l)
		} else {
			io.WriteString(&b, "\n"+then+l)
		}
	}
	return b.String()
}
