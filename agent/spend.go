package agent

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/llm"
)

// knownWindows are the context windows of models whose servers do not
// list them (OpenAI's and Anthropic's model lists give only ids), by the
// start of the model's name; the longest match wins.
var knownWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-4o", 128000},
	{"gpt-4.1", 1047576},
	{"gpt-4-turbo", 128000},
	{"gpt-5", 400000},
	{"o1", 200000},
	{"o3", 200000},
	{"o4-mini", 200000},
	{"claude-", 200000},
}

func knownWindow(model string) int {
	best, tokens := 0, 0
	for _, k := range knownWindows {
		if strings.HasPrefix(model, k.prefix) && len(k.prefix) > best {
			best, tokens = len(k.prefix), k.tokens
		}
	}
	return tokens
}

// serverModels is the server's model list (GET /models), asked once per
// conversation on a goroutine of its own when the user switches to ai>
// (Prepare), so that no question waits for it but one that must choose
// a model; a list that could not be had is asked again the next time.
type serverModels struct {
	mu    sync.Mutex
	done  chan struct{} // closed when the latest asking ended
	infos []llm.ModelInfo
	err   error
}

// ask starts asking m for the list, unless it is under way or was had.
func (l *serverModels) ask(m model) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		select {
		case <-l.done:
			if l.err == nil {
				return
			}
		default:
			return
		}
	}
	done := make(chan struct{})
	l.done = done
	go func() {
		defer close(done)
		infos, err := m.ModelInfos(context.Background())
		l.mu.Lock()
		l.infos, l.err = infos, err
		l.mu.Unlock()
	}()
}

// wait is the list once the asking (ask, first) has ended, or ctx's error.
func (l *serverModels) wait(ctx context.Context) ([]llm.ModelInfo, error) {
	l.mu.Lock()
	done := l.done
	l.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.infos, l.err
}

// info is what the list says of the model name, nil if nothing (yet).
func (l *serverModels) info(name string) *llm.ModelInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.infos {
		if l.infos[i].ID == name {
			return &l.infos[i]
		}
	}
	return nil
}

// spend is what a question used: its context (the tokens of its last
// request) against the model's window, and its cost where the prices are
// known: the config file's, else the server's.
func (s *Conversation) spend(u llm.Usage, lastPrompt int) *event.Spend {
	sp := &event.Spend{Context: lastPrompt, Window: s.cfg.ContextWindow}
	info := s.models.info(s.cfg.Model)
	if sp.Window == 0 && info != nil {
		sp.Window = info.ContextWindow
	}
	if sp.Window == 0 {
		sp.Window = knownWindow(s.cfg.Model)
	}
	in, out, priced := s.cfg.PriceIn, s.cfg.PriceOut, s.cfg.Priced
	if !priced && info != nil && info.Priced {
		in, out, priced = info.PriceIn, info.PriceOut, true
	}
	if priced {
		cost := (float64(u.PromptTokens)*in + float64(u.CompletionTokens)*out) / 1e6
		sp.CostUSD = &cost
	}
	return sp
}

// sessionUsage is the session's totals, for /usage.
type sessionUsage struct {
	questions          int
	prompt, completion int
	cost               float64
	priced             int // questions whose cost is known
	last               *event.Spend
}

func (su *sessionUsage) add(u llm.Usage, sp *event.Spend) {
	su.questions++
	su.prompt += u.PromptTokens
	su.completion += u.CompletionTokens
	if sp.CostUSD != nil {
		su.cost += *sp.CostUSD
		su.priced++
	}
	su.last = sp
}

// usageCommand is /usage: the session's tokens, its cost where known, and
// how full the context was at the last question.
func (s *Conversation) usageCommand(out io.Writer) error {
	su := s.used
	if su.questions == 0 {
		_, err := fmt.Fprintln(out, "no question has reported its tokens yet")
		return err
	}
	lines := []string{
		fmt.Sprintf("questions: %d (with token counts from the server)", su.questions),
		fmt.Sprintf("tokens: %d in, %d out", su.prompt, su.completion),
	}
	switch {
	case su.priced == su.questions:
		lines = append(lines, "cost: "+event.FormatUSD(su.cost))
	case su.priced > 0:
		lines = append(lines, fmt.Sprintf("cost: %s for the %d questions with known prices", event.FormatUSD(su.cost), su.priced))
	default:
		lines = append(lines, "cost: unknown (set price_in and price_out in the config file)")
	}
	if sp := su.last; sp != nil {
		lines = append(lines, "context at the last question: "+sp.Share())
	}
	_, err := fmt.Fprintln(out, strings.Join(lines, "\n"))
	return err
}
