package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pyaichat/pyaichat/agent/event"
)

// askMarker is a value only the session holds: whether a request carries
// it shows whether the tool result was sent.
const askMarker = "plum-orchard-7731"

// fakeGitHubToken has the shape of a GitHub token, built here so that no
// literal in the repository looks like a live one.
var fakeGitHubToken = "ghp_" + strings.Repeat("k9Qz", 9)

// askResult is what the fake get_repr returns: the marker, a token the
// filter redacts, and an escape sequence, which stays escaped in the JSON.
var askResult = `{"repr":"'` + askMarker + ` ` + fakeGitHubToken + ` \u001b[2J'","type":"str"}`

// askSetup is a session under share = "ask" whose model calls get_repr on
// note, then answers; confirm is its hook.
func askSetup(t *testing.T, confirm func(context.Context, event.Outgoing) (bool, error)) (*fakeServer, *Conversation) {
	t.Helper()
	f := newFake(t,
		toolReply("", fcall{"call_1", "get_repr", `{"expr": "note"}`}),
		textReply("Here is what I know."),
	)
	tools := &fakeTools{fn: func(_ context.Context, name string, _ json.RawMessage) (string, bool) {
		return askResult, false
	}}
	cfg := f.config()
	cfg.Share = ShareAsk
	cfg.Confirm = confirm
	// The context holds the marker too: under ask it must not be sent.
	return f, NewConversation(cfg, tools, func() string { return ">>> note = '" + askMarker + "'" })
}

// sentTool is the result the second request carried for call_1.
func sentTool(t *testing.T, f *fakeServer) string {
	t.Helper()
	reqs := f.requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests, want the tool result's", len(reqs))
	}
	checkValid(t, reqs[1])
	return toolResults(reqs[1])["call_1"]
}

// A result the user accepts is sent exactly as they were shown it: after
// the redaction filter. The preview made it harmless to show; the summary
// line counts it.
func TestAskSendsAcceptedResult(t *testing.T) {
	var asked []event.Outgoing
	f, s := askSetup(t, func(_ context.Context, o event.Outgoing) (bool, error) {
		asked = append(asked, o)
		return true, nil
	})
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "what is note?", out); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if len(asked) != 1 {
		t.Fatalf("the hook was asked %d times, want once", len(asked))
	}
	o := asked[0]
	sent := sentTool(t, f)
	if o.Tool != "get_repr" || o.Arguments != `{"expr": "note"}` || o.Result != sent {
		t.Errorf("asked about %s %s with result %q; sent %q", o.Tool, o.Arguments, o.Result, sent)
	}
	if !strings.Contains(sent, askMarker) || strings.Contains(sent, fakeGitHubToken) || !strings.Contains(sent, "<redacted: GitHub") {
		t.Errorf("the result sent is not the filtered one: %q", sent)
	}
	if !strings.HasPrefix(o.Preview, `tool result of get_repr {"expr":"note"}:`+"\n  ") || !strings.Contains(o.Preview, askMarker) {
		t.Errorf("preview does not show the call and the result: %q", o.Preview)
	}
	if strings.Contains(o.Preview, "\x1b") || !strings.Contains(o.Preview, `\u001b[2J`) || strings.Contains(o.Preview, fakeGitHubToken) {
		t.Errorf("preview is not the visible, filtered result: %q", o.Preview)
	}
	if got := out.String(); !strings.Contains(got, "Here is what I know.") || !strings.Contains(got, "[1 call: get_repr(note) · 1 sent, 0 declined · ") {
		t.Errorf("answer or summary line: %q", got)
	}
	for _, r := range f.requests() {
		if sys := r.Messages[0].Content; strings.Contains(sys, askMarker) || strings.Contains(sys, "Recent py> activity") {
			t.Errorf("the automatic context was sent under ask: %q", sys)
		}
	}
	priv := newSyncBuffer()
	s.Handle(context.Background(), "/privacy", priv)
	if got := priv.String(); !strings.Contains(got, `share = "ask"`) || !strings.Contains(got, "you sent 1 and declined 0") {
		t.Errorf("/privacy: %q", got)
	}
}

