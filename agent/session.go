package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/markdown"
	"github.com/pyaichat/pyaichat/agent/redact"
	"github.com/pyaichat/pyaichat/agent/termsafe"
	"github.com/pyaichat/pyaichat/capabilities/spec"
)

// NotConfigured is the one line shown when a question is asked with no key
// and OpenAI's default base URL.
const NotConfigured = "the assistant (ai>) is not configured: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server such as Ollama or llama.cpp), and PYAICHAT_MODEL to choose the model (default " + DefaultModel + ")"

const systemPrompt = `You are the assistant inside pyaichat, a Python REPL. You see the user's live Python session only through the tools. They are read-only: they inspect values and never change the session. Check facts with them instead of guessing, using the smallest call that answers (get_type, get_repr, or eval_expr on a narrow expression). Expressions run in the session's namespace; never import modules. Answer concisely in plain text, grounded in the tool results, and say when the session cannot tell.`

// BoundError is a question stopped by one of the loop's bounds (step cap,
// deadline, repeated calls). Its message says which.
type BoundError struct{ Msg string }

func (e *BoundError) Error() string { return e.Msg }

// errDeadline is the cause of a question's context when its wall-clock
// deadline passes, to tell it apart from Ctrl-C.
var errDeadline = errors.New("question deadline")

// Session is one ai> conversation: the memory across questions, the bounds,
// and the model it asks. It is used from one goroutine at a time.
type Session struct {
	cfg   Config
	tools Toolset
	ctxFn func() string
	model model

	history []Message
	// restored: the history began as an ended session's (Resume).
	restored bool
	list     []Tool
	filter   *redact.Filter
	// lastRedacted is what the last question's requests had redacted;
	// asked says there was one.
	lastRedacted redact.Report
	asked        bool
	offered      llm.Tools // list, encoded for every request
	names        map[string]bool
	code         []markdown.CodeBlock // the last answer's, on a terminal
	// lastSent and lastDeclined count the last question's results the
	// user was asked about under ShareAsk, by what they chose.
	lastSent, lastDeclined int

	// Notices, when set, receives retry waits and the summary line in Ask
	// (whose out is the answer only, for scripts). Handle writes both to out.
	Notices io.Writer
}

// NewSession starts a conversation. tools may be nil (no capabilities);
// ctxFn may be nil (no automatic context).
func NewSession(cfg Config, tools Toolset, ctxFn func() string) *Session {
	s := &Session{cfg: cfg.withDefaults(), tools: tools, ctxFn: ctxFn}
	s.model = llmModel{llm.New(s.cfg.options())}
	s.filter = s.cfg.Filter()
	if tools != nil {
		s.list = tools.Tools()
	}
	if s.cfg.Share == ShareAsk {
		// Only what the user sees and agrees to leaves: the context is
		// never shown to them, so it is not sent.
		s.ctxFn = nil
	}
	if s.cfg.Share == ShareOff {
		s.ctxFn = nil
		kept := s.list[:0:0]
		for _, t := range s.list {
			if offTools[t.Name] {
				kept = append(kept, t)
			}
		}
		s.list = kept
	}
	s.offered = llm.EncodeTools(s.list)
	s.names = map[string]bool{}
	for _, t := range s.list {
		s.names[t.Name] = true
	}
	return s
}

// Model is the model questions go to.
func (s *Session) Model() string { return s.cfg.Model }

// History returns a copy of the conversation (for tests and transcripts).
func (s *Session) History() []Message { return append([]Message(nil), s.history...) }

// Handle answers one line typed at ai>: a question or a slash command.
// The answer streams to out as it arrives. A nil error means the answer is
// complete; otherwise the error is one line for the REPL to print (it never
// contains the API key). Ctrl-C (ctx cancelled) returns an error that
// errors.Is(err, context.Canceled), and leaves the conversation valid.
func (s *Session) Handle(ctx context.Context, line string, out io.Writer) error {
	line = strings.TrimSpace(line)
	switch {
	case line == "":
		return nil
	case strings.HasPrefix(line, "/"):
		return s.command(ctx, line, out)
	case !s.cfg.Configured():
		s.unconfigured(line)
		_, err := fmt.Fprintln(out, NotConfigured)
		return err
	}
	return s.clean(s.ask(ctx, line, out, out))
}

