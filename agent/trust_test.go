package agent

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/agent/llm"
)

// Secrets of several kinds, built here so that no literal looks live.
var (
	trustAWSSecret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	trustBearer    = "Bearer " + "eyJ0eXAiOiJKV1Qi" + "Qx7kPz9mLw3vRt5u"
	trustURLPass   = "Zq8-pw-" + "Kd81rT"
)

// trustQuestion carries the configured key, an AWS secret, a bearer
// token and a URL password, as text piped to -p or pasted at ai> may.
func trustQuestion() string {
	return "explain " + testKey + "\naws_secret_access_key = " + trustAWSSecret +
		"\nAuthorization: " + trustBearer + "\npostgres://app:" + trustURLPass + "@db/orders"
}

// sentMessages is every message of a request as the provider reads it,
// with the tool calls' arguments.
func sentMessages(req wireReq) string {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Content + "\n")
		for _, c := range m.ToolCalls {
			b.WriteString(c.Function.Arguments + "\n")
		}
	}
	return b.String()
}

func checkNoSecrets(t *testing.T, raw string) {
	t.Helper()
	for _, s := range []string{testKey, trustAWSSecret, "Qx7kPz9mLw3vRt5u", trustURLPass} {
		if strings.Contains(raw, s) {
			t.Errorf("%q reached the provider:\n%s", s, raw)
		}
	}
	if !strings.Contains(raw, "<redacted: ") {
		t.Errorf("no marker in what was sent:\n%s", raw)
	}
}

// The user's own text passes the filter under every policy, at ai> and
// under -p alike, and the question event (the session log's record)
// holds what was sent.
func TestQuestionIsFiltered(t *testing.T) {
	for _, share := range []string{ShareRedacted, ShareOff, ShareAsk} {
		for _, via := range []string{"Handle", "Ask"} {
			t.Run(share+"/"+via, func(t *testing.T) {
				f := newFake(t, textReply("ok."))
				cfg := f.config()
				cfg.Share = share
				var logged []string
				cfg.Events = func(ev event.Event) {
					if ev.Kind == event.Question {
						logged = append(logged, ev.Text)
					}
				}
				s := NewConversation(cfg, &fakeTools{}, nil)
				var err error
				if via == "Handle" {
					err = s.Handle(context.Background(), trustQuestion(), io.Discard)
				} else {
					err = s.Ask(context.Background(), trustQuestion(), io.Discard)
				}
				if err != nil {
					t.Fatal(err)
				}
				checkNoSecrets(t, sentMessages(f.requests()[0]))
				checkNoSecrets(t, strings.Join(logged, "\n"))
				if s.lastRedacted.Count < 4 {
					t.Errorf("/privacy counts %d redactions, want the question's 4", s.lastRedacted.Count)
				}
			})
		}
	}
}

// resumedConversation is an earlier session's conversation whose tool
// result, question and answer hold secrets.
func resumedConversation() []llm.Message {
	return []llm.Message{
		{Role: "user", Content: "what is " + testKey + "?"},
		{Role: "assistant", ToolCalls: []llm.ToolCall{{ID: "call_a", Type: "function", Name: "get_repr", Arguments: `{"expr":"'` + testKey + `'"}`}}},
		{Role: "tool", ToolCallID: "call_a", Content: `{"repr":"'rows: 41 and 12345'","aws_secret_access_key":"` + trustAWSSecret + `"}`},
		{Role: "assistant", Content: "It is Authorization: " + trustBearer},
	}
}

