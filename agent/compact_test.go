package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/agent/view"
)

// compactingServer answers a summary request (compactPrompt, no tools)
// with a note naming the questions it was given, and any other request
// with answer; it keeps the requests, decoded.
type compactingServer struct {
	*fakemodel.Server
	mu   sync.Mutex
	reqs []wireReq
	fail bool // answer summary requests with HTTP 500
}

func newCompactingServer(t *testing.T, answer string) *compactingServer {
	c := &compactingServer{}
	c.Server = fakemodel.NewFunc(t, func(r fakemodel.Request) fakemodel.Reply {
		var req wireReq
		if err := json.Unmarshal(r.Body, &req); err != nil {
			t.Errorf("request body: %v", err)
		}
		c.mu.Lock()
		c.reqs = append(c.reqs, req)
		fail := c.fail
		c.mu.Unlock()
		if req.Messages[0].Content != compactPrompt {
			return fakemodel.Reply{Text: answer, Usage: usage}
		}
		if fail {
			return fakemodel.Reply{Status: 500, Error: "summary failed"}
		}
		var asked []string
		for _, q := range []string{"question 0", "question 1", "question 2", "question 3", "question 4"} {
			if strings.Contains(req.Messages[1].Content, "User: "+q+"\n") {
				asked = append(asked, q)
			}
		}
		return fakemodel.Reply{Text: "<think>hmm</think>SUMMARY of " + strings.Join(asked, ", "), Usage: usage}
	})
	return c
}

func (c *compactingServer) requests() []wireReq {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]wireReq(nil), c.reqs...)
}

// askQuestions asks s "question 0" to "question n-1" and returns what was
// shown.
func askQuestions(t *testing.T, s *Conversation, n int) string {
	t.Helper()
	var shown strings.Builder
	for i := 0; i < n; i++ {
		out := newSyncBuffer()
		if err := s.Handle(context.Background(), fmt.Sprintf("question %d", i), out); err != nil {
			t.Fatal(err)
		}
		shown.WriteString(out.String())
	}
	return shown.String()
}

// Older exchanges that would pass the budget are summarised by the model
// into a note that replaces them: the next request holds the note and not
// the old turns, stays within the budget, and the user is told in one
// line; the session log gets the note.
func TestConversationCompactedToBudget(t *testing.T) {
	srv := newCompactingServer(t, strings.Repeat("word ", 200)) // ~1000 bytes per answer
	cfg := Config{BaseURL: srv.URL, APIKey: testKey, Model: "test-model", HistoryTokens: 1200, View: view.For(view.Options{})}
	var compacted []event.Event
	cfg.Events = func(ev event.Event) {
		if ev.Kind == event.Compacted {
			compacted = append(compacted, ev)
		}
	}
	s := NewConversation(cfg, &fakeTools{}, nil)
	if shown := askQuestions(t, s, 6); !strings.Contains(shown, "compacted into a summary") {
		t.Errorf("no line said the conversation was compacted:\n%s", shown)
	}
	reqs := srv.requests()
	last := reqs[len(reqs)-1]
	var users []string
	total := 0
	for _, m := range last.Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
		total += len(m.Content)
	}
	if users[len(users)-1] != "question 5" || users[0] == "question 0" {
		t.Errorf("questions kept: %q", users)
	}
	if !strings.Contains(last.Messages[0].Content, "SUMMARY of question 0") || strings.Contains(last.Messages[0].Content, "hmm") {
		t.Errorf("the system message lacks the summary (or has its thinking):\n%s", last.Messages[0].Content)
	}
	if est := estimateTokens(total); est > 1200 {
		t.Errorf("request carries ~%d tokens of messages, budget 1200", est)
	}
	checkValid(t, last)
	if len(compacted) == 0 || !strings.HasPrefix(compacted[len(compacted)-1].Text, "SUMMARY of ") {
		t.Errorf("compacted events: %+v", compacted)
	}

	// A summary carries the one before it: the next compaction is given it.
	summaries := 0
	for _, r := range reqs {
		if r.Messages[0].Content == compactPrompt {
			if summaries > 0 && !strings.Contains(r.Messages[1].Content, "Summary of what came before:\nSUMMARY of") {
				t.Errorf("a later summary request lacks the earlier summary:\n%s", r.Messages[1].Content)
			}
			summaries++
		}
	}
	if summaries == 0 {
		t.Error("no summary was asked for")
	}
}

// Without a summary (the model fails, or share = "off") the old exchanges
// are dropped, and the line says how many.
func TestCompactionWithoutASummaryDrops(t *testing.T) {
	for _, share := range []string{ShareRedacted, ShareOff} {
		srv := newCompactingServer(t, strings.Repeat("word ", 200))
		srv.fail = share == ShareRedacted
		cfg := Config{BaseURL: srv.URL, APIKey: testKey, Model: "test-model", HistoryTokens: 1200, Share: share, View: view.For(view.Options{})}
		s := NewConversation(cfg, &fakeTools{}, nil)
		shown := askQuestions(t, s, 6)
		if !strings.Contains(shown, "earlier exchange") || !strings.Contains(shown, "dropped to fit the context (no summary: ") {
			t.Errorf("share %s: no line said what was dropped:\n%s", share, shown)
		}
		for _, r := range srv.requests() {
			if share == ShareOff && r.Messages[0].Content == compactPrompt {
				t.Errorf("share = off asked for a summary")
			}
		}
	}
}

// /compact makes the whole conversation a summary on demand.
func TestCompactCommand(t *testing.T) {
	srv := newCompactingServer(t, "short")
	s := NewConversation(Config{BaseURL: srv.URL, APIKey: testKey, Model: "test-model"}, &fakeTools{}, nil)
	out := newSyncBuffer()
	s.Handle(context.Background(), "/compact", out)
	if out.String() != "nothing to compact\n" {
		t.Errorf("/compact with no conversation: %q", out.String())
	}
	askQuestions(t, s, 2)
	out = newSyncBuffer()
	if err := s.Handle(context.Background(), "/compact", out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "2 earlier exchanges compacted into a summary (/compact; the session log keeps it)\n" {
		t.Errorf("/compact: %q", out.String())
	}
	if len(s.history) != 0 || s.summary != "SUMMARY of question 0, question 1" {
		t.Errorf("after /compact: %d messages, summary %q", len(s.history), s.summary)
	}
}

// A resumed session's summary goes in the system message, with the note
// that the conversation is an ended session's.
func TestResumedSummarySent(t *testing.T) {
	f := newFake(t, textReply("ok"))
	s := NewConversation(f.config(), &fakeTools{}, nil)
	s.Resume("SUMMARY of the old session", nil)
	if err := s.Handle(context.Background(), "and now?", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	sys := f.requests()[0].Messages[0].Content
	if !strings.Contains(sys, "compacted to fit the context:\nSUMMARY of the old session") || !strings.Contains(sys, "restored from an earlier pyaichat session") {
		t.Errorf("system message:\n%s", sys)
	}
}
