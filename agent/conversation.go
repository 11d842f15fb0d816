package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/pyaichat/pyaichat/agent/event"
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

// Conversation is one ai> conversation: the memory across questions, the bounds,
// and the model it asks. It is used from one goroutine at a time.
type Conversation struct {
	cfg   Config
	tools Toolset
	ctxFn func() string
	// shownFn is the automatic context whatever the policy: under "ask",
	// where it is not sent, it is still filtered, so that the values the
	// session showed that the filter redacts are known to it, and their
	// transformed forms caught in the results the user is asked about.
	shownFn func() string
	model   model

	history []llm.Message
	// restored: the history began as an ended session's (Resume).
	restored bool
	// offer is the tools offered the model, worked out on first use
	// (offered).
	offer     toolOffer
	offerOnce sync.Once
	filter    *redact.Filter
	// lastRedacted is what the last question's requests had redacted;
	// asked says there was one.
	lastRedacted redact.Report
	asked        bool
	code         []markdown.CodeBlock // the last answer's, as its view laid it out
	// lastSent and lastDeclined count the last question's results the
	// user was asked about under ShareAsk, by what they chose.
	lastSent, lastDeclined int
	// modelChosen says the local server's models were looked at for a
	// model the user did not name (chooseServerModel).
	modelChosen bool
	// summary is the note that stands for compacted exchanges (compact).
	summary string
	// models is the server's model list; used is the session's tokens
	// and cost, for /usage.
	models serverModels
	used   sessionUsage

	// Notices, when set, is where Ask's view shows retry waits and the
	// summary line (Ask's out is the answer only, for scripts). Handle's
	// view shows both on out.
	Notices io.Writer
}

// NewConversation starts a conversation. tools may be nil (no capabilities);
// ctxFn may be nil (no automatic context).
func NewConversation(cfg Config, tools Toolset, ctxFn func() string) *Conversation {
	s := &Conversation{cfg: cfg.withDefaults(), tools: tools, ctxFn: ctxFn, shownFn: ctxFn}
	s.model = llmModel{llm.New(s.cfg.options())}
	s.filter = s.cfg.Secrets
	if s.filter == nil {
		s.filter = s.cfg.Filter()
	}
	if s.cfg.Share == ShareAsk || s.cfg.Share == ShareOff {
		// Under "ask" only what the user sees and agrees to leaves: the
		// context is never shown to them, so it is not sent.
		s.ctxFn = nil
	}
	return s
}

// toolOffer is what a conversation offers the model: its tools, their
// names, and the tools encoded for every request.
type toolOffer struct {
	list    []llm.Tool
	names   map[string]bool
	encoded llm.Tools
}

// offered is the conversation's toolOffer, worked out on its first use
// (Prepare, at the switch to ai>, or the first question or command):
// the tools' descriptions and schemas, encoded, are garbage in a session
// that asks nothing.
func (s *Conversation) offered() *toolOffer {
	s.offerOnce.Do(func() {
		var list []llm.Tool
		if s.tools != nil {
			list = s.tools.Tools()
		}
		if s.cfg.Share == ShareOff {
			kept := list[:0:0]
			for _, t := range list {
				if offTools[t.Name] {
					kept = append(kept, t)
				}
			}
			list = kept
		}
		o := toolOffer{list: list, names: make(map[string]bool, len(list)), encoded: llm.EncodeTools(list)}
		for _, t := range list {
			o.names[t.Name] = true
		}
		s.offer = o
	})
	return &s.offer
}

// Model is the model questions go to.
func (s *Conversation) Model() string { return s.cfg.Model }

// History returns a copy of the conversation (for tests and transcripts).
func (s *Conversation) History() []llm.Message { return append([]llm.Message(nil), s.history...) }

// Handle answers one line typed at ai>: a question or a slash command.
// What it shows goes to out through a view (Config.View) as it arrives;
// without one, a command writes to out itself and a question shows
// nothing. A nil error means the answer is complete; otherwise the error
// is one line for the REPL to print (it never contains the API key).
// Ctrl-C (ctx cancelled) returns an error that errors.Is(err,
// context.Canceled), and leaves the conversation valid.
func (s *Conversation) Handle(ctx context.Context, line string, out io.Writer) error {
	line = strings.TrimSpace(line)
	switch {
	case line == "":
		return nil
	case strings.HasPrefix(line, "/"):
		return s.command(ctx, line, out)
	case !s.cfg.Configured():
		s.unconfigured(line)
		return s.say(ctx, out, NotConfigured)
	}
	return s.clean(s.ask(ctx, line, out, out))
}

