package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// maxSummaryBytes bounds the note that stands for compacted exchanges: it
// goes with every request from then on.
const maxSummaryBytes = 4000

// compactPrompt asks the model for the note that replaces older exchanges.
const compactPrompt = `You compact the earlier part of a conversation between a user and the assistant of pyaichat, a Python REPL whose assistant inspects the user's live session with read-only tools. Write a short note, at most 200 words, that the assistant will read instead of those exchanges: what the user asked, what the tools showed (names, types, shapes, values and errors that may matter later) and what was concluded. Plain text, no preamble.`

// compactedBudget is the share of the budget the conversation is brought
// down to, so that the next few questions fit without compacting again.
func compactedBudget(budget int) int { return budget * 3 / 4 }

// exchangeStarts are the indexes of the user messages of history: where
// each exchange starts.
func exchangeStarts(history []llm.Message) []int {
	var starts []int
	for i, m := range history {
		if m.Role == "user" {
			starts = append(starts, i)
		}
	}
	return starts
}

// compactionCut is where the exchanges kept start when history is over
// budget (in tokens): the oldest exchanges go until the rest fits in the
// compacted budget, the newest (the question being asked) always stays.
// It is 0 when nothing need go.
func compactionCut(history []llm.Message, budget int) int {
	total := 0
	for _, m := range history {
		total += messageTokens(m)
	}
	if total <= budget {
		return 0
	}
	starts := exchangeStarts(history)
	if len(starts) < 2 {
		return 0
	}
	target := compactedBudget(budget)
	cut := 0
	for _, next := range starts[1:] {
		for _, m := range history[cut:next] {
			total -= messageTokens(m)
		}
		cut = next
		if total <= target {
			break
		}
	}
	return cut
}

// compact brings the conversation within budget before a request whose
// system message takes sysTokens: the oldest exchanges are summarised by
// the model into the note the system message carries (with the note
// before them, if any), and leave the history. Without a summary (share =
// "off", or the model failed) they are dropped. Either way one dim line
// says so, and a Compacted event records it for the session log. It
// reports whether the history changed.
func (t *turn) compact(ctx context.Context, sysTokens int) bool {
	cut := compactionCut(t.s.history, t.s.cfg.HistoryTokens-sysTokens)
	if cut == 0 {
		return false
	}
	t.notify(t.s.compactUpTo(ctx, cut))
	return true
}

// compactUpTo replaces the exchanges of history before cut and says what
// it did, in one line.
func (s *Conversation) compactUpTo(ctx context.Context, cut int) string {
	n := len(exchangeStarts(s.history[:cut]))
	var summary string
	var err error
	if s.cfg.Share == ShareOff {
		err = errors.New(`share = "off"`)
	} else {
		summary, err = s.summarise(ctx, s.history[:cut])
	}
	s.history = append(s.history[:0:0], s.history[cut:]...)
	kept := len(exchangeStarts(s.history))
	if err != nil {
		s.emit(event.Event{Kind: event.Compacted, Text: s.summary, Calls: kept})
		return fmt.Sprintf("%s dropped to fit the context (no summary: %v)", plural(n, "earlier exchange"), s.clean(err))
	}
	s.summary = summary
	s.emit(event.Event{Kind: event.Compacted, Text: summary, Calls: kept})
	return fmt.Sprintf("%s compacted into a summary (/compact; the session log keeps it)", plural(n, "earlier exchange"))
}

// summarise asks the model for the note that stands for old (and for the
// note before it), without tools.
func (s *Conversation) summarise(ctx context.Context, old []llm.Message) (string, error) {
	var b strings.Builder
	if s.summary != "" {
		fmt.Fprintf(&b, "Summary of what came before:\n%s\n\n", s.summary)
	}
	for _, m := range old {
		switch {
		case m.Role == "user":
			fmt.Fprintf(&b, "User: %s\n", m.Content)
		case m.Role == "tool":
			fmt.Fprintf(&b, "Tool result: %s\n", termsafe.Shorten(m.Content, 600))
		case len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "Tool call: %s(%s)\n", c.Name, termsafe.Shorten(c.Arguments, 200))
			}
		default:
			fmt.Fprintf(&b, "Assistant: %s\n", m.Content)
		}
	}
	text, _ := s.filter.Text(b.String())
	msgs := []llm.Message{{Role: "system", Content: compactPrompt}, {Role: "user", Content: text}}
	stream, err := s.model.Open(ctx, s.cfg.Model, msgs, llm.Tools{}, func(string) {})
	if err != nil {
		return "", err
	}
	defer stream.Close()
	var note strings.Builder
	var split thinkSplit
	keep := func(think bool, text string) {
		if !think {
			note.WriteString(text)
		}
	}
	for stream.Next() {
		if kind, choice, piece := stream.Current(); kind == llm.DeltaContent && choice == 0 {
			split.push(piece, keep)
		}
	}
	split.flush(keep)
	if err := stream.Err(); err != nil {
		return "", err
	}
	summary := strings.TrimSpace(note.String())
	if summary == "" {
		return "", errors.New("the model's summary was empty")
	}
	summary, _ = s.filter.Text(termsafe.Prefix(summary, maxSummaryBytes))
	return summary, nil
}

// summaryPrompt is the part of the system message that carries the note
// of compacted exchanges.
func (s *Conversation) summaryPrompt() string {
	if s.summary == "" {
		return ""
	}
	return "\n\nSummary of the earlier conversation, compacted to fit the context:\n" + s.summary
}

// compactCommand is /compact: the whole conversation so far becomes the
// summary.
func (s *Conversation) compactCommand(ctx context.Context, out io.Writer) error {
	if len(exchangeStarts(s.history)) == 0 {
		_, err := fmt.Fprintln(out, "nothing to compact")
		return err
	}
	_, err := fmt.Fprintln(out, s.compactUpTo(ctx, len(s.history)))
	return err
}
