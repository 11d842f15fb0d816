package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/termsafe"
	"github.com/pyaichat/pyaichat/capabilities/spec"
)

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

// preview builds event.Outgoing.Preview.
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
	return termsafe.Visible(llm.RedactKey(b.String(), key))
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
	// The hook writes to the terminal itself; the view draws around it.
	t.endThinking()
	ok, err := t.view.Confirm(ctx, event.Outgoing{Tool: name, Arguments: args, Result: res, Preview: preview(name, args, res, s.cfg.APIKey)}, s.cfg.Confirm)
	switch {
	case ctx.Err() != nil:
		// Ctrl-C or the question's deadline while the key was awaited.
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
