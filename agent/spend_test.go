package agent

import (
	"context"
	"strings"
	"testing"
)

// The summary line shows how full the context is and what the question
// cost, from the config file's window and prices.
func TestSummaryShowsContextAndCostFromConfig(t *testing.T) {
	f := newFake(t, textReply("int"))
	cfg := f.config()
	cfg.ContextWindow = 400
	cfg.PriceIn, cfg.PriceOut, cfg.Priced = 2.5, 10, true
	s := NewConversation(cfg, &fakeTools{}, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "x?", out); err != nil {
		t.Fatal(err)
	}
	// (100 * 2.5 + 7 * 10) / 1e6 dollars.
	if want := "[tokens: 100 in, 7 out · context 25% of 400 · $0.0003]\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("summary: %q, want it to end %q", out.String(), want)
	}
}

// Without a config, the server's model list gives the window and the
// prices (OpenRouter's form: dollars per token, as strings), and a known
// model's window comes from the table.
func TestSummaryShowsContextAndCostFromTheServer(t *testing.T) {
	f := newFake(t, textReply("int"), textReply("int"))
	f.SetModelsJSON(`{"object":"list","data":[{"id":"test-model","context_length":1000,` +
		`"pricing":{"prompt":"0.000002","completion":"0.00001"}},{"id":"other","context_length":"odd"}]}`)
	s := NewConversation(f.config(), &fakeTools{}, nil)
	s.Prepare()
	if _, err := s.models.wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "x?", out); err != nil {
		t.Fatal(err)
	}
	if want := "[tokens: 100 in, 7 out · context 10% of 1k · $0.0003]\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("summary: %q, want it to end %q", out.String(), want)
	}

	// /usage totals the session.
	if err := s.Handle(context.Background(), "y?", out); err != nil {
		t.Fatal(err)
	}
	usage := newSyncBuffer()
	if err := s.Handle(context.Background(), "/usage", usage); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"questions: 2", "tokens: 200 in, 14 out", "cost: $0.0005", "context at the last question: 10% of 1k"} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("/usage lacks %q:\n%s", want, usage.String())
		}
	}
}

func TestKnownWindow(t *testing.T) {
	for model, want := range map[string]int{"gpt-4o": 128000, "gpt-4o-mini": 128000, "gpt-4.1-nano": 1047576, "claude-sonnet-4": 200000, "llama3": 0} {
		if got := knownWindow(model); got != want {
			t.Errorf("knownWindow(%q) = %d, want %d", model, got, want)
		}
	}
}
