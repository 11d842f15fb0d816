package agent

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/view"
)

// manyDeltas streams n deltas of the given field, each piece long.
func manyDeltas(field string, n int, piece string) string {
	var b strings.Builder
	b.WriteString("data: " + chunk(`{"role":"assistant"}`, "") + "\n\n")
	line := "data: " + chunk(`{"`+field+`":`+quoteJSON(piece)+`}`, "") + "\n\n"
	for i := 0; i < n; i++ {
		b.WriteString(line)
	}
	b.WriteString("data: " + chunk(`{}`, "stop") + "\n\ndata: [DONE]\n\n")
	return b.String()
}

// TestLongAnswerOfSmallDeltasIsLinear streams 20,000 ten-byte deltas. Kept
// by appending strings, the answer is copied once per delta: about 2 GB of
// allocation for 200 KB of text. Built in a builder, it is a few tens of MB,
// almost all of it the decoding of each event.
func TestLongAnswerOfSmallDeltasIsLinear(t *testing.T) {
	const n = 20000
	f := newFake(t, sse(manyDeltas("content", n, "0123456789")))
	s := NewConversation(f.config(), &fakeTools{}, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := s.Ask(context.Background(), "q", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 200<<20 {
		t.Errorf("%d MB allocated for a %d KB answer: the accumulation is not linear", got>>20, n*10>>10)
	}
	if h := s.History(); len(h[len(h)-1].Content) != n*10 {
		t.Errorf("answer kept: %d bytes, want %d", len(h[len(h)-1].Content), n*10)
	}
}

// TestResponseSizeIsCapped streams 3 MiB of answer, and of thinking: what
// is shown and kept stops at 1 MiB with a notice, and the rest is not read.
func TestResponseSizeIsCapped(t *testing.T) {
	piece := strings.Repeat("é", 16<<10) // 32 KiB, two bytes a rune: the cut must respect runes
	for _, field := range []string{"content", "reasoning_content"} {
		t.Run(field, func(t *testing.T) {
			f := newFake(t, sse(manyDeltas(field, 96, piece)))
			cfg := f.config()
			cfg.View = view.For(view.Options{Color: true})
			s := NewConversation(cfg, &fakeTools{}, nil)
			out, notices := newSyncBuffer(), newSyncBuffer()
			s.Notices = notices
			if err := s.Ask(context.Background(), "q", out); err != nil {
				t.Fatal(err)
			}
			shown := strings.NewReplacer("\x1b[2m", "", "\x1b[0m", "").Replace(out.String() + notices.String())
			if n := strings.Count(shown, "é"); n > llm.MaxResponseText/2 || n < llm.MaxResponseText/2-1 {
				t.Errorf("%d runes shown, want the first 1 MiB (%d)", n, llm.MaxResponseText/2)
			}
			if !strings.Contains(notices.String(), "(the response passed 1 MiB, so pyaichat stopped reading it there)") {
				t.Errorf("no notice: %q", notices.String()[max(0, len(notices.String())-200):])
			}
		})
	}
}