// A resumed conversation is filtered again under the policy in force now;
// under "off" and "ask" its tool results' values are not sent at all.
func TestResumeFollowsTodaysPolicy(t *testing.T) {
	for _, share := range []string{ShareRedacted, ShareOff, ShareAsk} {
		t.Run(share, func(t *testing.T) {
			f := newFake(t, textReply("ok."))
			cfg := f.config()
			cfg.Share = share
			s := NewConversation(cfg, &fakeTools{}, nil)
			s.Resume("", resumedConversation())
			if err := s.Handle(context.Background(), "and now?", io.Discard); err != nil {
				t.Fatal(err)
			}
			req := f.requests()[0]
			checkNoSecrets(t, sentMessages(req))
			var tool string
			for _, m := range req.Messages {
				if m.Role == "tool" {
					tool = m.Content
				}
			}
			withheld := strings.Contains(tool, "withheld") && !strings.Contains(tool, "rows: 41")
			if want := share != ShareRedacted; withheld != want {
				t.Errorf("share = %s: the old tool result was sent as %q (withheld: %v, want %v)", share, tool, withheld, want)
			}
		})
	}
}

// /cap shows a result the copy wrote itself (a hostile __repr__'s frame)
// with its control characters spelled out, and an error as one line.
func TestCapShowsResultsHarmlessly(t *testing.T) {
	f := newFake(t)
	tools := &fakeTools{fn: func(_ context.Context, name string, _ json.RawMessage) (string, bool) {
		if name == "eval_expr" {
			return `{"error":{"type":"NameError","message":"name 'y' is not defined"}}`, true
		}
		return `{"repr":"\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eok","type":"str"}`, false
	}}
	s := NewConversation(f.config(), tools, nil)
	var out strings.Builder
	if err := s.Handle(context.Background(), "/cap get_repr x", &out); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07\u009b\u202e") || !strings.Contains(out.String(), `\x1b]0;pwned\x07\x1b[2J`) {
		t.Errorf("/cap showed %q", out.String())
	}
	out.Reset()
	if err := s.Handle(context.Background(), "/cap eval_expr y", &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "error: NameError: name 'y' is not defined\n" {
		t.Errorf("/cap error: %q", got)
	}
}

// Under share = "ask" the automatic context is not sent, but a secret it
// shows is known to the filter: its hex in a tool result is redacted
// before the user is asked about it.
func TestAskLearnsFromWhatThePromptShowed(t *testing.T) {
	secret := "gh" + "p_" + strings.Repeat("k9Qz", 9)
	encoded := hex.EncodeToString([]byte(secret))
	f := newFake(t, toolReply("", fcall{"call_1", "get_repr", `{"expr":"k.encode().hex()"}`}), textReply("ok."))
	cfg := f.config()
	cfg.Share = ShareAsk
	var shown []string
	cfg.Confirm = func(_ context.Context, o event.Outgoing) (bool, error) {
		shown = append(shown, o.Result)
		return true, nil
	}
	tools := &fakeTools{fn: func(context.Context, string, json.RawMessage) (string, bool) {
		return `{"repr":"'` + encoded + `'"}`, false
	}}
	s := NewConversation(cfg, tools, func() string { return ">>> k\n'" + secret + "'" })
	if err := s.Handle(context.Background(), "what is k in hex?", io.Discard); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(shown, "\n") + sentMessages(f.requests()[1])
	if len(shown) != 1 || strings.Contains(all, encoded[10:30]) || strings.Contains(all, secret) {
		t.Errorf("shown %q; sent %s", shown, all)
	}
}

// A server's error kept in the history as the failed question's answer
// is filtered like the rest before the next request carries it.
func TestFailedAnswerIsFiltered(t *testing.T) {
	token := "gh" + "p_" + strings.Repeat("k9Qz", 9)
	f := newFake(t, toolReply("", fcall{"call_1", "list_globals", `{}`}),
		fakemodel.Reply{Status: 400, Error: "cannot use " + token + " here"}, textReply("ok."))
	s := NewConversation(f.config(), &fakeTools{}, nil)
	if err := s.Handle(context.Background(), "first", io.Discard); err == nil {
		t.Fatal("the 400 was not an error")
	}
	if err := s.Handle(context.Background(), "second", io.Discard); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	sent := sentMessages(reqs[len(reqs)-1])
	if strings.Contains(sent, token) || !strings.Contains(sent, "(no answer: ") {
		t.Errorf("the second request carried %s", sent)
	}
}