// command runs the slash command a line names, shown as the REPL's table
// runs it; an unknown one says so.
func (s *Conversation) command(ctx context.Context, line string, out io.Writer) error {
	c, arg, ok := findCommand(line)
	if !ok {
		name, _, _ := strings.Cut(line, " ")
		return s.say(ctx, out, fmt.Sprintf("unknown command %s; try /help", name))
	}
	return s.shownCommand(ctx, c, arg, out)
}

// shownCommand runs a slash command; what it prints is shown by a view,
// as a question's events are, so that its Ctrl-C (a command may wait on
// the server: /models) is drawn in order with it.
func (s *Conversation) shownCommand(ctx context.Context, c command, arg string, out io.Writer) error {
	if s.cfg.View == nil {
		return c.run(s, ctx, arg, out)
	}
	v := s.cfg.View(ctx, out, out)
	// What /cap prints is a value: a terminal shows it as it is; the
	// other commands' prose is wrapped at words.
	kind := event.Output
	if c.listing {
		kind = event.Listing
	}
	err := c.run(s, ctx, arg, output{v, kind})
	if ctx.Err() != nil {
		v.Event(event.Event{Kind: event.Cancelled, Text: "command cancelled"})
	}
	v.Event(event.Event{Kind: event.Summary})
	return err
}

// say shows one message of pyaichat's own, through a view where there is
// one (which wraps it at words on a terminal).
func (s *Conversation) say(ctx context.Context, out io.Writer, text string) error {
	if s.cfg.View == nil {
		_, err := fmt.Fprintln(out, text)
		return err
	}
	v := s.cfg.View(ctx, out, out)
	v.Event(event.Event{Kind: event.Output, Text: text + "\n"})
	v.Event(event.Event{Kind: event.Summary})
	return nil
}

// output turns what a command writes into Output (or Listing) events.
type output struct {
	v    event.View
	kind event.Kind
}

func (o output) Write(p []byte) (int, error) {
	o.v.Event(event.Event{Kind: o.kind, Text: string(p)})
	return len(p), nil
}

// Prepare tells the tools that a question is likely soon (the user switched
// to ai>), so that their first calls are fast, and compiles the redaction
// rules the first request is filtered with (a millisecond, otherwise spent
// between Enter and the request); it returns quickly.
func (s *Conversation) Prepare() {
	if p, ok := s.tools.(interface{ Prepare() }); ok {
		p.Prepare()
	}
	s.models.ask(s.model)
	s.offered()
	redact.Warm()
}

// Release tells the tools that no question is near (the user went back to
// py>), so that they can let go what Prepare readied.
func (s *Conversation) Release() {
	if r, ok := s.tools.(interface{ Release() }); ok {
		r.Release()
	}
}

