package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// This file decodes what OpenAI-compatible servers send into our own types.
// The structs are deliberately loose (testdata/openai-wire holds captured
// responses that show each case): go-openai's response types reject
// content arrays (Mistral), object arguments (llama.cpp), string indexes,
// and drop `reasoning`, top-level chunk errors and Gemini's thought
// signatures.

// Usage is the token usage a server reported, if any.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	Raw              json.RawMessage // the object exactly as sent (extra fields kept)
}

// ToolCall is one complete tool call requested by the model.
type ToolCall struct {
	ID        string // never empty: synthesized when the server sent none
	Type      string // always "function"
	Name      string
	Arguments string // JSON text as the model produced it (objects re-marshalled)
	// WireIndex is tool_calls[].index as sent (nil when absent).
	WireIndex *int
	// Extra is the call's extra_content (Gemini's thought signature), sent
	// back verbatim on the next request because Gemini 3 rejects a
	// conversation without it.
	Extra json.RawMessage
}

// Choice is one accumulated choice of a completion.
type Choice struct {
	Index        int
	Content      string
	Reasoning    string
	Refusal      string
	ToolCalls    []ToolCall
	FinishReason string // first non-null value seen; "" if none
}

// Completion is everything one response (stream or not) carried.
type Completion struct {
	ID, Model string
	Choices   []Choice // sorted by index
	Usage     *Usage
	// Err is an error the server reported inside an HTTP-200 response (an
	// error chunk, "event: error", llama.cpp's "error:" line, an error body).
	Err *APIError
}

// Choice0 returns choice 0 (the only one we request), or an empty choice.
func (c *Completion) Choice0() Choice {
	for _, ch := range c.Choices {
		if ch.Index == 0 {
			return ch
		}
	}
	return Choice{}
}

// flexInt accepts 1, 1.0 and "1": real servers send all three.
type flexInt struct {
	V int
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("index %s is not a number", b)
	}
	f.V = int(v)
	return nil
}

type wireChunk struct {
	ID      *string         `json:"id"`
	Model   *string         `json:"model"`
	Object  string          `json:"object"`
	Message string          `json:"message"` // vLLM's unwrapped {"object":"error","message":...}
	Choices []wireChoice    `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type wireChoice struct {
	Index        flexInt  `json:"index"`
	Delta        *wireMsg `json:"delta"`   // stream
	Message      *wireMsg `json:"message"` // non-stream
	FinishReason *string  `json:"finish_reason"`
}

type wireMsg struct {
	Content          json.RawMessage `json:"content"` // string, null or an array of typed parts
	Reasoning        *string         `json:"reasoning"`
	ReasoningContent *string         `json:"reasoning_content"`
	Refusal          *string         `json:"refusal"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
}

type wireToolCall struct {
	Index    *flexInt `json:"index"`
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content"`
}

// MaxResponseText bounds the text one response may add up to (answer,
// thinking, refusal and tool-call arguments together). 1 MiB is some
// 250,000 tokens, more than any model writes in one response; past it the
// server is broken or hostile, and without a bound a 600 MB answer would
// need gigabytes of memory. A response that reaches it stops being read.
const MaxResponseText = 1 << 20

// accumulator folds chunks into a Completion (never indexing choices[0]
// blindly, reading until [DONE] for the usage chunk), and emits the
// visible deltas as it goes.
type accumulator struct {
	c       Completion
	choices map[int]*accChoice
	order   []int
	newID   func() string
	// size is the text kept so far; capped is set once it reached
	// MaxResponseText and the rest was dropped.
	size   int
	capped bool
}

// accChoice builds its text in builders: appending to a string copies it
// all, which made a long answer of small deltas quadratic.
type accChoice struct {
	Choice
	content, reasoning, refusal strings.Builder
	calls                       []*accCall
	byIndex                     map[int]*accCall
	hasFin                      bool
}

// take returns as much of text as the response's budget still allows, cut
// on a rune boundary, and counts it.
func (a *accumulator) take(text string) string {
	if a.size+len(text) > MaxResponseText {
		text, a.capped = termsafe.Prefix(text, MaxResponseText-a.size), true
	}
	a.size += len(text)
	return text
}

type accCall struct {
	ToolCall
	args strings.Builder
}

func newAccumulator(newID func() string) *accumulator {
	return &accumulator{choices: map[int]*accChoice{}, newID: newID}
}

func (a *accumulator) choice(i int) *accChoice {
	ch := a.choices[i]
	if ch == nil {
		ch = &accChoice{Choice: Choice{Index: i}, byIndex: map[int]*accCall{}}
		a.choices[i] = ch
		a.order = append(a.order, i)
	}
	return ch
}

