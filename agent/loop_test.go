package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/agent/view"
)

func TestMultiStepToolUse(t *testing.T) {
	f := newFake(t,
		toolReply("", fcall{"call_a", "get_type", `{"expr": "x"}`}),
		toolReply("", fcall{"call_b", "eval_expr", `{"expr":"len(x)"}`}),
		textReply("x is a list of 3 ints."),
	)
	tools := &fakeTools{fn: func(_ context.Context, name string, args json.RawMessage) (string, bool) {
		switch name {
		case "get_type":
			return `{"type":"list","module":"builtins"}`, false
		case "eval_expr":
			return `{"repr":"3","type":"int","truncated":false}`, false
		}
		return "", true
	}}
	s := NewConversation(f.config(), tools, func() string { return ">>> x = [1, 2, 3]" })
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "what is x?", out); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	got := out.String()
	if !strings.HasPrefix(got, "x is a list of 3 ints.\n") {
		t.Errorf("answer not streamed to out: %q", got)
	}
	if !strings.Contains(got, "[2 calls: get_type(x), eval_expr(len(x)) · tokens: 300 in, 21 out]") {
		t.Errorf("summary line missing or wrong: %q", got)
	}
	if strings.Contains(got, "\x1b[") {
		t.Errorf("escape codes without Color: %q", got)
	}
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if want := []string{`get_type {"expr": "x"}`, `eval_expr {"expr":"len(x)"}`}; fmt.Sprint(tools.called()) != fmt.Sprint(want) {
		t.Errorf("tools called %q, want %q", tools.called(), want)
	}
	r2, r3 := toolResults(reqs[1]), toolResults(reqs[2])
	if r2["call_a"] != `{"type":"list","module":"builtins"}` || r3["call_b"] != `{"repr":"3","type":"int","truncated":false}` {
		t.Errorf("tool results sent back: %v then %v", r2, r3)
	}
	first := reqs[0]
	if first.Model != "test-model" || !first.Stream || len(first.Tools) != 7 {
		t.Errorf("first request: model %q stream %v, %d tools", first.Model, first.Stream, len(first.Tools))
	}
	if sys := first.Messages[0]; sys.Role != "system" || !strings.Contains(sys.Content, "read-only") || !strings.Contains(sys.Content, ">>> x = [1, 2, 3]") {
		t.Errorf("system message lacks prompt or automatic context: %q", sys.Content)
	}
	if f.requests()[0].auth != "Bearer "+testKey {
		t.Errorf("Authorization header %q", f.requests()[0].auth)
	}
	for _, r := range reqs {
		checkValid(t, r)
	}
	// Memory: the next question carries the whole first exchange.
	f.add(textReply("yes"))
	if err := s.Handle(context.Background(), "and now?", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	last := f.requests()[3]
	checkValid(t, last)
	roles := ""
	for _, m := range last.Messages {
		roles += m.Role[:1]
	}
	if roles != "suatatau" {
		t.Errorf("roles of the 2nd question's request = %q, want system,user,assistant,tool,...,user", roles)
	}
}

func TestParallelToolCalls(t *testing.T) {
	f := newFake(t,
		toolReply("", fcall{"call_1", "get_repr", `{"expr":"a"}`}, fcall{"call_2", "get_repr", `{"expr":"b"}`}),
		textReply("a is 1 and b is 2."),
	)
	tools := &fakeTools{fn: func(_ context.Context, _ string, args json.RawMessage) (string, bool) {
		var a struct{ Expr string }
		json.Unmarshal(args, &a)
		return map[string]string{"a": `{"repr":"1"}`, "b": `{"repr":"2"}`}[a.Expr], false
	}}
	s := NewConversation(f.config(), tools, nil)
	if err := s.Handle(context.Background(), "a and b?", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	res := toolResults(reqs[1])
	if res["call_1"] != `{"repr":"1"}` || res["call_2"] != `{"repr":"2"}` {
		t.Errorf("results %v", res)
	}
	checkValid(t, reqs[1])
}

func TestStepCapEndsTheTurn(t *testing.T) {
	f := newFake(t)
	for i := 0; i <= 8; i++ {
		f.add(toolReply("", fcall{fmt.Sprintf("call_%d", i), "eval_expr", fmt.Sprintf(`{"expr":"x[%d]"}`, i)}))
	}
	tools := &fakeTools{}
	s := NewConversation(f.config(), tools, nil)
	out := newSyncBuffer()
	err := s.Handle(context.Background(), "loop forever", out)
	var be *BoundError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "8 tool steps") {
		t.Fatalf("err = %v, want the step-cap bound", err)
	}
	if n := len(tools.called()); n != 8 {
		t.Errorf("%d tool calls ran, want 8", n)
	}
	if n := len(f.requests()); n != 9 {
		t.Errorf("%d requests, want 9", n)
	}
	f.add(textReply("ok"))
	s.Handle(context.Background(), "next", newSyncBuffer())
	checkValid(t, f.requests()[9])
}

