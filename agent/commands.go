package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/termsafe"
	"github.com/pyaichat/pyaichat/capabilities/spec"
)

// Command is one of the assistant's slash commands, for the REPL's
// table: its name, its arguments and a line of help as /help shows them,
// and what runs it, which writes for the user to out (through the view,
// so that a Ctrl-C is drawn in order with it) and returns only a failure
// to write.
type Command struct {
	Name, Args, Help string
	Run              func(ctx context.Context, arg string, out io.Writer) error
}

// command is a Command before it is bound to a conversation; listing says
// that what it prints is a value, shown as it is rather than wrapped at
// words.
type command struct {
	name, args, help string
	listing          bool
	run              func(s *Conversation, ctx context.Context, arg string, out io.Writer) error
}

// commands are the assistant's slash commands, in the order /help lists
// them.
var commands = []command{
	{name: "/clear", help: "forget the conversation", run: (*Conversation).clearCommand},
	{name: "/model", args: "[NAME]", help: "show or change the model (NAME --save: make it the default)", run: (*Conversation).modelOrShow},
	{name: "/models", help: "list the models the server offers", run: func(s *Conversation, ctx context.Context, _ string, out io.Writer) error {
		return s.modelsCommand(ctx, out)
	}},
	{name: "/tools", args: "[NAME]", help: "list the capabilities the assistant can call (NAME: one, in full)", run: (*Conversation).toolsCommand},
	{name: "/cap", args: "NAME [EXPR]", help: "run one capability yourself (no LLM involved)", listing: true, run: (*Conversation).capCommand},
	{name: "/privacy", help: "what is sent to the model, and what was redacted", run: func(s *Conversation, _ context.Context, _ string, out io.Writer) error {
		return s.privacyCommand(out)
	}},
	{name: "/usage", help: "the session's tokens and cost, and how full the context is", run: func(s *Conversation, _ context.Context, _ string, out io.Writer) error {
		return s.usageCommand(out)
	}},
	{name: "/instructions", help: "the instructions in force (instructions.md, .pyaichat.md)", run: func(s *Conversation, _ context.Context, _ string, out io.Writer) error {
		return s.instructionsCommand(out)
	}},
	{name: "/compact", help: "replace the conversation so far by a summary the model writes", run: func(s *Conversation, ctx context.Context, _ string, out io.Writer) error {
		return s.compactCommand(ctx, out)
	}},
}

// Commands are the assistant's slash commands, bound to s.
func (s *Conversation) Commands() []Command {
	out := make([]Command, len(commands))
	for i, c := range commands {
		out[i] = Command{Name: c.name, Args: c.args, Help: c.help, Run: func(ctx context.Context, arg string, w io.Writer) error {
			return s.shownCommand(ctx, c, arg, w)
		}}
	}
	return out
}

// findCommand is the command a line names, and the rest of the line.
func findCommand(line string) (command, string, bool) {
	name, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	for _, c := range commands {
		if c.name == name {
			return c, strings.TrimSpace(rest), true
		}
	}
	return command{}, "", false
}

func (s *Conversation) clearCommand(_ context.Context, _ string, out io.Writer) error {
	s.history, s.restored, s.summary = nil, false, ""
	_, err := fmt.Fprintln(out, "conversation cleared")
	return err
}

// modelOrShow is /model: without NAME, the model in use and where.
func (s *Conversation) modelOrShow(ctx context.Context, arg string, out io.Writer) error {
	if arg == "" {
		_, err := fmt.Fprintf(out, "model %s at %s\n", s.cfg.Model, llm.DisplayURL(s.cfg.BaseURL))
		return err
	}
	return s.modelCommand(ctx, arg, out)
}

// toolsCommand is /tools: one line per capability, or with a NAME that
// one in full.
func (s *Conversation) toolsCommand(_ context.Context, arg string, out io.Writer) error {
	if len(s.offered().list) == 0 {
		_, err := fmt.Fprintln(out, "no capabilities are available")
		return err
	}
	if arg != "" {
		return s.toolCommand(arg, out)
	}
	var b strings.Builder
	for _, t := range s.offered().list {
		fmt.Fprintf(&b, "  %-20s %s\n", t.Name, toolSummary(t))
	}
	b.WriteString("/tools NAME shows one in full, as the model reads it\n")
	_, err := io.WriteString(out, b.String())
	return err
}

