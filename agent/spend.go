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

// setSpendLimits takes the config file's context window and prices,
// refusing values that cannot be meant.
func (c *Config) setSpendLimits(path string, fc fileConfig) error {
	if fc.ContextWindow < 0 {
		return fmt.Errorf("%s: context_window = %d, want a number of tokens", path, fc.ContextWindow)
	}
	c.ContextWindow = fc.ContextWindow
	if (fc.PriceIn == nil) != (fc.PriceOut == nil) {
		return fmt.Errorf("%s: price_in and price_out go together (US dollars per million tokens)", path)
	}
	if fc.PriceIn != nil {
		if *fc.PriceIn < 0 || *fc.PriceOut < 0 {
			return fmt.Errorf("%s: price_in and price_out are US dollars per million tokens, not negative", path)
		}
		c.PriceIn, c.PriceOut, c.Priced = *fc.PriceIn, *fc.PriceOut, true
	}
	return nil
}

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

// modelFacts is what the server's model list says of the model in use,
// asked once per model on a goroutine of its own, so that no question
// waits for it: a question that ends before it came does without.
type modelFacts struct {
	mu    sync.Mutex
	model string // the model asked about
	info  *llm.ModelInfo
	done  chan struct{} // closed when the lookup of model has ended
}

// ask starts looking up model, unless that is under way or done.
func (f *modelFacts) ask(m model, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.model == name {
		return
	}
	done := make(chan struct{})
	f.model, f.info, f.done = name, nil, done
	go func() {
		defer close(done)
		infos, err := m.ModelInfos(context.Background())
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.model != name || err != nil {
			return
		}
		for i := range infos {
			if infos[i].ID == name {
				f.info = &infos[i]
			}
		}
	}()
}

// get is what the list said of name, nil if nothing (yet).
func (f *modelFacts) get(name string) *llm.ModelInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.model != name {
		return nil
	}
	return f.info
}

// spend is what a question used: its context (the tokens of its last
// request) against the model's window, and its cost where the prices are
// known: the config file's, else the server's.
func (s *Conversation) spend(u llm.Usage, lastPrompt int) *event.Spend {
	sp := &event.Spend{Context: lastPrompt, Window: s.cfg.ContextWindow}
	info := s.facts.get(s.cfg.Model)
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