// delta is one piece of visible text from a response.
type delta struct {
	Choice int
	Kind   DeltaKind
	Text   string
}

// DeltaKind says what a streamed piece of text is.
type DeltaKind int

const (
	DeltaContent DeltaKind = iota
	DeltaReasoning
	DeltaRefusal
)

// addChunk folds one decoded stream event into the accumulator and appends
// the visible text it carried to out.
func (a *accumulator) addChunk(eventName string, data []byte, out []delta) ([]delta, error) {
	var ck wireChunk
	if err := json.Unmarshal(data, &ck); err != nil {
		if eventName == "error" {
			// An error event whose payload is not JSON: keep the text.
			a.c.Err = &APIError{Message: strings.TrimSpace(string(data))}
			return out, nil
		}
		return out, errors.New("not a JSON object") // the caller says who sent it
	}
	a.meta(&ck)
	for _, wc := range ck.Choices {
		ch := a.choice(wc.Index.V)
		if wc.Delta != nil {
			out = a.addMsg(ch, wc.Delta, out, true)
		}
		if wc.Message != nil {
			out = a.addMsg(ch, wc.Message, out, false)
		}
		if wc.FinishReason != nil && *wc.FinishReason != "" && !ch.hasFin {
			ch.FinishReason, ch.hasFin = *wc.FinishReason, true
		}
	}
	if u := parseUsage(ck.Usage); u != nil {
		a.c.Usage = u
	}
	if e := chunkError(eventName, &ck, data); e != nil {
		a.c.Err = e
	}
	return out, nil
}

// finished reports whether choice i had a finish_reason.
func (a *accumulator) finished(i int) bool {
	ch := a.choices[i]
	return ch != nil && ch.hasFin
}

func (a *accumulator) meta(ck *wireChunk) {
	if a.c.ID == "" && ck.ID != nil {
		a.c.ID = *ck.ID
	}
	if a.c.Model == "" && ck.Model != nil {
		a.c.Model = *ck.Model
	}
}

// chunkError finds an error in an HTTP-200 payload: event: error, a
// top-level "error" key (OpenAI, Anthropic, OpenRouter's error-in-a-chunk),
// or vLLM's {"object":"error","message":...}.
func chunkError(eventName string, ck *wireChunk, data []byte) *APIError {
	if len(ck.Error) > 0 && string(ck.Error) != "null" {
		e := parseErrorValue(ck.Error)
		return &e
	}
	if ck.Object == "error" {
		e := parseErrorValue(data)
		return &e
	}
	if eventName == "error" {
		e := parseErrorValue(data)
		return &e
	}
	return nil
}

func (a *accumulator) addMsg(ch *accChoice, m *wireMsg, out []delta, stream bool) []delta {
	text, thinking := contentText(m.Content)
	if r := firstNonEmpty(m.ReasoningContent, m.Reasoning); r != "" {
		thinking += r
	}
	refusal := ""
	if m.Refusal != nil {
		refusal = *m.Refusal
	}
	out = a.addText(ch, &ch.reasoning, DeltaReasoning, thinking, out)
	out = a.addText(ch, &ch.content, DeltaContent, text, out)
	out = a.addText(ch, &ch.refusal, DeltaRefusal, refusal, out)
	for i := range m.ToolCalls {
		if a.capped {
			break
		}
		if stream {
			a.addToolFragment(ch, &m.ToolCalls[i])
		} else {
			// A non-stream message lists complete calls: one element, one call.
			c := &accCall{}
			a.fillCall(c, &m.ToolCalls[i])
			ch.calls = append(ch.calls, c)
		}
	}
	return out
}

// addText keeps one piece of text within the response's budget and emits it.
func (a *accumulator) addText(ch *accChoice, b *strings.Builder, kind DeltaKind, text string, out []delta) []delta {
	if text = a.take(text); text == "" {
		return out
	}
	b.WriteString(text)
	return append(out, delta{ch.Index, kind, text})
}

// firstNonEmpty reads reasoning_content or reasoning, not both: servers that
// send both send the same text twice.
func firstNonEmpty(a, b *string) string {
	if a != nil && *a != "" {
		return *a
	}
	if b != nil {
		return *b
	}
	return ""
}

// contentText returns the answer text and the thinking text of a content
// value: a string, null, or (Mistral Magistral) an array of typed parts.
func contentText(raw json.RawMessage) (text, thinking string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return "", ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, ""
		}
		return "", ""
	}
	if raw[0] != '[' {
		return "", ""
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", ""
	}
	var tb, kb strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			tb.WriteString(p.Text)
		case "thinking":
			// thinking is a string or a nested array of text parts.
			t, _ := contentText(p.Thinking)
			kb.WriteString(t)
		}
	}
	return tb.String(), kb.String()
}