// Ask answers one question for `pyaichat -p`: the answer goes to out, and a
// Prepare tells the tools that a question is likely soon (the user switched
// to ai>), so that their first calls are fast; it returns quickly.
func (s *Session) Prepare() {
	if p, ok := s.tools.(interface{ Prepare() }); ok {
		p.Prepare()
	}
}

// non-nil error (one line) means the process should exit non-zero.
func (s *Session) Ask(ctx context.Context, question string, out io.Writer) error {
	if !s.cfg.Configured() {
		s.unconfigured(question)
		return errors.New(NotConfigured)
	}
	notices := s.Notices
	if notices == nil {
		notices = io.Discard
	}
	return s.clean(s.ask(ctx, strings.TrimSpace(question), out, notices))
}

// maxErrorLine bounds an error line; the server's part of it is already
// cut to llm.MaxServerText, so this only stops a pathological URL or label.
const maxErrorLine = 600

// clean is the last step of every error that leaves the package, because
// the REPL prints it as it is: the key redacted whatever a server echoed,
// and the message made one harmless line (see visible).
func (s *Session) clean(err error) error {
	if err == nil {
		return nil
	}
	msg := oneLine(redactKey(err.Error(), s.cfg.APIKey), maxErrorLine)
	if msg == err.Error() {
		return err
	}
	return &redacted{err, msg}
}

type redacted struct {
	err error
	msg string
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

// turn is the state of one question.
type turn struct {
	s       *Session
	out     *lineWriter
	notices *lineWriter // t.out itself unless notices go elsewhere (Ask)
	calls   []string
	seen    map[string]int
	repeats int
	usage   Usage
	hasUse  bool
	// thinking is set while reasoning text is being shown.
	thinking bool
	// redacted counts what redaction removed from this question's tool
	// results; context what it removed from the automatic context of its
	// latest request.
	redacted, context redact.Report
	// answerKey and thinkKey redact the key across delta boundaries.
	answerKey, thinkKey keyFilter
	// sent and declined count the results the user was asked about
	// under ShareAsk.
	sent, declined int
	// askCancelled says Ctrl-C came while the user was being asked.
	askCancelled bool
	// held is the start of a response's answer held back while it could
	// be a tool call written as text (see answer); holding is set until
	// it is known not to be one.
	held    strings.Builder
	holding bool
	// status shows work on a terminal (render.go); split takes
	// <think> blocks out of the answer.
	status *statusLine
	split  thinkSplit
	// answered is the answer text shown, for the Answer event.
	answered strings.Builder
}

func (s *Session) ask(ctx context.Context, q string, out, notices io.Writer) error {
	qctx, cancel := context.WithTimeoutCause(ctx, s.cfg.QuestionTimeout, errDeadline)
	defer cancel()
	// The tools get ready while the model reads the question.
	s.Prepare()
	t := &turn{s: s, seen: map[string]int{}}
	t.answerKey.key, t.thinkKey.key = s.cfg.APIKey, s.cfg.APIKey
	if notices == out {
		notices = nil
	}
	t.out, t.notices, t.status = s.writers(out, notices)
	start := len(s.history)
	s.emit(Event{Kind: EventQuestion, Model: s.cfg.Model, Text: s.keyless(q)})
	s.history = append(s.history, Message{Role: "user", Content: q})
	err := t.run(qctx)
	t.status.clear()
	if qctx.Err() != nil && (err == nil || !isBound(err)) {
		err = t.ctxErr(qctx)
	}
	s.repair(start, err)
	t.ended(err)
	s.lastRedacted, s.asked = t.redactedTotal(), true
	s.lastSent, s.lastDeclined = t.sent, t.declined
	atLineStart := !t.out.midLine && !t.notices.midLine
	t.out.endLine()
	if errors.Is(err, context.Canceled) && (s.cfg.Color || t.askCancelled) && atLineStart {
		// On a terminal, Ctrl-C echoed "^C" at the start of a line (or
		// after a question to the user, which is asked on one): end
		// that line, so the summary and the REPL's next words do not
		// follow it on the same line.
		t.notices.newLine()
	}
	t.summary()
	s.code = t.out.codeBlocks()
	return err
}

func (s *Session) writer(w io.Writer) *lineWriter {
	return &lineWriter{w: w, key: s.cfg.APIKey, color: s.cfg.Color}
}

func isBound(err error) bool {
	var b *BoundError
	return errors.As(err, &b)
}

func (t *turn) ctxErr(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errDeadline) {
		return &BoundError{fmt.Sprintf("stopped: the question took longer than %s", t.s.cfg.QuestionTimeout)}
	}
	return errCancelled{}
}

