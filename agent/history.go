package agent

import (
	"strings"
	"unicode/utf8"

	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/redact"
	"github.com/pyaichat/pyaichat/capabilities/spec"
)

// estimateTokens is the usual 4-bytes-per-token rule of thumb; it only has
// to keep requests inside a budget, not match any tokenizer.
func estimateTokens(n int) int { return (n + 3) / 4 }

func messageTokens(m llm.Message) int {
	n := len(m.Content) + len(m.ToolCallID) + 8 // role and framing
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments) + 16
	}
	return estimateTokens(n)
}

// systemMessage is the system prompt plus the automatic session context,
// rebuilt for every request so the model sees the session as it is now
// rather than a copy per question in the history; it also returns what
// redaction removed from the context.
func (s *Conversation) systemMessage() (llm.Message, redact.Report) {
	prompt := systemPrompt
	if s.restored {
		prompt += restoredNote
	}
	prompt += s.instructionsPrompt() + s.summaryPrompt()
	var rep redact.Report
	if s.ctxFn == nil && s.shownFn != nil && s.cfg.Share == ShareAsk {
		s.filter.Text(s.shownFn()) // learnt from, not sent
	}
	if s.ctxFn != nil {
		// Redacted before it is cut, so that a cut never leaves half a
		// secret that no longer matches.
		var c string
		c, rep = s.filter.Text(strings.TrimSpace(s.ctxFn()))
		if c := capContext(c, s.cfg.ContextBytes); c != "" {
			prompt += "\n\nRecent py> activity (automatic, may be truncated):\n" + c
		}
	}
	return llm.Message{Role: "system", Content: prompt}, rep
}

// capContext keeps the most recent part of the session context (its end)
// within budget bytes, cut at a line boundary when one is near.
func capContext(c string, budget int) string {
	if len(c) <= budget {
		return c
	}
	const mark = "[earlier activity omitted]\n"
	cut := len(c) - (budget - len(mark))
	for cut < len(c) && !utf8.RuneStart(c[cut]) {
		cut++
	}
	if i := strings.IndexByte(c[cut:], '\n'); i >= 0 && i < budget/4 {
		cut += i + 1
	}
	return mark + c[cut:]
}

// requestMessages is what one request sends: sys, the system message,
// and the conversation within HistoryTokens. Older exchanges were
// compacted before it (turn.compact); if the current exchange alone is
// still too big, its oldest tool results are replaced by a stub in this
// request only, so every tool-call id stays answered.
func (s *Conversation) requestMessages(sys llm.Message) []llm.Message {
	budget := s.cfg.HistoryTokens - messageTokens(sys)
	total := 0
	for _, m := range s.history {
		total += messageTokens(m)
	}
	msgs := make([]llm.Message, 0, len(s.history)+1)
	msgs = append(msgs, sys)
	msgs = append(msgs, s.history...)
	const stub = `{"error":{"type":"Dropped","message":"result dropped to fit the context budget; call again if needed"}}`
	for i := 1; total > budget && i < len(msgs); i++ {
		if msgs[i].Role == "tool" && len(msgs[i].Content) > len(stub) {
			total -= messageTokens(msgs[i])
			msgs[i].Content = stub
			total += messageTokens(msgs[i])
		}
	}
	return msgs
}

// restoredNote follows the system prompt in a resumed conversation. Its
// tool results are replayed as they were sent (under share = "redacted"),
// so that the model knows what it looked at and why it answered as it did;
// this says that they describe an interpreter that has ended, so that it
// does not take them for values of the one it now inspects.
const restoredNote = "\n\nThe conversation before the user's next question was restored from an earlier pyaichat session that has ended. Its tool results describe that session's Python as it was then, not the one running now (the user may or may not have run the earlier inputs again): call the tools again before relying on a value."

// withheldResult stands for an earlier session's tool result under share =
// "off" or "ask": its value left under that session's policy, perhaps to
// another provider, and this one's forbids sending it unseen.
func withheldResult(share string) string {
	return spec.ErrorResult(spec.Hidden, "the value of this earlier session's result is withheld (share = "+share+"); call the tool again if needed")
}

// Resume starts the conversation from an earlier one (a session resumed
// from its log): the next request carries summary, the note of its
// compacted exchanges if any, and msgs, in the wire form they
// were sent (questions, assistant messages with their tool calls, the
// tool results with the same ids, answers), within HistoryTokens like any
// other history, and the system prompt says they are an ended session's.
// Every message passes the filter again, under the policy in force now;
// under share = "off" and "ask" the tool results' values are not sent.
func (s *Conversation) Resume(summary string, msgs []llm.Message) {
	s.summary, _ = s.filter.Text(summary)
	s.history = s.history[:0:0]
	for _, m := range msgs {
		if m.Role == "tool" && (s.cfg.Share == ShareOff || s.cfg.Share == ShareAsk) {
			m.Content = withheldResult(s.cfg.Share)
		} else if m.Role == "tool" {
			m.Content, _ = s.filteredResult(m.Content)
		} else {
			m.Content, _ = s.filter.Text(m.Content)
		}
		m.ToolCalls = s.filteredCalls(m.ToolCalls)
		s.history = append(s.history, m)
	}
	s.restored = len(msgs) > 0 || summary != ""
}