// addToolFragment joins tool-call fragments across chunks: key by wire index
// when present (never a dense slice: gateways start at 1); a different
// non-empty id at a known index starts a new call (Ollama sends index 0 for
// every call); without an index, an id or name starts a new call and an
// id-less fragment continues the last one.
func (a *accumulator) addToolFragment(ch *accChoice, f *wireToolCall) {
	var last *accCall
	if n := len(ch.calls); n > 0 {
		last = ch.calls[n-1]
	}
	var c *accCall
	if f.Index != nil {
		c = ch.byIndex[f.Index.V]
		if c != nil && f.ID != "" && c.ID != "" && f.ID != c.ID {
			c = nil
		}
	} else {
		switch {
		case last == nil:
		case f.ID != "" && f.ID != last.ID:
		case f.ID == "" && f.Function.Name != "" && last.Name != "":
		default:
			c = last
		}
	}
	if c == nil {
		c = &accCall{}
		ch.calls = append(ch.calls, c)
		if f.Index != nil {
			ch.byIndex[f.Index.V] = c
		}
	}
	a.fillCall(c, f)
}

func (a *accumulator) fillCall(c *accCall, f *wireToolCall) {
	if f.Index != nil && c.WireIndex == nil {
		v := f.Index.V
		c.WireIndex = &v
	}
	if c.ID == "" && f.ID != "" {
		c.ID = f.ID
	}
	if c.Name == "" && f.Function.Name != "" {
		c.Name = f.Function.Name
	}
	if len(f.ExtraContent) > 0 && string(f.ExtraContent) != "null" {
		c.Extra = append(json.RawMessage(nil), f.ExtraContent...)
	}
	args := bytes.TrimSpace(f.Function.Arguments)
	switch {
	case len(args) == 0 || string(args) == "null":
	case args[0] == '"':
		var s string
		if json.Unmarshal(args, &s) == nil {
			c.args.WriteString(a.take(s))
		}
	default:
		// llama.cpp (build 8233) sends arguments as a JSON object.
		var buf bytes.Buffer
		if json.Compact(&buf, args) == nil {
			c.args.WriteString(a.take(buf.String()))
		}
	}
}

// finish returns the completed Completion: choices sorted, tool calls
// completed (type defaulted, ids synthesized, nameless calls dropped).
func (a *accumulator) finish() *Completion {
	sort.Ints(a.order)
	a.c.Choices = a.c.Choices[:0]
	for _, i := range a.order {
		ch := a.choices[i]
		ch.Content, ch.Reasoning, ch.Refusal = ch.content.String(), ch.reasoning.String(), ch.refusal.String()
		ch.ToolCalls = ch.ToolCalls[:0]
		for _, c := range ch.calls {
			if c.Name == "" {
				// LM Studio sometimes emits a call with neither id nor
				// function; there is nothing to run or answer.
				continue
			}
			if c.ID == "" {
				c.ID = a.newID() // Gemini sends "", and "" cannot be answered
			}
			tc := c.ToolCall
			tc.Arguments = c.args.String()
			tc.Type = "function"
			ch.ToolCalls = append(ch.ToolCalls, tc)
		}
		a.c.Choices = append(a.c.Choices, ch.Choice)
	}
	return &a.c
}

func parseUsage(raw json.RawMessage) *Usage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	num := func(k string) int {
		var f float64
		if v, ok := m[k]; ok && json.Unmarshal(v, &f) == nil {
			return int(f)
		}
		return 0
	}
	return &Usage{
		PromptTokens:     num("prompt_tokens"),
		CompletionTokens: num("completion_tokens"),
		TotalTokens:      num("total_tokens"),
		Raw:              append(json.RawMessage(nil), raw...),
	}
}

// APIError is an error reported by the server, in whatever shape it chose.
type APIError struct {
	HTTPStatus int    // 0 when the error came inside an HTTP-200 body
	Code       string // "model_not_found", "429", "tool_use_failed"... (numbers as text)
	Type       string
	Message    string
	Detail     string // extra text some servers add (OpenRouter metadata.raw)
}

// MaxServerText bounds a server's own words in one of our lines: enough
// for any real error message (Groq's tool-validation ones run to ~210),
// short enough that an HTML page or a stack trace cannot fill the screen.
const MaxServerText = 240