// A declined result is replaced by an error the model can answer around;
// the value never leaves, and the loop goes on to the answer.
func TestAskDeclined(t *testing.T) {
	asked := 0
	f, s := askSetup(t, func(context.Context, event.Outgoing) (bool, error) {
		asked++
		return false, nil
	})
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "what is note?", out); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if asked != 1 {
		t.Errorf("the hook was asked %d times, want once", asked)
	}
	if got := sentTool(t, f); got != `{"error":{"type":"Declined","message":"the user chose not to share this result"}}` {
		t.Errorf("sent %q, want the Declined error", got)
	}
	for i, r := range f.requests() {
		if strings.Contains(string(r.raw), askMarker) {
			t.Errorf("request %d carries the declined value: %s", i+1, r.raw)
		}
	}
	if got := out.String(); !strings.Contains(got, "Here is what I know.") || !strings.Contains(got, "0 sent, 1 declined") {
		t.Errorf("answer or summary line: %q", got)
	}
}

// A hook that cannot ask (the terminal failed) sends nothing, says why,
// and the question goes on.
func TestAskHookError(t *testing.T) {
	f, s := askSetup(t, func(context.Context, event.Outgoing) (bool, error) {
		return false, errors.New("the terminal is gone")
	})
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "what is note?", out); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if got := sentTool(t, f); !strings.Contains(got, `"type":"Declined"`) || strings.Contains(got, askMarker) {
		t.Errorf("sent %q, want the Declined error", got)
	}
	got := out.String()
	if !strings.Contains(got, "(could not ask whether to send the result of get_repr: the terminal is gone; it was not sent)\n") {
		t.Errorf("no notice of the failure: %q", got)
	}
	if !strings.Contains(got, "Here is what I know.") || !strings.Contains(got, "0 sent, 1 declined") {
		t.Errorf("answer or summary line: %q", got)
	}
}

// Ctrl-C at the question cancels the whole question: nothing more is
// sent, and the conversation stays valid for the next one.
func TestAskCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, s := askSetup(t, func(ctx context.Context, _ event.Outgoing) (bool, error) {
		cancel() // the SIGINT handler does this while the key is awaited
		<-ctx.Done()
		return false, ctx.Err()
	})
	out := newSyncBuffer()
	err := s.Handle(ctx, "what is note?", out)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Handle: %v, want a cancellation", err)
	}
	// The question's line, which the ^C ends, is ended once, even where
	// out is not known to be a terminal (no Color).
	if got := out.String(); !strings.HasPrefix(got, "\n[1 call: get_repr(note)") {
		t.Errorf("after the cancel: %q", got)
	}
	if n := len(f.requests()); n != 1 {
		t.Fatalf("%d requests after the cancel, want 1", n)
	}
	for _, m := range s.History() {
		if strings.Contains(m.Content, askMarker) {
			t.Errorf("the history keeps the unsent value: %+v", m)
		}
	}
	f.add(textReply("Next answer."))
	if err := s.Handle(context.Background(), "and now?", newSyncBuffer()); err != nil {
		t.Fatalf("the next question: %v", err)
	}
	reqs := f.requests()
	last := reqs[len(reqs)-1]
	checkValid(t, last)
	if strings.Contains(string(last.raw), askMarker) {
		t.Errorf("the next question sent the value: %s", last.raw)
	}
}

// With no hook there is no one to ask: nothing is sent.
func TestAskWithoutHookSendsNothing(t *testing.T) {
	f, s := askSetup(t, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "what is note?", out); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if got := sentTool(t, f); !strings.Contains(got, `"type":"Declined"`) {
		t.Errorf("sent %q, want the Declined error", got)
	}
	if !strings.Contains(out.String(), "0 sent, 1 declined") {
		t.Errorf("summary line: %q", out.String())
	}
}