func TestDeadlineEndsTheTurn(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, hangBeforeHeaders(release))
	cfg := f.config()
	cfg.QuestionTimeout = 50 * time.Millisecond
	s := NewConversation(cfg, &fakeTools{}, nil)
	var err error
	within(t, "Handle past its deadline", func() { err = s.Handle(context.Background(), "slow?", newSyncBuffer()) })
	if !isBound(err) || !strings.Contains(err.Error(), "took longer than 50ms") {
		t.Fatalf("err = %v, want the deadline bound", err)
	}
	if len(s.History()) != 0 {
		t.Errorf("an unanswered question stays in the history: %+v", s.History())
	}
}

func TestRepeatedIdenticalCallsAreDetected(t *testing.T) {
	same := fcall{"", "get_type", `{"expr":"df"}`}
	f := newFake(t)
	for i := 0; i < 3; i++ {
		same.id = fmt.Sprintf("call_%d", i)
		f.add(toolReply("", same))
	}
	tools := &fakeTools{}
	s := NewConversation(f.config(), tools, nil)
	err := s.Handle(context.Background(), "df?", newSyncBuffer())
	if !isBound(err) || !strings.Contains(err.Error(), "repeating the same call (get_type(df))") {
		t.Fatalf("err = %v", err)
	}
	if n := len(tools.called()); n != 1 {
		t.Errorf("the identical call ran %d times, want once", n)
	}
	if r := toolResults(f.requests()[2])["call_1"]; !strings.Contains(r, `"Repeated"`) {
		t.Errorf("the model was not told about the repeat: %q", r)
	}
}