// capCommand is /cap NAME [EXPR]: one capability, run directly, with
// {"expr": EXPR} when EXPR is given and {} otherwise; for one of the
// user's own capabilities, EXPR is its arguments, a JSON object.
func (s *Conversation) capCommand(ctx context.Context, rest string, out io.Writer) error {
	name, expr, _ := strings.Cut(rest, " ")
	expr = strings.TrimSpace(expr)
	if name == "" {
		_, err := fmt.Fprintf(out, "usage: /cap NAME [EXPR]; capabilities: %s\n", s.toolNames())
		return err
	}
	if !s.offered().names[name] {
		_, err := fmt.Fprintf(out, "no capability named %q; capabilities: %s\n", name, s.toolNames())
		return err
	}
	args := []byte("{}")
	_, builtin := spec.Find(name)
	switch {
	case expr != "" && !builtin: // the user's capability: its JSON arguments
		args = []byte(expr)
	case expr != "":
		args, _ = json.Marshal(map[string]string{"expr": expr})
	}
	res, isErr := s.tools.Call(ctx, name, args)
	if isErr {
		res = capError(res)
	} else {
		res = asText(res)
	}
	// The result is the copy's, where user code ran and may have written
	// a result of its own: whatever it holds is shown, never obeyed.
	_, err := fmt.Fprintln(out, termsafe.Visible(llm.RedactKey(res, s.cfg.APIKey)))
	return err
}

// capError is a capability's error result as one line for a person:
// "error: NameError: name 'x' is not defined".
func capError(res string) string {
	var e struct {
		Error *struct{ Type, Message string } `json:"error"`
	}
	if json.Unmarshal([]byte(res), &e) == nil && e.Error != nil {
		return "error: " + e.Error.Type + ": " + e.Error.Message
	}
	return "error: " + res
}

// toolCommand is /tools NAME: one capability's whole description.
func (s *Conversation) toolCommand(name string, out io.Writer) error {
	for _, t := range s.offered().list {
		if t.Name == name {
			_, err := fmt.Fprintf(out, "%s\n%s\n", t.Name, strings.TrimSpace(t.Description))
			return err
		}
	}
	_, err := fmt.Fprintf(out, "no capability named %q; capabilities: %s\n", name, s.toolNames())
	return err
}

// asText shows a capability's JSON result for a person: one "key: value"
// line per field, in the result's order, a string as its text (a repr
// with its newlines), anything else as indented JSON.
func asText(res string) string {
	dec := json.NewDecoder(strings.NewReader(res))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return res
	}
	var b strings.Builder
	for dec.More() {
		key, err := dec.Token()
		var raw json.RawMessage
		if err != nil || dec.Decode(&raw) != nil {
			return res
		}
		var text string
		if json.Unmarshal(raw, &text) != nil {
			var pretty bytes.Buffer
			if json.Indent(&pretty, raw, "", "  ") == nil {
				raw = pretty.Bytes()
			}
			text = string(raw)
		}
		fmt.Fprintf(&b, "%v: %s\n", key, text)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// CodeBlock is /code [N]: the text of the last answer's code block
// numbered N as the answer showed it ([N] python), or with arg "" its last
// Python block. The error is a line for the user.
func (s *Conversation) CodeBlock(arg string) (string, error) {
	blocks := s.CodeBlocks()
	if len(blocks) == 0 {
		return "", errors.New("/code: the last answer has no code block")
	}
	if arg == "" {
		for i := len(blocks) - 1; i >= 0; i-- {
			if pythonLang[strings.ToLower(blocks[i].Lang)] {
				return editableCode(blocks[i].Text), nil
			}
		}
		return "", fmt.Errorf("/code: the last answer has no Python block; /code N takes block [N] (1-%d)", len(blocks))
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 || n > len(blocks) {
		return "", fmt.Errorf("/code: no block [%s]; the last answer has %s", arg, plural(len(blocks), "block"))
	}
	return editableCode(blocks[n-1].Text), nil
}

// pythonLang are the fence languages taken as Python.
var pythonLang = map[string]bool{"python": true, "py": true, "python3": true, "py3": true}

// editableCode is a block as it goes in the line editor: without the final
// line feed (Enter ends it) or blank rows at its end.
func editableCode(text string) string {
	return strings.TrimRight(text, " \t\n")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// toolSummary is a short line about a tool for /tools: the capability's
// own, or else its description's first sentence; one of the user's own
// capabilities is marked with the module that defined it.
func toolSummary(t llm.Tool) string {
	if c, ok := spec.Find(t.Name); ok && c.Summary != "" {
		return c.Summary
	}
	desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
	if i := strings.Index(desc, ". "); i >= 0 {
		desc = desc[:i+1]
	}
	if t.Module != "" {
		desc = "[yours, " + t.Module + "] " + desc
	}
	return termsafe.Visible(desc)
}
