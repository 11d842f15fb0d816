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
  /model [NAME]     show or change the model
  /tools            list the capabilities the assistant can call
  /cap NAME [EXPR]  run one capability yourself (no LLM involved)`

// command runs a slash command. Its output is for the user; only a failure
// to write is returned.
func (s *Session) command(ctx context.Context, line string, out io.Writer) error {
	name, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	var err error
	switch name {
	case "/help", "/?":
		_, err = fmt.Fprintln(out, helpText)
	case "/clear":
		s.history = nil
		_, err = fmt.Fprintln(out, "conversation cleared")
	case "/model":
		if rest == "" {
			_, err = fmt.Fprintf(out, "model %s at %s\n", s.cfg.Model, displayURL(s.cfg.BaseURL))
			break
		}
		s.cfg.Model = rest
		_, err = fmt.Fprintf(out, "model set to %s\n", rest)
	case "/tools":
		if len(s.list) == 0 {
			_, err = fmt.Fprintln(out, "no capabilities are available")
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
	var pretty bytes.Buffer
	if json.Indent(&pretty, []byte(res), "", "  ") == nil {
		res = pretty.String()
	}
	if isErr {
		res = "error: " + res
	}
	res = s.scrub(res)
	_, err := fmt.Fprintln(out, res)
	return err
}