func TestToolResultIsCapped(t *testing.T) {
	f := newFake(t, toolReply("", fcall{"call_big", "get_repr", `{"expr":"big"}`}), textReply("big."))
	big := strings.Repeat("é", 50_000) // multi-byte, so the cut must respect runes
	tools := &fakeTools{fn: func(context.Context, string, json.RawMessage) (string, bool) { return big, false }}
	cfg := f.config()
	cfg.ToolResultBytes = 1001
	s := NewConversation(cfg, tools, nil)
	if err := s.Handle(context.Background(), "big?", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	got := toolResults(f.requests()[1])["call_big"]
	body, marker, ok := strings.Cut(got, "\n[truncated: the result was 100000 bytes")
	if !ok || len(body) > 1001 || !strings.HasPrefix(big, body) || marker == "" {
		t.Errorf("capped result: %d bytes, marker found %v", len(body), ok)
	}
}

func TestHistoryIsTrimmedToBudget(t *testing.T) {
	// Within one question, old tool results give way to a stub, ids kept.
	f := newFake(t, toolReply("", fcall{"c1", "get_repr", `{"expr":"a"}`}), toolReply("", fcall{"c2", "get_repr", `{"expr":"b"}`}), textReply("done"))
	cfg := f.config()
	cfg.HistoryTokens = 1200
	tools := &fakeTools{fn: func(context.Context, string, json.RawMessage) (string, bool) { return strings.Repeat("x", 3000), false }}
	s := NewConversation(cfg, tools, nil)
	if err := s.Handle(context.Background(), "two big ones", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	req := f.requests()[2]
	res := toolResults(req)
	if !strings.Contains(res["c1"], "Dropped") || strings.Contains(res["c2"], "Dropped") {
		t.Errorf("oldest result should be stubbed, newest kept: %v", res)
	}
	checkValid(t, req)
}

func TestCancelMidStream(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, textThen("Partial answ", false, release))
	s := NewConversation(f.config(), &fakeTools{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	out := newSyncBuffer()
	go func() { <-out.wrote; cancel() }()
	var err error
	within(t, "Handle after Ctrl-C", func() { err = s.Handle(ctx, "tell me", out) })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !strings.Contains(out.String(), "Partial answ") {
		t.Errorf("shown text lost: %q", out.String())
	}
	f.add(textReply("fine"))
	if err := s.Handle(context.Background(), "again", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	checkValid(t, f.requests()[1])
}

func TestCancelDuringToolCall(t *testing.T) {
	f := newFake(t, toolReply("", fcall{"call_x", "eval_expr", `{"expr":"slow()"}`}, fcall{"call_y", "get_type", `{"expr":"y"}`}))
	started := make(chan struct{})
	stuck := make(chan struct{})
	defer close(stuck)
	tools := &fakeTools{fn: func(context.Context, string, json.RawMessage) (string, bool) {
		close(started)
		<-stuck // a tool that ignores its context
		return "late", false
	}}
	s := NewConversation(f.config(), tools, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	var err error
	within(t, "Handle with a stuck tool", func() { err = s.Handle(ctx, "run it", newSyncBuffer()) })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if n := len(tools.called()); n != 1 {
		t.Errorf("%d tools started; the second must not run after Ctrl-C", n)
	}
	f.add(textReply("ok"))
	if err := s.Handle(context.Background(), "again", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	req := f.requests()[1]
	checkValid(t, req)
	if res := toolResults(req); !strings.Contains(res["call_x"], "Canceled") || !strings.Contains(res["call_y"], "Canceled") {
		t.Errorf("cancelled calls not answered as such: %v", res)
	}
}

func TestMidStreamFailureKeepsTextAndNeverRerunsTools(t *testing.T) {
	f := newFake(t,
		toolReply("", fcall{"call_1", "get_type", `{"expr":"x"}`}),
		textThen("x is an", true, nil),
	)
	tools := &fakeTools{}
	s := NewConversation(f.config(), tools, nil)
	out := newSyncBuffer()
	err := s.Handle(context.Background(), "x?", out)
	if err == nil || !strings.Contains(err.Error(), "answer incomplete") {
		t.Fatalf("err = %v, want an incomplete answer", err)
	}
	if !strings.Contains(out.String(), "x is an") {
		t.Errorf("shown text lost: %q", out.String())
	}
	if n := len(tools.called()); n != 1 {
		t.Errorf("tool ran %d times, want once", n)
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("%d requests: a broken stream must not be retried", n)
	}
	h := s.History()
	if last := h[len(h)-1]; last.Role != "assistant" || last.Content != "x is an" {
		t.Errorf("partial answer not kept in the conversation: %+v", last)
	}
}

func TestLengthCutToolCallIsNotRun(t *testing.T) {
	f := newFake(t, toolReply("length", fcall{"call_1", "eval_expr", `{"expr":"a+b"}`}))
	tools := &fakeTools{}
	s := NewConversation(f.config(), tools, nil)
	err := s.Handle(context.Background(), "sum?", newSyncBuffer())
	if err == nil || !strings.Contains(err.Error(), "output limit") {
		t.Fatalf("err = %v", err)
	}
	if len(tools.called()) != 0 {
		t.Errorf("ran a tool call from a length-cut response: %v", tools.called())
	}
}

func TestToolsRunWhateverFinishReasonSays(t *testing.T) {
	// OpenAI (forced calls), Gemini and LiteLLM say "stop" for tool calls.
	f := newFake(t, toolReply("stop", fcall{"call_1", "get_type", `{"expr":"x"}`}), textReply("int"))
	tools := &fakeTools{}
	s := NewConversation(f.config(), tools, nil)
	if err := s.Handle(context.Background(), "x?", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	if len(tools.called()) != 1 {
		t.Errorf("tool calls with finish_reason stop were not run")
	}
}

func TestUnknownToolAndInvalidArgumentsBecomeErrorResults(t *testing.T) {
	f := newFake(t,
		toolReply("", fcall{"c1", "rm_rf", `{}`}, fcall{"c2", "get_type", `{"expr": x`}),
		textReply("sorry"),
	)
	tools := &fakeTools{}
	s := NewConversation(f.config(), tools, nil)
	if err := s.Handle(context.Background(), "go", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	res := toolResults(f.requests()[1])
	for _, id := range []string{"c1", "c2"} {
		if !strings.Contains(res[id], "list_globals, get_type, get_repr, get_dir, get_doc, eval_expr, get_last_exception") {
			t.Errorf("%s: error result does not list the tools: %q", id, res[id])
		}
	}
	if !strings.Contains(res["c1"], "UnknownTool") || !strings.Contains(res["c2"], "InvalidArguments") {
		t.Errorf("results %v", res)
	}
	if len(tools.called()) != 0 {
		t.Errorf("invalid calls reached the tools: %v", tools.called())
	}
}

func TestToolCallWrittenAsText(t *testing.T) {
	f := newFake(t,
		textReply("```json\n{\"name\": \"get_type\", \"arguments\": {\"expr\": \"df\"}}\n```"),
		textReply("df is a DataFrame."),
	)
	tools := &fakeTools{fn: func(context.Context, string, json.RawMessage) (string, bool) {
		return `{"type":"pandas.DataFrame"}`, false
	}}
	s := NewConversation(f.config(), tools, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "df?", out); err != nil {
		t.Fatal(err)
	}
	if got := tools.called(); len(got) != 1 || got[0] != `get_type {"expr": "df"}` {
		t.Fatalf("text tool call not run: %v", got)
	}
	if !strings.Contains(out.String(), "wrote its tool call as text") {
		t.Errorf("the user is not told: %q", out.String())
	}
	req := f.requests()[1]
	checkValid(t, req)
	if res := toolResults(req); len(res) != 1 {
		t.Errorf("results %v", res)
	}

	// An unknown tool written as text is reported, not run.
	f.add(textReply(`{"name": "delete_everything", "arguments": {}}`))
	out = newSyncBuffer()
	if err := s.Handle(context.Background(), "again", out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "no such tool") || len(tools.called()) != 1 {
		t.Errorf("unknown text call: out %q, calls %v", out.String(), tools.called())
	}
}

func TestNotConfiguredPrintsOneLine(t *testing.T) {
	s := NewConversation(Config{}, &fakeTools{}, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "hello?", out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, "OPENAI_API_KEY") || !strings.Contains(got, "OPENAI_BASE_URL") || !strings.Contains(got, "PYAICHAT_MODEL") {
		t.Errorf("not-configured line: %q", got)
	}
	if err := s.Ask(context.Background(), "hello?", newSyncBuffer()); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("Ask unconfigured: %v", err)
	}
	// A local server needs no key.
	f := newFake(t, textReply("hi"))
	cfg := f.config()
	cfg.APIKey = ""
	s = NewConversation(cfg, nil, nil)
	if err := s.Handle(context.Background(), "hello?", newSyncBuffer()); err != nil {
		t.Fatal(err)
	}
	if f.requests()[0].auth != "" {
		t.Errorf("sent an Authorization header without a key: %q", f.requests()[0].auth)
	}
}

func TestSlashCommands(t *testing.T) {
	f := newFake(t, textReply("hi"))
	tools := &fakeTools{fn: func(_ context.Context, name string, _ json.RawMessage) (string, bool) {
		if name == "get_last_exception" {
			return `{"type":"NameError"}`, true
		}
		return `{"type":"int"}`, false
	}}
	s := NewConversation(f.config(), tools, nil)
	run := func(line string) string {
		out := newSyncBuffer()
		if err := s.Handle(context.Background(), line, out); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return out.String()
	}
	// The table the REPL lists under /help.
	var names []string
	for _, c := range s.Commands() {
		names = append(names, strings.TrimSpace(c.Name+" "+c.Args))
	}
	if got := strings.Join(names, ", "); !strings.Contains(got, "/cap NAME [EXPR]") || !strings.Contains(got, "/clear") || strings.Contains(got, "/help") {
		t.Errorf("commands: %s", got)
	}
	// One short line per tool, then how to see one in full.
	if got := run("/tools"); strings.Count(got, "\n") != 8 || !strings.Contains(got, "get_last_exception") || !strings.Contains(got, "/tools NAME") {
		t.Errorf("/tools: %q", got)
	} else {
		for _, line := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
			if len(line) > 72 {
				t.Errorf("/tools: a line of %d columns: %q", len(line), line)
			}
		}
	}
	if got := run("/cap get_type x + 1"); got != "type: int\n" {
		t.Errorf("/cap get_type: %q, want the field as text", got)
	}
	if got := run("/tools get_repr"); !strings.HasPrefix(got, "get_repr\n") || strings.Count(got, "\n") < 2 {
		t.Errorf("/tools get_repr: %q, want its whole description", got)
	}
	run("/cap list_globals")
	if got := run("/cap get_last_exception"); !strings.HasPrefix(got, "error: ") {
		t.Errorf("/cap error: %q", got)
	}
	if got := tools.called(); fmt.Sprint(got) != fmt.Sprint([]string{`get_type {"expr":"x + 1"}`, "list_globals {}", "get_last_exception {}"}) {
		t.Errorf("/cap calls: %q", got)
	}
	if got := run("/cap nope"); !strings.Contains(got, "list_globals, get_type") {
		t.Errorf("/cap unknown: %q", got)
	}
	if got := run("/model other-model"); !strings.Contains(got, "other-model") {
		t.Errorf("/model NAME: %q", got)
	}
	if got := run("/model"); !strings.Contains(got, "other-model") {
		t.Errorf("/model: %q", got)
	}
	run("what?")
	if m := f.requests()[0].Model; m != "other-model" {
		t.Errorf("request used model %q", m)
	}
	if len(s.History()) != 2 {
		t.Fatalf("history %+v", s.History())
	}
	run("/clear")
	if len(s.History()) != 0 {
		t.Errorf("/clear kept %d messages", len(s.History()))
	}
	if got := run("/frobnicate"); !strings.Contains(got, "/help") {
		t.Errorf("unknown command: %q", got)
	}
	if len(f.requests()) != 1 {
		t.Errorf("slash commands reached the server")
	}
}

func TestAskOneShot(t *testing.T) {
	f := newFake(t,
		raw(503, "application/json", `{"error":{"message":"busy"}}`),
		toolReply("", fcall{"c", "get_type", `{"expr":"x"}`}),
		textReply("x is an int."),
	)
	s := NewConversation(f.config(), &fakeTools{}, nil)
	notices := newSyncBuffer()
	s.Notices = notices
	out := newSyncBuffer()
	if err := s.Ask(context.Background(), "x?", out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "x is an int.\n" {
		t.Errorf("stdout %q: the answer only", out.String())
	}
	if n := notices.String(); !strings.Contains(n, "retrying") || !strings.Contains(n, "1 call: get_type(x)") {
		t.Errorf("notices %q", n)
	}
	f.add(raw(401, "application/json", `{"error":{"message":"bad key"}}`))
	if err := s.Ask(context.Background(), "x?", newSyncBuffer()); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("Ask failure must be one line: %v", err)
	}
}

func TestColorSummaryIsDim(t *testing.T) {
	f := newFake(t, toolReply("", fcall{"c", "get_type", `{"expr":"x"}`}), textReply("int"))
	cfg := f.config()
	cfg.View = view.For(view.Options{Color: true})
	s := NewConversation(cfg, &fakeTools{}, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "x?", out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "\x1b[2m[1 call: get_type(x) · tokens: 200 in, 14 out]\x1b[0m\n") {
		t.Errorf("summary: %q", out.String())
	}
}

var _ http.Handler = http.HandlerFunc(nil)

// A reasoning model's thinking is shown dimmed before the answer on a
// terminal, goes with the notices in one-shot mode, and is not shown at
// all without colour (a pipe).
func TestReasoningShown(t *testing.T) {
	reply := sse(sseBody(
		chunk(`{"role":"assistant","reasoning_content":"x is a list;"}`, ""),
		chunk(`{"reasoning_content":" len is 3.\n"}`, ""),
		chunk(`{"content":"x has 3 items."}`, "stop"),
	))
	for _, c := range []struct {
		name     string
		color    bool
		oneShot  bool
		wantOut  string
		wantNote string
	}{
		{"terminal", true, false, "\x1b[2mx is a list;\x1b[0m\x1b[2m len is 3.\x1b[0m\nx has 3 items.\n", ""},
		{"pipe", false, false, "x has 3 items.\n", ""},
		{"one-shot", true, true, "x has 3 items.\n", "\x1b[2mx is a list;\x1b[0m\x1b[2m len is 3.\x1b[0m\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, reply)
			cfg := f.config()
			cfg.View = view.For(view.Options{Color: c.color})
			s := NewConversation(cfg, &fakeTools{}, nil)
			out, notes := newSyncBuffer(), newSyncBuffer()
			var err error
			if c.oneShot {
				s.Notices = notes
				err = s.Ask(context.Background(), "x?", out)
			} else {
				err = s.Handle(context.Background(), "x?", out)
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != c.wantOut || notes.String() != c.wantNote {
				t.Errorf("out %q, notices %q; want %q, %q", out.String(), notes.String(), c.wantOut, c.wantNote)
			}
		})
	}
}

// On a terminal, Ctrl-C's echoed ^C is at the start of a line when a
// question is cancelled during a tool call: the summary starts a new line,
// and the error is one plain line.
func TestCancelEndsTheEchoedLine(t *testing.T) {
	for _, oneShot := range []bool{false, true} {
		f := newFake(t, toolReply("", fcall{"call_x", "eval_expr", `{"expr":"slow()"}`}))
		started := make(chan struct{})
		tools := &fakeTools{fn: func(ctx context.Context, _ string, _ json.RawMessage) (string, bool) {
			close(started)
			<-ctx.Done()
			return "late", true
		}}
		cfg := f.config()
		cfg.View = view.For(view.Options{Color: true})
		s := NewConversation(cfg, tools, nil)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		out, notices := newSyncBuffer(), newSyncBuffer()
		var err error
		if oneShot {
			s.Notices = notices
			within(t, "Ask with a cancelled tool", func() { err = s.Ask(ctx, "run it", out) })
		} else {
			within(t, "Handle with a cancelled tool", func() { err = s.Handle(ctx, "run it", out) })
			notices = out
		}
		if !errors.Is(err, context.Canceled) || err.Error() != "question cancelled" {
			t.Errorf("err = %q", err)
		}
		if want := "\n\x1b[2m[1 call: eval_expr(slow()) · tokens: 100 in, 7 out]\x1b[0m\n"; notices.String() != want {
			t.Errorf("one-shot %v: notices %q, want %q", oneShot, notices.String(), want)
		}
	}
	// Mid-answer, the line the answer was on is ended once, not twice.
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, textThen("Partial answ", false, release))
	cfg := f.config()
	cfg.View = view.For(view.Options{Color: true})
	s := NewConversation(cfg, &fakeTools{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	out := newSyncBuffer()
	go func() { <-out.wrote; cancel() }()
	within(t, "Handle after Ctrl-C", func() { s.Handle(ctx, "tell me", out) })
	if out.String() != "Partial answ\n" {
		t.Errorf("out %q", out.String())
	}
}

// A tool call written as text in <tool_call> tags is held back, not shown
// raw; prose that only looks like it at first is shown whole; and the next
// response's text starts a line of its own.
func TestTextToolCallIsNotShown(t *testing.T) {
	call := "<tool_call>\n{\"name\": \"get_type\", \"arguments\": {\"expr\": \"df\"}}\n</tool_call>"
	f := newFake(t, textReply(call), textReply("df is a DataFrame."))
	tools := &fakeTools{}
	s := NewConversation(f.config(), tools, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "df?", out); err != nil {
		t.Fatal(err)
	}
	if want := "(the model wrote its tool call as text; running get_type)\ndf is a DataFrame.\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("out %q, want it to start %q", out.String(), want)
	}
	if len(tools.called()) != 1 {
		t.Errorf("calls %v", tools.called())
	}

	f.add(textReply("<tool> tags are not Python."))
	out = newSyncBuffer()
	s.Handle(context.Background(), "tags?", out)
	if !strings.HasPrefix(out.String(), "<tool> tags are not Python.\n") {
		t.Errorf("prose held back or cut: %q", out.String())
	}

	unknown := `<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>`
	f.add(textReply(unknown))
	out = newSyncBuffer()
	s.Handle(context.Background(), "rm?", out)
	if want := unknown + "\n(the model wrote a call to rm_rf as text, but there is no such tool; nothing was run)\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("out %q, want %q", out.String(), want)
	}

	// Text before real tool calls, then the answer: two lines on stdout.
	f.add(sse(sseBody(chunk(`{"content":"Let me check."}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"c9","type":"function","function":{"name":"get_type","arguments":"{\"expr\":\"x\"}"}}]}`, "tool_calls"))),
		textReply("x is 3."))
	out = newSyncBuffer()
	s.Notices = newSyncBuffer()
	if err := s.Ask(context.Background(), "x?", out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "Let me check.\nx is 3.\n" {
		t.Errorf("stdout %q", out.String())
	}
}