// Ask answers one question for `pyaichat -p`: the answer goes to out, and a
// non-nil error (one line) means the process should exit non-zero.
func (s *Conversation) Ask(ctx context.Context, question string, out io.Writer) error {
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
func (s *Conversation) clean(err error) error {
	if err == nil {
		return nil
	}
	return llm.Reworded(err, termsafe.OneLine(llm.RedactKey(err.Error(), s.cfg.APIKey), maxErrorLine))
}

// turn is the state of one question.
type turn struct {
	s      *Conversation
	view   event.View
	bounds *bounds
	calls  []string // labels of the calls run, as the summary names them
	usage  llm.Usage
	hasUse bool
	// lastPrompt is the prompt tokens of the latest request: how full
	// the context is; spent is the usage's Spend, made as it ends.
	lastPrompt int
	spent      *event.Spend
	// redacted counts what redaction removed from this question's text
	// and tool results; context what it removed from the automatic
	// context of its latest request.
	redacted, context redact.Report
	// answerKey and thinkKey redact the key across delta boundaries.
	answerKey, thinkKey keyFilter
	// sent and declined count the results the user was asked about
	// under ShareAsk.
	sent, declined int
	// held is the start of a response's answer held back while it could
	// be a tool call written as text (see answer); holding is set until
	// it is known not to be one.
	held    strings.Builder
	holding bool
	// split takes <think> blocks out of the answer.
	split thinkSplit
	// answered is the answer text shown, for the Answer event.
	answered strings.Builder
}

// ask answers one question; its view shows it on out, and its notices on
// notices (out itself for Handle).
func (s *Conversation) ask(ctx context.Context, q string, out, notices io.Writer) error {
	t := &turn{s: s, bounds: newBounds(s.cfg), view: s.newView(ctx, out, notices)}
	qctx, cancel := t.bounds.question(ctx)
	defer cancel()
	// The tools get ready while the model reads the question.
	s.Prepare()
	t.answerKey.key, t.thinkKey.key = s.cfg.APIKey, s.cfg.APIKey
	chosen := t.chooseServerModel(qctx)
	start := len(s.history)
	// The question is filtered like everything else a request carries:
	// text piped to -p or pasted at ai> may hold a key.
	q, rep := s.filter.Text(q)
	t.redacted.Add(rep)
	t.event(event.Event{Kind: event.Question, Model: s.cfg.Model, Text: s.keyless(q)})
	s.history = append(s.history, llm.Message{Role: "user", Content: q})
	err := chosen
	if err == nil {
		err = t.withServerModels(qctx, t.run(qctx))
	}
	if qctx.Err() != nil && (err == nil || !isBound(err)) {
		err = t.bounds.ended(qctx)
	}
	s.repair(start, err)
	s.lastRedacted, s.asked = t.redactedTotal(), true
	s.lastSent, s.lastDeclined = t.sent, t.declined
	t.ended(err)
	s.code = markdown.CodeBlocks(t.answered.String())
	return err
}

// newView is the view of one question (Config.View; without one, the
// question is shown nowhere).
func (s *Conversation) newView(ctx context.Context, out, notices io.Writer) event.View {
	if s.cfg.View == nil {
		return noView{}
	}
	return s.cfg.View(ctx, out, notices)
}

// noView shows nothing, and asks as Config.Confirm asks.
type noView struct{}

func (noView) Event(event.Event) {}
func (noView) Confirm(ctx context.Context, o event.Outgoing, ask event.Confirm) (bool, error) {
	return ask(ctx, o)
}

// busy tells the view what the question waits for: the model (tool "")
// or a tool.
func (t *turn) busy(tool, label string) {
	t.event(event.Event{Kind: event.Busy, Tool: tool, Text: llm.RedactKey(label, t.s.cfg.APIKey)})
}

// notify shows one dim line. msg often quotes a server (a retry notice
// carries its error message), so it is made one line like an error.
func (t *turn) notify(msg string) {
	t.event(event.Event{Kind: event.Notice, Text: llm.RedactKey(termsafe.OneLine(msg, maxErrorLine), t.s.cfg.APIKey)})
}

// think emits a reasoning model's thinking as it streams, the key
// filtered out across deltas.
func (t *turn) think(text string) { t.showThinking(t.thinkKey.push(text)) }

func (t *turn) showThinking(text string) {
	if text != "" {
		t.event(event.Event{Kind: event.Thinking, Text: text})
	}
}

// endThinking emits what the key filter held back of the thinking, before
// the answer, a notice or a question to the user.
func (t *turn) endThinking() { t.showThinking(t.thinkKey.flush()) }

// runCalls runs one step's tool calls in order and answers every one of
// them, also those not run (cancelled, or over the step's bound). step
// counts the question's responses from 1: the calls of one response, one
// assistant message, share it.
func (t *turn) runCalls(ctx context.Context, step int, calls []llm.ToolCall) {
	s := t.s
	for i, c := range calls {
		t.event(event.Event{Kind: event.ToolCall, ID: c.ID, Tool: s.keyless(c.Name), Args: s.keyless(strings.TrimSpace(c.Arguments)), Step: step, Extra: c.Extra})
		result, ok := t.bounds.call(ctx, i)
		if ok {
			result = t.runCall(ctx, c)
		}
		t.event(event.Event{Kind: event.ToolResult, ID: c.ID, Tool: s.keyless(c.Name), Result: result, Size: len(result)})
		s.history = append(s.history, llm.Message{Role: "tool", ToolCallID: c.ID, Content: result})
	}
}

func (t *turn) run(ctx context.Context) error {
	for step := 0; ; step++ {
		if err := t.bounds.stop(ctx, t.lastCall()); err != nil {
			return err
		}
		stream, err := t.request(ctx)
		if err != nil {
			return err
		}
		ch, err := t.receive(stream)
		if err != nil {
			return t.broken(ctx, ch, err)
		}
		if stream.Capped() {
			return t.capped(ch)
		}
		calls, asText := t.endResponse(ch)
		if len(calls) == 0 {
			if stream.Unfinished() {
				t.notify(fmt.Sprintf("(the answer may be incomplete: the connection to %s closed before the server marked the answer finished)", t.s.model.Where()))
			}
			return t.final(ch)
		}
		if err := t.mayRun(step, ch); err != nil {
			return err
		}
		t.addCalls(ch.Content, calls, asText)
		t.runCalls(ctx, step+1, calls)
	}
}

// request opens the next response: the conversation so far, compacted
// first if it has grown past its bound.
func (t *turn) request(ctx context.Context) (response, error) {
	s := t.s
	sys, ctxRedacted := s.systemMessage()
	if t.compact(ctx, messageTokens(sys)) {
		sys, ctxRedacted = s.systemMessage() // with the new summary
	}
	msgs := s.requestMessages(sys)
	t.context = ctxRedacted
	t.busy("", "thinking")
	return s.model.Open(ctx, s.cfg.Model, msgs, s.offered().encoded, t.notify)
}

// receive shows a response as it streams and adds up its usage; err is
// what broke it.
func (t *turn) receive(stream response) (llm.Choice, error) {
	t.show(stream)
	res := stream.Result()
	stream.Close()
	if res.Usage != nil {
		t.hasUse = true
		t.usage.PromptTokens += res.Usage.PromptTokens
		t.usage.CompletionTokens += res.Usage.CompletionTokens
		t.lastPrompt = res.Usage.PromptTokens
	}
	return res.Choice0(), stream.Err()
}

// broken ends the question on a response that failed midway: what was
// shown is kept; the calls of a broken response are never run.
func (t *turn) broken(ctx context.Context, ch llm.Choice, err error) error {
	t.endAnswer(true)
	t.s.addAssistant(ch.Content, nil)
	if ctx.Err() != nil {
		return t.bounds.ended(ctx)
	}
	if t.answered.Len() > 0 {
		return fmt.Errorf("answer incomplete: %w", err)
	}
	return err
}

// capped ends the question on a response cut at llm.MaxResponseText; the
// calls of a cut response are never run.
func (t *turn) capped(ch llm.Choice) error {
	t.endAnswer(true)
	t.notify(fmt.Sprintf("(the response passed %d MiB, so pyaichat stopped reading it there)", llm.MaxResponseText>>20))
	return t.final(ch)
}

// endResponse ends a whole response's text and returns its tool calls,
// those it sent or one it wrote as text (asText).
func (t *turn) endResponse(ch llm.Choice) (calls []llm.ToolCall, asText bool) {
	calls, unknown := ch.ToolCalls, ""
	if len(calls) == 0 {
		calls, unknown = t.textToolCalls(ch.Content)
		asText = len(calls) > 0
	}
	// Held-back markup is shown only if it turned out not to be a call.
	t.endAnswer(len(calls) == 0)
	if unknown != "" {
		t.notify("(the model wrote a call to " + unknown + " as text, but there is no such tool; nothing was run)")
	}
	return calls, asText
}

// mayRun says why the calls of a response are not run, if they are not:
// the output limit cut them short, or the question has taken its steps.
func (t *turn) mayRun(step int, ch llm.Choice) error {
	if ch.FinishReason == "length" {
		t.s.addAssistant(ch.Content, nil)
		return errors.New("the model's output limit cut its tool call short; nothing was run (ask again, or ask for less)")
	}
	if err := t.bounds.step(step); err != nil {
		t.s.addAssistant(ch.Content, nil)
		return err
	}
	return nil
}

// addCalls keeps the assistant message that makes the calls; a call
// written as text is sent back as a real one, without the text.
func (t *turn) addCalls(content string, calls []llm.ToolCall, asText bool) {
	content = stripToolMarkup(content)
	if asText {
		content = ""
		t.notify(fmt.Sprintf("(the model wrote its tool call as text; running %s)", calls[0].Name))
	}
	s := t.s
	s.history = append(s.history, llm.Message{Role: "assistant", Content: s.scrub(content), ToolCalls: s.filteredCalls(calls)})
}

// lastCall is the label of the last call run, or "".
func (t *turn) lastCall() string {
	if len(t.calls) == 0 {
		return ""
	}
	return t.calls[len(t.calls)-1]
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

func (s *Conversation) addAssistant(content string, calls []llm.ToolCall) {
	if content == "" && len(calls) == 0 {
		return
	}
	s.history = append(s.history, llm.Message{Role: "assistant", Content: s.scrub(content), ToolCalls: s.filteredCalls(calls)})
}

// scrub filters text a model or server sent before it is kept in the
// conversation, which later requests carry, and drops its <think> blocks,
// which chat templates expect to be left out of the history.
func (s *Conversation) scrub(text string) string {
	out, _ := s.filter.Text(llm.RedactKey(withoutThinking(text), s.cfg.APIKey))
	return out
}

// filteredCalls is calls as the history keeps them: their arguments pass
// the filter, since later requests send them back.
func (s *Conversation) filteredCalls(calls []llm.ToolCall) []llm.ToolCall {
	if len(calls) == 0 {
		return calls
	}
	out := make([]llm.ToolCall, len(calls))
	for i, c := range calls {
		c.Arguments, _ = s.filter.Text(c.Arguments)
		out[i] = c
	}
	return out
}

// repair leaves the conversation valid after any ending: every tool-call id
// answered, and never a question left without a reply (some local chat
// templates reject two user messages in a row). A question that got nothing
// at all is forgotten, so asking again starts clean.
func (s *Conversation) repair(start int, err error) {
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
		var missing []llm.Message
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				missing = append(missing, llm.Message{Role: "tool", ToolCallID: c.ID, Content: spec.ErrorResult(spec.NotRun, "not run")})
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
		h = append(h, llm.Message{Role: "assistant", Content: s.scrub("(no answer: " + reason + ")")})
	}
	s.history = h
}

// runCall checks and runs one tool call and returns the capped result.
func (t *turn) runCall(ctx context.Context, c llm.ToolCall) string {
	s := t.s
	args := strings.TrimSpace(c.Arguments)
	if args == "" {
		args = "{}"
	}
	t.calls = append(t.calls, callLabel(c.Name, args))
	if !s.offered().names[c.Name] {
		return spec.ErrorResult(spec.UnknownTool, fmt.Sprintf("there is no tool named %q; the tools are: %s", c.Name, s.toolNames()))
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil {
		return spec.ErrorResult(spec.InvalidArguments, fmt.Sprintf("arguments must be a JSON object, got %s; the tools are: %s", termsafe.Shorten(args, 200), s.toolNames()))
	}
	if t.bounds.repeated(c.Name + "\x00" + canonical(obj)) {
		return spec.ErrorResult(spec.Repeated, "you already made this exact call for this question; its result is above. Do not repeat it: answer, or make a different call.")
	}
	t.busy(c.Name, t.lastCall())
	res, isErr := t.callTool(ctx, c.Name, json.RawMessage(args))
	if isErr && !strings.HasPrefix(strings.TrimSpace(res), "{") {
		res = spec.ErrorResult(spec.Internal, res)
	}
	res, rep := s.outgoing(res)
	t.redacted.Add(rep)
	res = t.bounds.result(res)
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
// spelled \n and \t (the view makes the rest of it visible).
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

func (s *Conversation) toolNames() string {
	list := s.offered().list
	names := make([]string, len(list))
	for i, t := range list {
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

// totals is what the question did, for its summary line: the calls run
// (the key redacted from their labels), what the user chose to send,
// what was redacted, and the tokens used when the server said.
func (t *turn) totals() *event.Totals {
	tot := &event.Totals{Sent: t.sent, Declined: t.declined, Redacted: t.redactedTotal().Count}
	for _, c := range t.calls {
		tot.Calls = append(tot.Calls, llm.RedactKey(c, t.s.cfg.APIKey))
	}
	if t.hasUse {
		u := t.usage
		tot.Usage, tot.Spend = &u, t.spent
	}
	return tot
}