// errCancelled is a question stopped by Ctrl-C: its message is one plain
// line for the REPL to print, and errors.Is finds context.Canceled in it.
type errCancelled struct{}

func (errCancelled) Error() string        { return "question cancelled" }
func (errCancelled) Is(target error) bool { return target == context.Canceled }

// notify shows one dim line. msg often quotes a server (a retry notice
// carries its error message), so it is made one line like an error.
func (t *turn) notify(msg string) {
	t.event(Event{Kind: EventNotice, Text: redactKey(oneLine(msg, maxErrorLine), t.s.cfg.APIKey)})
}

// think shows a reasoning model's thinking as it streams, dimmed, on a
// terminal only: elsewhere (a pipe, -p) it is not the answer and only
// noise. Each piece is dimmed on its own (see dimLines).
func (t *turn) think(text string) { t.showThinking(t.thinkKey.push(text)) }

func (t *turn) showThinking(text string) {
	if text != "" {
		t.event(Event{Kind: EventThinking, Text: text})
	}
}

// endThinking ends the thinking's last line before the answer or a notice.
func (t *turn) endThinking() {
	t.showThinking(t.thinkKey.flush())
	if t.thinking {
		t.notices.endLine()
		t.thinking = false
	}
}

// runCalls runs one step's tool calls in order and answers every one of
// them, also those not run (cancelled, or over the step's bound). step
// counts the question's responses from 1: the calls of one response, one
// assistant message, share it.
func (t *turn) runCalls(ctx context.Context, step int, calls []ToolCall) {
	s := t.s
	for i, c := range calls {
		s.emit(Event{Kind: EventToolCall, ID: c.ID, Tool: s.keyless(c.Name), Args: s.keyless(strings.TrimSpace(c.Arguments)), Step: step, Extra: c.Extra})
		var result string
		switch {
		case ctx.Err() != nil:
			result = spec.ErrorResult(spec.Canceled, "not run: the user cancelled the question")
		case i >= s.cfg.MaxCallsPerStep:
			result = spec.ErrorResult(spec.TooManyCalls, fmt.Sprintf("not run: at most %d calls per step", s.cfg.MaxCallsPerStep))
		default:
			result = t.runCall(ctx, c)
		}
		s.emit(Event{Kind: EventToolResult, ID: c.ID, Tool: s.keyless(c.Name), Result: result, Size: len(result)})
		s.history = append(s.history, Message{Role: "tool", ToolCallID: c.ID, Content: result})
	}
}

