package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pyaichat/pyaichat/agent/termsafe"
	"github.com/pyaichat/pyaichat/capabilities/spec"
)

// Outgoing is one tool result about to be sent under ShareAsk: what
// Config.Confirm is asked about.
type Outgoing struct {
	Tool      string // the capability the model called
	Arguments string // its arguments, as the model wrote them
	// Result is exactly what would be sent: filtered and capped.
	Result string
	// Preview is what to show the user before asking: the call on one
	// line, then the start of Result (at most previewLines lines and
	// previewBytes bytes, and how many bytes more there are), indented,
	// every character that could drive a terminal spelled out, the API
	// key redacted. It ends with a newline.
	Preview string
}

// A result is shown bounded, so that a big one does not push the
// question off the screen; what is asked about is still the whole of it.
const (
	previewLines = 20
	previewBytes = 2 << 10
	previewArgs  = 200 // bytes of the arguments on the call's line
)

// declinedResult is what the model gets instead of a result the user
// chose not to send: an error it can answer around.
var declinedResult = spec.ErrorResult(spec.Declined, "the user chose not to share this result")

// preview builds Outgoing.Preview.
func preview(name, args, result, key string) string {
	var compact bytes.Buffer
	if json.Compact(&compact, []byte(args)) == nil {
		args = compact.String()
	}
	var b strings.Builder
	b.WriteString("tool result of " + name + " " + labelSpacing.Replace(termsafe.Shorten(args, previewArgs)) + ":\n")
	shown := termsafe.Prefix(result, previewBytes)
	lines := strings.SplitAfter(shown, "\n")
	if len(lines) > previewLines {
		lines = lines[:previewLines]
		shown = strings.Join(lines, "")
	}
	for _, ln := range lines {
		if ln != "" {
			b.WriteString("  " + strings.TrimSuffix(ln, "\n") + "\n")
		}
	}
	if more := len(result) - len(shown); more > 0 {
		fmt.Fprintf(&b, "  … %d more bytes\n", more)
	}
	return visible(redactKey(b.String(), key))
}

// confirm asks the user, under ShareAsk, whether res, the result of one
// call, may be sent, and returns what to send instead when not. Without
// a Confirm hook there is no one to ask, and nothing is sent. A Ctrl-C
// while asking sends nothing either; the loop then ends the question.
func (t *turn) confirm(ctx context.Context, name, args, res string) string {
	s := t.s
	cancelled := spec.ErrorResult(spec.Canceled, "not sent: the question was stopped before the user answered")
	if ctx.Err() != nil {
		return cancelled
	}
	if s.cfg.Confirm == nil {
		t.declined++
		return declinedResult
	}
	// The hook writes to the terminal itself: the status line comes down
	// for good (it would redraw over the question), and the question
	// starts on a line of its own.
	t.status.clear()
	t.endThinking()
	t.out.endLine()
	t.notices.endLine()
	ok, err := s.cfg.Confirm(ctx, Outgoing{Tool: name, Arguments: args, Result: res, Preview: preview(name, args, res, s.cfg.APIKey)})
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		// The line holds the question and the ^C: ask ends it.
		t.askCancelled = true
		return cancelled
	case ctx.Err() != nil:
		// The question's deadline passed while the key was awaited: end
		// the question's line, where the hook writes (the notices').
		t.notices.newLine()
		return cancelled
	case err != nil:
		t.notify(fmt.Sprintf("(could not ask whether to send the result of %s: %v; it was not sent)", name, err))
		t.declined++
		return declinedResult
	case !ok:
		t.declined++
		return declinedResult
	}
	t.sent++
	return res
}