// The loop's own error results (an unknown tool, a repeated call) carry
// no session data: the user is not asked about them. Several calls in one
// step are asked about one by one, in order.
func TestAskOnlyAboutToolResults(t *testing.T) {
	f := newFake(t,
		toolReply("", fcall{"call_1", "get_repr", `{"expr":"a"}`}, fcall{"call_2", "no_such_tool", `{}`},
			fcall{"call_3", "get_repr", `{"expr":"a"}`}, fcall{"call_4", "get_type", `{"expr":"a"}`}),
		textReply("done"),
	)
	tools := &fakeTools{fn: func(_ context.Context, name string, _ json.RawMessage) (string, bool) {
		return fmt.Sprintf(`{"from":%q}`, name), false
	}}
	var mu sync.Mutex
	var asked []string
	cfg := f.config()
	cfg.Share = ShareAsk
	cfg.Confirm = func(_ context.Context, o event.Outgoing) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, o.Tool)
		return o.Tool == "get_type", nil
	}
	s := NewConversation(cfg, tools, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "q", out); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if fmt.Sprint(asked) != "[get_repr get_type]" {
		t.Errorf("asked about %v, want [get_repr get_type]", asked)
	}
	res := toolResults(f.requests()[1])
	if !strings.Contains(res["call_1"], "Declined") || !strings.Contains(res["call_2"], "UnknownTool") ||
		!strings.Contains(res["call_3"], "Repeated") || res["call_4"] != `{"from":"get_type"}` {
		t.Errorf("results sent: %v", res)
	}
	if !strings.Contains(out.String(), "1 sent, 1 declined") {
		t.Errorf("summary line: %q", out.String())
	}
}

// A big result is shown bounded, saying how much more there is; what is
// asked about is still all of it.
func TestAskPreviewIsBounded(t *testing.T) {
	var lines []string
	for i := 0; i < 100; i++ {
		lines = append(lines, fmt.Sprintf("line %02d", i))
	}
	many := strings.Join(lines, "\n")
	p := preview("eval_expr", `{"expr":"x"}`, many, testKey)
	shown := strings.Split(strings.TrimSuffix(p, "\n"), "\n")
	// The call, previewLines lines, the rest counted.
	if len(shown) != 1+previewLines+1 || shown[previewLines] != "  line 19" {
		t.Errorf("preview of 100 lines:\n%s", p)
	}
	if want := fmt.Sprintf("  … %d more bytes", len(many)-len(strings.Join(lines[:20], "\n"))-1); shown[len(shown)-1] != want {
		t.Errorf("last line %q, want %q", shown[len(shown)-1], want)
	}

	long := strings.Repeat("é", 5000) // 10000 bytes on one line
	p = preview("get_repr", `{"expr":"s"}`, long, testKey)
	shown = strings.Split(strings.TrimSuffix(p, "\n"), "\n")
	if len(shown) != 3 || len(shown[1]) != 2+previewBytes || !strings.HasSuffix(shown[1], "é") {
		t.Errorf("preview of one long line: %d lines, the result's line %d bytes", len(shown), len(shown[1]))
	}
	if want := fmt.Sprintf("  … %d more bytes", len(long)-previewBytes); shown[2] != want {
		t.Errorf("last line %q, want %q", shown[2], want)
	}

	// A result that is not JSON can hold raw control characters: they are
	// spelled out, not sent to the terminal.
	p = preview("get_repr", `{"expr":"s"}`, "title\x1b]0;pwned\x07\r\n", testKey)
	if strings.ContainsAny(p, "\x1b\x07\r") || !strings.Contains(p, `title\x1b]0;pwned\x07\r`) {
		t.Errorf("control characters reach the terminal: %q", p)
	}

	// The arguments stay on the call's line; the key is never shown.
	p = preview("eval_expr", "not json\nsecond "+testKey, "{}", testKey)
	if first, _, _ := strings.Cut(p, "\n"); first != `tool result of eval_expr not json\nsecond [key]:` {
		t.Errorf("call line %q", first)
	}
}