func (t *turn) run(ctx context.Context) error {
	s := t.s
	for step := 0; ; step++ {
		if ctx.Err() != nil {
			return t.ctxErr(ctx)
		}
		msgs, ctxRedacted := s.requestMessages()
		t.context = ctxRedacted
		t.busy(ctx, "thinking")
		stream, err := s.model.Open(ctx, s.cfg.Model, msgs, s.offered, t.notify)
		if err != nil {
			return err
		}
		t.show(stream)
		res := stream.Result()
		stream.Close()
		if res.Usage != nil {
			t.hasUse = true
			t.usage.PromptTokens += res.Usage.PromptTokens
			t.usage.CompletionTokens += res.Usage.CompletionTokens
		}
		ch := res.Choice0()
		if err := stream.Err(); err != nil {
			// Keep what was shown; never run the calls of a broken response.
			t.endAnswer(true)
			s.addAssistant(ch.Content, nil)
			if ctx.Err() != nil {
				return t.ctxErr(ctx)
			}
			if t.out.wrote {
				return fmt.Errorf("answer incomplete: %w", err)
			}
			return err
		}
		if stream.Capped() {
			t.endAnswer(true)
			t.notify(fmt.Sprintf("(the response passed %d MiB, so pyaichat stopped reading it there)", llm.MaxResponseText>>20))
			return t.final(ch) // the calls of a cut response are never run
		}
		calls, asText, unknown := ch.ToolCalls, false, ""
		if len(calls) == 0 {
			calls, unknown = t.textToolCalls(ch.Content)
			asText = len(calls) > 0
		}
		// Held-back markup is shown only if it turned out not to be a call.
		t.endAnswer(len(calls) == 0)
		if unknown != "" {
			t.notify("(the model wrote a call to " + unknown + " as text, but there is no such tool; nothing was run)")
		}
		if len(calls) == 0 {
			if stream.Unfinished() {
				t.notify(fmt.Sprintf("(the answer may be incomplete: the connection to %s closed before the server marked the answer finished)", s.model.Where()))
			}
			return t.final(ch)
		}
		if ch.FinishReason == "length" {
			s.addAssistant(ch.Content, nil)
			return errors.New("the model's output limit cut its tool call short; nothing was run (ask again, or ask for less)")
		}
		if step >= s.cfg.MaxSteps {
			s.addAssistant(ch.Content, nil)
			return &BoundError{fmt.Sprintf("stopped: reached the limit of %d tool steps for one question without an answer; ask a narrower question", s.cfg.MaxSteps)}
		}
		content := stripToolMarkup(ch.Content)
		if asText {
			content = ""
			t.notify(fmt.Sprintf("(the model wrote its tool call as text; running %s)", calls[0].Name))
		}
		s.history = append(s.history, Message{Role: "assistant", Content: s.scrub(content), ToolCalls: calls})
		t.runCalls(ctx, step+1, calls)
		if ctx.Err() != nil {
			return t.ctxErr(ctx)
		}
		if t.repeats >= 2 {
			return &BoundError{fmt.Sprintf("stopped: the model kept repeating the same call (%s)", t.calls[len(t.calls)-1])}
		}
		// The next response's text starts on a line of its own, not after
		// whatever this one said before its calls.
		t.out.endLine()
	}
}

// show streams one response's visible text to the user as it arrives.
func (t *turn) show(stream response) {
	t.held.Reset()
	t.holding = true
	for stream.Next() {
		kind, choice, text := stream.Current()
		switch {
		case choice != 0:
		case kind == llm.DeltaReasoning:
			t.think(text)
		default:
			t.answerText(text)
		}
	}
	t.split.flush(t.answerPiece)
	t.endThinking()
}

// maxHeldCall bounds the text held back as a possible text tool call; a
// small model's call is a few hundred bytes.
const maxHeldCall = 16 << 10

// answer shows answer text, except while the answer so far could still be
// a tool call written as text (<tool_call>{...}</tool_call>): that is held
// back until the response ends, because shown raw it is noise, and the real
// answer, after the call runs, would follow it on the same line.
func (t *turn) answer(text string) {
	if t.holding {
		t.held.WriteString(text)
		if couldBeTextCall(t.held.String()) && t.held.Len() <= maxHeldCall {
			return
		}
		t.holding = false
		text = t.held.String()
		t.held.Reset()
	}
	t.shown(t.answerKey.push(text))
}

