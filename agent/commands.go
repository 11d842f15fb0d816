package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

const helpText = `Ask a question about your session, or:
  /help             this help
  /clear            forget the conversation
  /model [NAME]     show or change the model (NAME --save: make it the default)
  /models           list the models the server offers
  /tools [NAME]     list the capabilities the assistant can call (NAME: one, in full)
  /cap NAME [EXPR]  run one capability yourself (no LLM involved)
  /privacy          what is sent to the model, and what was redacted`

// command runs a slash command. Its output is for the user; only a failure
// to write is returned.
func (s *Session) command(ctx context.Context, line string, out io.Writer) error {
	name, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	var err error
	switch name {
	case "/help", "/?":
		_, err = fmt.Fprintln(out, helpText+s.cfg.MoreHelp)
	case "/clear":
		s.history = nil
		_, err = fmt.Fprintln(out, "conversation cleared")
	case "/model":
		if rest == "" {
			_, err = fmt.Fprintf(out, "model %s at %s\n", s.cfg.Model, displayURL(s.cfg.BaseURL))
			break
		}
		err = s.modelCommand(ctx, rest, out)
	case "/models":
		err = s.modelsCommand(ctx, out)
	case "/tools":
		if len(s.list) == 0 {
			_, err = fmt.Fprintln(out, "no capabilities are available")
			break
		}
		if rest != "" {
			err = s.toolCommand(rest, out)
			break
		}
		for _, t := range s.list {
			desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
			if _, err = fmt.Fprintf(out, "  %-20s %s\n", t.Name, desc); err != nil {
				break
			}
		}
	case "/cap":
		err = s.capCommand(ctx, rest, out)
	case "/privacy":
		err = s.privacyCommand(out)
	default:
		_, err = fmt.Fprintf(out, "unknown command %s; try /help\n", name)
	}
	return err
}

// capCommand is /cap NAME [EXPR]: one capability, run directly, with
// {"expr": EXPR} when EXPR is given and {} otherwise.
func (s *Session) capCommand(ctx context.Context, rest string, out io.Writer) error {
	name, expr, _ := strings.Cut(rest, " ")
	expr = strings.TrimSpace(expr)
	if name == "" {
		_, err := fmt.Fprintf(out, "usage: /cap NAME [EXPR]; capabilities: %s\n", s.toolNames())
		return err
	}
	if !s.names[name] {
		_, err := fmt.Fprintf(out, "no capability named %q; capabilities: %s\n", name, s.toolNames())
		return err
	}
	args := []byte("{}")
	if expr != "" {
		args, _ = json.Marshal(map[string]string{"expr": expr})
	}
	res, isErr := s.tools.Call(ctx, name, args)
	res = asText(res)
	if isErr {
		res = "error: " + res
	}
	res = s.scrub(res)
	_, err := fmt.Fprintln(out, res)
	return err
}

// toolCommand is /tools NAME: one capability's whole description.
func (s *Session) toolCommand(name string, out io.Writer) error {
	for _, t := range s.list {
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