// Error is the server's message (and its detail) as one line of at most
// about MaxServerText bytes; Message and Detail keep the text as sent.
func (e *APIError) Error() string {
	msg := termsafe.Squash(e.Message, MaxServerText)
	if d := termsafe.Squash(e.Detail, MaxServerText); d != "" && !strings.Contains(msg, d) {
		if msg == "" {
			msg = d
		} else {
			msg += ": " + d
		}
	}
	if msg == "" {
		msg = "error without a message"
		if e.Code != "" {
			msg += " (code " + termsafe.Squash(e.Code, 40) + ")"
		}
	}
	return termsafe.Squash(msg, MaxServerText)
}

// parseErrorBody reads an error body in any of the shapes servers use: {"error":{...}}, [{"error":{...}}], {"message":...},
// {"error":"text"}, {"detail":...}, else the text (an HTML page's title).
func parseErrorBody(status int, body []byte) *APIError {
	e := parseErrorValue(body)
	e.HTTPStatus = status
	return &e
}

func parseErrorValue(body []byte) APIError {
	body = bytes.TrimSpace(body)
	var arr []json.RawMessage
	if len(body) > 0 && body[0] == '[' && json.Unmarshal(body, &arr) == nil && len(arr) > 0 &&
		bytes.HasPrefix(bytes.TrimSpace(arr[0]), []byte("{")) {
		return parseErrorValue(arr[0]) // Gemini compat wraps the error in an array
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return APIError{Message: bodyText(body)}
	}
	if inner, ok := obj["error"]; ok && string(inner) != "null" {
		var s string
		if json.Unmarshal(inner, &s) == nil {
			return APIError{Message: s} // Ollama native API: {"error":"text"}
		}
		var fields map[string]json.RawMessage
		if json.Unmarshal(inner, &fields) == nil {
			return errorFromObject(fields)
		}
	}
	if d, ok := obj["detail"]; ok {
		return APIError{Message: detailText(d)}
	}
	if _, ok := obj["message"]; ok {
		return errorFromObject(obj) // vLLM before 0.10.1
	}
	return APIError{Message: bodyText(body)}
}

// detailText reads FastAPI's "detail": a string, or a validation list
// [{"loc":["body","messages"],"msg":"field required"}] shown as
// "body.messages: field required; ...".
func detailText(d json.RawMessage) string {
	var s string
	if json.Unmarshal(d, &s) == nil {
		return s
	}
	var list []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(d, &list) != nil {
		return bodyText(d)
	}
	var parts []string
	for _, it := range list {
		loc := make([]string, len(it.Loc))
		for i, l := range it.Loc {
			loc[i] = fmt.Sprint(l)
		}
		p := it.Msg
		if len(loc) > 0 {
			p = strings.Join(loc, ".") + ": " + p
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return bodyText(d)
	}
	return strings.Join(parts, "; ")
}

// The expressions are compiled on first use, as are the others of
// pyaichat's that only an uncommon path needs: compiled as the program
// starts, each would stay in the heap of every session.
var (
	htmlTitle = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`) })
	htmlNoise = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?is)<script.*?</script>|<style.*?</style>|<[^>]*>`)
	})
)

// bodyText is the text of a body that is not an error object: an HTML page
// (a proxy's 502, a web server's 404) is reduced to its <title>, or to its
// text without tags; anything else is kept, squashed to one short line.
func bodyText(body []byte) string {
	s := strings.TrimSpace(string(body))
	if strings.HasPrefix(s, "<") {
		if m := htmlTitle().FindStringSubmatch(s); m != nil && strings.TrimSpace(m[1]) != "" {
			s = m[1]
		} else {
			s = htmlNoise().ReplaceAllString(s, " ")
		}
		s = html.UnescapeString(s)
	}
	return termsafe.Squash(s, MaxServerText)
}

func errorFromObject(o map[string]json.RawMessage) APIError {
	str := func(k string) string {
		v, ok := o[k]
		if !ok {
			return ""
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		if string(v) == "null" {
			return ""
		}
		return string(v) // a number code: 429
	}
	e := APIError{Code: str("code"), Type: str("type"), Message: str("message")}
	if e.Type == "" {
		e.Type = str("status") // Gemini: "INVALID_ARGUMENT"
	}
	if md, ok := o["metadata"]; ok {
		var m struct {
			Raw json.RawMessage `json:"raw"`
		}
		if json.Unmarshal(md, &m) == nil && len(m.Raw) > 0 {
			e.Detail = rawDetail(m.Raw)
		}
	}
	return e
}

// rawDetail reads OpenRouter's metadata.raw, the upstream provider's own
// answer: a string of text, a string holding that provider's JSON error, or
// the JSON itself. Its inner message is what the user needs.
func rawDetail(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t := strings.TrimSpace(s)
		if !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
			return s
		}
		raw = json.RawMessage(t)
	}
	e := parseErrorValue(raw)
	return e.Error()
}