// endAnswer ends a response's text: what was held back as a possible text
// tool call is shown or dropped, and the key filter gives up its tail.
func (t *turn) endAnswer(showHeld bool) {
	if showHeld {
		t.shown(t.answerKey.push(t.held.String()))
	}
	t.held.Reset()
	t.holding = false
	t.shown(t.answerKey.flush())
}

// final records an answer without tool calls and reports how it ended.
func (t *turn) final(ch llm.Choice) error {
	content := ch.Content
	if content == "" {
		content = ch.Refusal
	}
	t.s.addAssistant(content, nil)
	switch ch.FinishReason {
	case "length":
		return errors.New("answer incomplete: the model reached its output limit")
	case "content_filter":
		return fmt.Errorf("answer blocked by the content filter of %s", t.s.model.Where())
	}
	if strings.TrimSpace(content) == "" {
		t.notify("(the model returned an empty answer)")
	}
	return nil
}

func (s *Session) addAssistant(content string, calls []ToolCall) {
	if content == "" && len(calls) == 0 {
		return
	}
	s.history = append(s.history, Message{Role: "assistant", Content: s.scrub(content), ToolCalls: calls})
}

// scrub redacts the API key from text a model or server sent, before it
// is kept in the conversation, and drops its <think> blocks, which chat
// templates expect to be left out of the history.
func (s *Session) scrub(text string) string { return redactKey(withoutThinking(text), s.cfg.APIKey) }

// repair leaves the conversation valid after any ending: every tool-call id
// answered, and never a question left without a reply (some local chat
// templates reject two user messages in a row). A question that got nothing
// at all is forgotten, so asking again starts clean.
func (s *Session) repair(start int, err error) {
	h := s.history
	for i := start; i < len(h); i++ {
		m := h[i]
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		j := i + 1
		for ; j < len(h) && h[j].Role == "tool"; j++ {
			answered[h[j].ToolCallID] = true
		}
		var missing []Message
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				missing = append(missing, Message{Role: "tool", ToolCallID: c.ID, Content: spec.ErrorResult(spec.NotRun, "not run")})
			}
		}
		if len(missing) > 0 {
			h = append(h[:j], append(missing, h[j:]...)...)
		}
	}
	if len(h) == start+1 && h[start].Role == "user" {
		h = h[:start]
	} else if n := len(h); n > start && h[n-1].Role != "assistant" {
		reason := "interrupted"
		if err = s.clean(err); err != nil {
			reason = err.Error()
		}
		h = append(h, Message{Role: "assistant", Content: "(no answer: " + reason + ")"})
	}
	s.history = h
}

// runCall checks and runs one tool call and returns the capped result.
func (t *turn) runCall(ctx context.Context, c ToolCall) string {
	s := t.s
	args := strings.TrimSpace(c.Arguments)
	if args == "" {
		args = "{}"
	}
	t.calls = append(t.calls, callLabel(c.Name, args))
	if !s.names[c.Name] {
		return spec.ErrorResult(spec.UnknownTool, fmt.Sprintf("there is no tool named %q; the tools are: %s", c.Name, s.toolNames()))
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil {
		return spec.ErrorResult(spec.InvalidArguments, fmt.Sprintf("arguments must be a JSON object, got %s; the tools are: %s", termsafe.Shorten(args, 200), s.toolNames()))
	}
	key := c.Name + "\x00" + canonical(obj)
	t.seen[key]++
	if t.seen[key] > 1 {
		t.repeats++
		return spec.ErrorResult(spec.Repeated, "you already made this exact call for this question; its result is above. Do not repeat it: answer, or make a different call.")
	}
	t.busy(ctx, t.calls[len(t.calls)-1])
	res, isErr := t.callTool(ctx, c.Name, json.RawMessage(args))
	if isErr && !strings.HasPrefix(strings.TrimSpace(res), "{") {
		res = spec.ErrorResult(spec.Internal, res)
	}
	res, rep := s.outgoing(res)
	t.redacted.Add(rep)
	res = capResult(res, s.cfg.ToolResultBytes)
	if s.cfg.Share == ShareAsk {
		res = t.confirm(ctx, c.Name, args, res)
	}
	return res
}

// callTool runs the tool on its own goroutine so that Ctrl-C returns within
// the 100 ms the issue asks even if a tool ignores its context; a panic in a
// tool becomes an error result, not a crash of the REPL.
func (t *turn) callTool(ctx context.Context, name string, args json.RawMessage) (string, bool) {
	type outcome struct {
		res   string
		isErr bool
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{spec.ErrorResult(spec.Internal, fmt.Sprintf("the tool failed: %v", p)), true}
			}
		}()
		r, e := t.s.tools.Call(ctx, name, args)
		done <- outcome{r, e}
	}()
	select {
	case o := <-done:
		return o.res, o.isErr
	case <-ctx.Done():
		return spec.ErrorResult(spec.Canceled, "the question was cancelled while this call ran"), true
	}
}

