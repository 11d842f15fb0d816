package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/termsafe"
	"github.com/pyaichat/pyaichat/agent/view"
)

func TestVisible(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain text and newlines stay", "a\tb\nc", "a\tb\nc"},
		{"non-ASCII letters stay", "café ≠ 日本 \uFFFD", "café ≠ 日本 \uFFFD"},
		{"OSC title", "\x1b]0;T\x07", `\x1b]0;T\x07`},
		{"OSC 52 clipboard", "\x1b]52;c;ZXZpbA==\x1b\\", `\x1b]52;c;ZXZpbA==\x1b\`},
		{"alternate screen, clear, cursor hide", "\x1b[?1049h\x1b[2J\x1b[?25l", `\x1b[?1049h\x1b[2J\x1b[?25l`},
		{"unreset SGR", "\x1b[2mdim", `\x1b[2mdim`},
		{"carriage return and backspace", "safe\rover\b\bX", `safe\rover\x08\x08X`},
		{"NUL, BEL, DEL", "\x00\x07\x7f", `\x00\x07\x7f`},
		{"C1 controls (CSI, NEL, ST)", "\u009b31m\u0085\u009c", `\x9b31m\x85\x9c`},
		{"bytes that are not UTF-8", "a\x9b\xffb", `a\x9b\xffb`},
		{"bidi overrides and isolates", "\u202aA\u202eB\u2066C\u2069", `\u202aA\u202eB\u2066C\u2069`},
		{"other format characters stay", "a\u200db", "a\u200db"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := termsafe.Visible(c.in); got != c.want {
				t.Errorf("termsafe.Visible(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	if got := termsafe.OneLine("  a\r\n\tb \u0085 c\x1b[2J  ", 100); got != `a b c\x1b[2J` {
		t.Errorf("oneLine = %q", got)
	}
	if got := termsafe.OneLine(strings.Repeat("é", 300), 200); len(got) > 203 || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
		t.Errorf("not cut to about 200 bytes on a rune boundary: %d bytes %q", len(got), got[len(got)-8:])
	}
}

// checkHarmless fails if out carries anything that drives a terminal other
// than pyaichat's own dim styling, or if that styling is left open.
func checkHarmless(t *testing.T, what, out string) {
	t.Helper()
	depth := 0
	for i := 0; i < len(out); {
		switch {
		case strings.HasPrefix(out[i:], "\x1b[2m"):
			if depth != 0 {
				t.Errorf("%s: dim nested at byte %d: %q", what, i, out)
			}
			depth++
			i += 4
			continue
		case strings.HasPrefix(out[i:], "\x1b[0m"):
			depth = 0
			i += 4
			continue
		}
		r, n := utf8.DecodeRuneInString(out[i:])
		bad := (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || termsafe.IsBidiControl(r) || (r == utf8.RuneError && n == 1)
		if bad {
			t.Errorf("%s: %U reaches the terminal at byte %d: %q", what, r, i, out)
			return
		}
		if r == '\n' && depth != 0 {
			t.Errorf("%s: a line ends dim at byte %d: %q", what, i, out)
		}
		i += n
	}
	if depth != 0 {
		t.Errorf("%s: output ends dim, so the prompt would be: %q", what, out)
	}
}

const hostile = "\x1b]0;T\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[?1049h\x1b[?25l\x1b[2mdim\rover\bX \u009b31m \u202eevil\u202c"

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestHostileTextIsMadeVisible sends escape and control characters through
// every way a model or server reaches the terminal: thinking, answer text,
// a tool call's argument in the summary line, a retry notice and the final
// error.
func TestHostileTextIsMadeVisible(t *testing.T) {
	f := newFake(t,
		sse(sseBody(
			chunk(`{"role":"assistant","reasoning_content":`+quoteJSON("thinking "+hostile)+`}`, ""),
			chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"eval_expr","arguments":`+quoteJSON(`{"expr":`+quoteJSON("'\x1b]0;T\x07\x1b[2J'\n")+`}`)+`}}]}`, "tool_calls"),
		)),
		sse(sseBody(chunk(`{"content":`+quoteJSON("answer "+hostile)+`}`, "stop"), usageChunk)),
		raw(503, "application/json", `{"error":{"message":`+quoteJSON("busy "+hostile)+`}}`),
		raw(400, "application/json", `{"error":{"message":`+quoteJSON("bad "+hostile)+`}}`),
	)
	for _, color := range []bool{true, false} {
		cfg := f.config()
		cfg.View = view.For(view.Options{Color: color})
		s := NewConversation(cfg, &fakeTools{}, nil)
		if color {
			out := newSyncBuffer()
			if err := s.Handle(context.Background(), "q", out); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			checkHarmless(t, "answer", got)
			for _, want := range []string{`answer \x1b]0;T\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J`, `\u202eevil\u202c`, `eval_expr('\x1b]0;T\x07\x1b[2J'\n)`, `thinking \x1b]0;T`} {
				if !strings.Contains(got, want) {
					t.Errorf("%q is not shown visibly in %q", want, got)
				}
			}
			continue
		}
		out := newSyncBuffer()
		err := s.Handle(context.Background(), "q", out)
		if err == nil {
			t.Fatal("no error")
		}
		checkHarmless(t, "retry notice", out.String())
		checkHarmless(t, "error", err.Error())
		if !strings.Contains(out.String(), `busy \x1b]0;T`) || !strings.Contains(err.Error(), `bad \x1b]0;T`) {
			t.Errorf("server text not shown visibly: %q, %q", out.String(), err)
		}
	}
}

// splitReply streams pieces as separate deltas of the given field
// ("content" or "reasoning_content"), then an answer if the pieces were
// thinking.
func splitReply(field string, pieces []string) fakemodel.Reply {
	var chunks []string
	for _, p := range pieces {
		chunks = append(chunks, chunk(`{"`+field+`":`+quoteJSON(p)+`}`, ""))
	}
	if field != "content" {
		chunks = append(chunks, chunk(`{"content":"done"}`, ""))
	}
	chunks = append(chunks, chunk(`{}`, "stop"))
	return sse(sseBody(chunks...))
}

// TestKeySplitAcrossDeltasIsRedacted splits the key at every position, and
// into one character per delta, in answer text and in thinking, at ai> and
// under -p.
func TestKeySplitAcrossDeltasIsRedacted(t *testing.T) {
	var splits [][]string
	for i := 1; i < len(testKey); i++ {
		splits = append(splits, []string{"Your key is " + testKey[:i], testKey[i:] + " ok."})
	}
	splits = append(splits, strings.Split("Your key is "+testKey+" ok.", ""))
	splits = append(splits, []string{"Your key is sk-", "sk-" + testKey + " and s", "k ok."})
	for _, field := range []string{"content", "reasoning_content"} {
		for _, oneShot := range []bool{false, true} {
			f := newFake(t)
			cfg := f.config()
			cfg.View = view.For(view.Options{Color: true})
			s := NewConversation(cfg, &fakeTools{}, nil)
			for _, pieces := range splits {
				f.add(splitReply(field, pieces))
				out, notes := newSyncBuffer(), newSyncBuffer()
				var err error
				if oneShot {
					s.Notices = notes
					err = s.Ask(context.Background(), "key?", out)
				} else {
					err = s.Handle(context.Background(), "key?", out)
				}
				if err != nil {
					t.Fatal(err)
				}
				shown := strings.NewReplacer("\x1b[2m", "", "\x1b[0m", "").Replace(out.String() + notes.String())
				if strings.Contains(shown, "S3CRET") || !strings.Contains(shown, "[key]") {
					t.Errorf("%s, one-shot %v, split %q: shown %q", field, oneShot, pieces, shown)
				}
				if want := strings.Join(pieces, ""); field == "content" && !strings.Contains(shown, llm.RedactKey(want, testKey)) {
					t.Errorf("text around the key lost: %q, want %q", shown, llm.RedactKey(want, testKey))
				}
			}
		}
	}
}
