package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pyaichat/pyaichat/agent/redact"
	"github.com/pyaichat/pyaichat/capabilities/spec"
)

// What may leave the machine (Config.Share, "share" in the config file).
// Everything a tool returns and the automatic py> context pass the
// redaction filter before they are added to a request; ShareOff also
// sends no automatic context and offers only the tools that answer with
// names, types and shapes, with every value-bearing field dropped.
// ShareAsk sends no automatic context either (the user never sees it, so
// cannot agree to it), and shows each filtered tool result to the user
// (Config.Confirm), sending it only if they agree.
const (
	ShareRedacted = "redacted"
	ShareOff      = "off"
	ShareAsk      = "ask"
)

// CheckShare refuses a share setting that is none of the three.
func CheckShare(v string) error {
	switch v {
	case ShareRedacted, ShareOff, ShareAsk:
		return nil
	}
	return fmt.Errorf("share = %q: want %q, %q or %q", v, ShareRedacted, ShareOff, ShareAsk)
}

// Filter is the redaction filter c asks for: the API key, the values of
// the environment variables whose names look secret (with HideEnv and
// AllowEnv), the well-known token formats and high-entropy strings.
func (c Config) Filter() *redact.Filter {
	return redact.New(redact.Policy{
		Secrets: []redact.Secret{{Kind: "API key", Value: c.APIKey}},
		Environ: c.Environ,
		Hide:    c.HideEnv,
		Allow:   c.AllowEnv,
	})
}

// offTools are the tools offered under ShareOff.
var offTools = map[string]bool{"list_globals": true, "get_type": true, "get_dir": true}

// valueFields are the result fields that show values rather than names,
// types and shapes: dropped under ShareOff.
var valueFields = map[string]bool{
	"preview": true, "repr": true, "doc": true, "signature": true,
	"message": true, "traceback": true, "source": true, "locals": true,
}

// outgoing makes a tool result fit to leave the machine.
func (s *Conversation) outgoing(res string) (string, redact.Report) {
	if s.cfg.Share == ShareOff {
		res = typesOnly(res)
	}
	return s.filteredResult(res)
}

// filteredResult is a tool result through the filter: as JSON, whose
// strings are filtered one by one, or as text when it is not JSON.
func (s *Conversation) filteredResult(res string) (string, redact.Report) {
	out, rep, err := s.filter.JSON([]byte(res))
	if err != nil { // not JSON: a tool's plain error text
		return s.filter.Text(res)
	}
	return string(out), rep
}

// notSent replaces a result that typesOnly cannot read.
var notSent = spec.ErrorResult(spec.Hidden, "share = off: this result is not sent")

// typesOnly drops valueFields from a JSON result, at any depth.
func typesOnly(res string) string {
	var v any
	if json.Unmarshal([]byte(res), &v) != nil {
		return notSent
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, y := range x {
				if valueFields[k] {
					x[k] = "<hidden: share = off>"
				} else {
					strip(y)
				}
			}
		case []any:
			for _, y := range x {
				strip(y)
			}
		}
	}
	strip(v)
	b, err := json.Marshal(v)
	if err != nil {
		return notSent
	}
	return string(b)
}

// secretEnvNames lists the names in the environment whose values the
// filter redacts.
func (s *Conversation) secretEnvNames() []string {
	var names []string
	for _, kv := range s.cfg.Environ {
		name, v, ok := strings.Cut(kv, "=")
		if ok && v != "" && s.filter.SecretVar(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// privacyCommand is /privacy: the policy in force and what was redacted
// from the last question's requests.
func (s *Conversation) privacyCommand(out io.Writer) error {
	var b strings.Builder
	switch s.cfg.Share {
	case ShareOff:
		b.WriteString("share = \"off\": no automatic py> context is sent; the assistant sees names, types and shapes only (list_globals, get_type, get_dir, without values)\n")
	case ShareAsk:
		b.WriteString("share = \"ask\": no automatic py> context is sent; each tool result is filtered, shown to you, and sent only if you answer y (without a terminal to ask on, none is sent)\n")
	default:
		b.WriteString("share = \"redacted\": tool results and the automatic py> context are filtered before they are sent\n")
	}
	b.WriteString("redacted: the API key; well-known token formats (OpenAI, Anthropic, GitHub, AWS, Slack, Google, JWT, PEM private keys, bearer values, passwords in URLs and connection strings); long random-looking strings")
	if names := s.secretEnvNames(); len(names) > 0 {
		fmt.Fprintf(&b, "; the values of %d environment variables (%s)", len(names), strings.Join(names, ", "))
	}
	b.WriteString("\nin the copy where expressions run, those variables' values are wiped and pyaichat's own memory is unreadable\n")
	if len(s.cfg.HideEnv) > 0 {
		fmt.Fprintf(&b, "hide_env (config file): %s\n", strings.Join(s.cfg.HideEnv, ", "))
	}
	if len(s.cfg.AllowEnv) > 0 {
		fmt.Fprintf(&b, "allow_env (config file): %s\n", strings.Join(s.cfg.AllowEnv, ", "))
	}
	asked := ""
	if s.cfg.Share == ShareAsk {
		asked = fmt.Sprintf("; of its tool results you sent %d and declined %d", s.lastSent, s.lastDeclined)
	}
	switch {
	case !s.asked:
		b.WriteString("last question: none yet\n")
	case s.lastRedacted.Count == 0:
		b.WriteString("last question: nothing was redacted" + asked + "\n")
	default:
		fmt.Fprintf(&b, "last question: %s redacted%s\n", s.lastRedacted.String(), asked)
	}
	_, err := io.WriteString(out, b.String())
	return err
}