// capResult bounds what one tool sends to the model.
func capResult(res string, limit int) string {
	if len(res) <= limit {
		return res
	}
	return termsafe.Prefix(res, limit) + fmt.Sprintf("\n[truncated: the result was %d bytes; ask for a narrower expression]", len(res))
}

// canonical renders arguments with sorted keys so that {"a":1,"b":2} and
// {"b":2, "a":1} count as the same call.
func canonical(obj map[string]json.RawMessage) string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		var v any
		json.Unmarshal(obj[k], &v)
		vb, _ := json.Marshal(v)
		b.WriteString(k)
		b.WriteByte('=')
		b.Write(vb)
		b.WriteByte(';')
	}
	return b.String()
}

// callLabel is how a call appears in the summary line: get_repr(df.shape).
// The line stays one line: newlines and tabs in the model's arguments are
// spelled \n and \t (put makes the rest of it visible).
func callLabel(name, args string) string {
	return labelSpacing.Replace(rawLabel(name, args))
}

var labelSpacing = strings.NewReplacer("\n", `\n`, "\t", `\t`)

func rawLabel(name, args string) string {
	var a map[string]any
	if json.Unmarshal([]byte(args), &a) == nil {
		if len(a) == 0 {
			return name + "()"
		}
		if e, ok := a["expr"].(string); ok && len(a) == 1 {
			return name + "(" + termsafe.Shorten(e, 60) + ")"
		}
	}
	return name + "(" + termsafe.Shorten(args, 60) + ")"
}

func (s *Session) toolNames() string {
	names := make([]string, len(s.list))
	for i, t := range s.list {
		names[i] = t.Name
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// redactedTotal is what redaction removed from this question: its tool
// results and its latest automatic context.
func (t *turn) redactedTotal() redact.Report {
	var r redact.Report // a new map of kinds: Add would change t.redacted's
	r.Add(t.redacted)
	r.Add(t.context)
	return r
}

func (t *turn) summary() {
	if len(t.calls) == 0 && !t.hasUse {
		return
	}
	var parts []string
	if n := len(t.calls); n > 0 {
		word := "calls"
		if n == 1 {
			word = "call"
		}
		parts = append(parts, fmt.Sprintf("%d %s: %s", n, word, strings.Join(t.calls, ", ")))
	}
	if t.sent+t.declined > 0 {
		parts = append(parts, fmt.Sprintf("%d sent, %d declined", t.sent, t.declined))
	}
	if n := t.redactedTotal().Count; n > 0 {
		parts = append(parts, fmt.Sprintf("%d redacted", n))
	}
	if t.hasUse {
		parts = append(parts, fmt.Sprintf("tokens: %d in, %d out", t.usage.PromptTokens, t.usage.CompletionTokens))
	}
	t.notices.put("["+strings.Join(parts, " · ")+"]\n", true)
}
