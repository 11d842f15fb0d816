package agent

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Message is one message of a conversation, in our own terms: the loop and
// its tests never see wire types.
type Message struct {
	Role       string // "system", "user", "assistant" or "tool"
	Content    string
	ToolCalls  []ToolCall // assistant only
	ToolCallID string     // tool only
}

// wireRequest is the body of POST /chat/completions. go-openai's Tool and
// StreamOptions are used as they are; its ChatCompletionMessage is not,
// because it has no field for Gemini's extra_content (the thought signature
// Gemini 3 requires back) and would send a tool call's "type" as "".
type wireRequest struct {
	Model         string                `json:"model"`
	Messages      []wireOutMsg          `json:"messages"`
	Tools         []openai.Tool         `json:"tools,omitempty"`
	Stream        bool                  `json:"stream"`
	StreamOptions *openai.StreamOptions `json:"stream_options,omitempty"`
}

type wireOutMsg struct {
	Role       string            `json:"role"`
	Content    string            `json:"content"`
	ToolCalls  []wireOutToolCall `json:"tool_calls,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
}

type wireOutToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
}

func buildRequest(model string, msgs []Message, tools []openai.Tool, usage bool) ([]byte, error) {
	req := wireRequest{Model: model, Tools: tools, Stream: true, Messages: make([]wireOutMsg, len(msgs))}
	if usage {
		req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	for i, m := range msgs {
		w := wireOutMsg{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			var o wireOutToolCall
			o.ID, o.Type, o.ExtraContent = tc.ID, "function", tc.Extra
			o.Function.Name, o.Function.Arguments = tc.Name, tc.Arguments
			w.ToolCalls = append(w.ToolCalls, o)
		}
		req.Messages[i] = w
	}
	return json.Marshal(req)
}

// openaiTools converts our tool list to go-openai's request type.
func openaiTools(tools []Tool) []openai.Tool {
	out := make([]openai.Tool, len(tools))
	for i, t := range tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: schema,
		}}
	}
	return out
}

// client talks to one OpenAI-compatible server. It owns retries and
// timeouts because go-openai has neither (no retry, no Retry-After, and an
// http.Client without any timeout).
type client struct {
	cfg  *Config
	http *http.Client
	// noStreamOptions is set once a server rejected stream_options (older
	// Groq and some proxies answer 400); later requests leave it out.
	noStreamOptions atomic.Bool
	ids             atomic.Int64
}

func newClient(cfg *Config) *client {
	hc := cfg.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
		tr.DialContext = d.DialContext
		tr.TLSHandshakeTimeout = cfg.ConnectTimeout
		// No http.Client.Timeout: it would cut long answers. The first-byte
		// and idle timers in open/Stream bound each phase instead.
		hc = &http.Client{Transport: tr, CheckRedirect: limitRedirects}
	}
	return &client{cfg: cfg, http: hc}
}

// errRedirectLoop ends a chain of redirects; it is ours so that netRetry
// can tell it from a connection failure.
var errRedirectLoop = errors.New("too many redirects")

// limitRedirects is net/http's default limit of 10, with our error.
func limitRedirects(_ *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errRedirectLoop
	}
	return nil
}

func (c *client) newID() string {
	return "call_pyaichat_" + strconv.FormatInt(c.ids.Add(1), 10)
}

// endpoint is the base URL with /chat/completions added to its path; a
// query stays a query (Azure's ?api-version=...).
func (c *client) endpoint() string {
	u, err := url.Parse(c.cfg.BaseURL)
	if err != nil {
		return c.cfg.BaseURL // the request reports it
	}
	return u.JoinPath("chat/completions").String()
}

// setKey puts the key where the server looks for it: Azure OpenAI wants it
// in an api-key header (Bearer there means an Entra ID token), every other
// server as a Bearer token.
func (c *client) setKey(h http.Header) {
	switch {
	case c.cfg.APIKey == "":
	case isAzure(c.cfg.BaseURL):
		h.Set("api-key", c.cfg.APIKey)
	default:
		h.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
}

// isAzure reports whether base is an Azure OpenAI or Azure AI Foundry
// resource.
func isAzure(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	for _, suffix := range []string{".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com"} {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	return false
}

// where is the base URL as shown to the user: no userinfo, no query (Azure
// style ?api-key=... must never be printed).
func (c *client) where() string { return displayURL(c.cfg.BaseURL) }

// displayURL is a base URL as it may be shown: without userinfo, query or
// fragment, and with any control characters made visible. A URL that does
// not parse is trimmed by hand the same way.
func displayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return visible(roughURL(raw))
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return visible(strings.TrimRight(u.String(), "/"))
}

// roughURL cuts userinfo, query and fragment out of a string that is not a
// valid URL. Everything up to the last '@' after "//" goes, even past a '/',
// because a password may hold one; an '@' in a query costs the host, which
// is a fair price in a URL that does not parse anyway.
func roughURL(raw string) string {
	prefix, rest := "", raw
	if i := strings.Index(raw, "//"); i >= 0 {
		prefix, rest = raw[:i+2], raw[i+2:]
	}
	if k := strings.LastIndexByte(rest, '@'); k >= 0 {
		rest = rest[k+1:]
	}
	rest, _, _ = strings.Cut(rest, "#")
	rest, _, _ = strings.Cut(rest, "?")
	return strings.TrimRight(prefix+rest, "/")
}

var (
	errNoResponse = errors.New("no response")
	errStalled    = errors.New("stream stalled")
)

// open sends one chat request and returns the response stream, retrying
// connection errors, 408, 409, 429 and 5xx (not insufficient_quota) with
// exponential backoff and jitter, honouring Retry-After up to a cap. notify
// is told about each wait so the user sees it.
func (c *client) open(ctx context.Context, model string, msgs []Message, tools []openai.Tool, notify func(string)) (*Stream, error) {
	// A Config not made by LoadConfig may not have been checked.
	if err := checkBaseURL(c.cfg.BaseURL); err != nil {
		return nil, err
	}
	if err := checkKey(c.cfg.APIKey); err != nil {
		return nil, err
	}
	attempts := c.cfg.MaxRetries + 1
	for attempt := 1; ; attempt++ {
		body, err := buildRequest(model, msgs, tools, !c.noStreamOptions.Load())
		if err != nil {
			return nil, fmt.Errorf("building the request: %w", err)
		}
		s, wait, err := c.try(ctx, model, body)
		if err == nil {
			return s, nil
		}
		var ae *APIError
		if errors.As(err, &ae) && ae.HTTPStatus == 400 && !c.noStreamOptions.Load() &&
			strings.Contains(strings.ToLower(ae.Message), "stream_options") {
			c.noStreamOptions.Store(true)
			attempt--
			continue
		}
		if wait < 0 || attempt >= attempts || ctx.Err() != nil {
			return nil, err
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		notify(fmt.Sprintf("(%s; retrying in %s, attempt %d of %d)", err, roundDur(wait), attempt+1, attempts))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, context.Cause(ctx)
		case <-t.C:
		}
	}
}

func (c *client) backoff(attempt int) time.Duration {
	d := c.cfg.RetryBaseDelay << (attempt - 1)
	if d > c.cfg.RetryMaxDelay || d <= 0 {
		d = c.cfg.RetryMaxDelay
	}
	// Jitter down by up to 25%, as the official SDKs do, so that clients
	// rate-limited together do not come back together.
	return time.Duration(float64(d) * (1 - 0.25*rand.Float64()))
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d
}

// try makes one attempt. wait < 0 means do not retry; wait == 0 means retry
// after the usual backoff; wait > 0 is the server's Retry-After (capped).
func (c *client) try(ctx context.Context, model string, body []byte) (*Stream, time.Duration, error) {
	actx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint(), bytes.NewReader(body))
	if err != nil {
		cancel(nil)
		return nil, -1, fmt.Errorf("bad base URL %s: %s", c.where(), urlProblem(err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	c.setKey(req.Header)
	dog := time.AfterFunc(c.cfg.FirstByteTimeout, func() { cancel(errNoResponse) })
	resp, err := c.http.Do(req)
	if err != nil {
		dog.Stop()
		cancel(nil)
		if ctx.Err() != nil {
			return nil, -1, context.Cause(ctx)
		}
		if context.Cause(actx) == errNoResponse {
			return nil, -1, fmt.Errorf("no response from %s within %s", c.where(), c.cfg.FirstByteTimeout)
		}
		return nil, c.netRetry(err), c.netError(err)
	}
	if resp.StatusCode >= 300 {
		dog.Stop()
		defer cancel(nil)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		ae := parseErrorBody(resp.StatusCode, raw)
		return nil, c.statusRetry(resp, ae), c.statusError(model, ae)
	}
	// Headers arrived: from now on the limit is silence between bytes.
	dog.Stop()
	dog = time.AfterFunc(c.cfg.IdleTimeout, func() { cancel(errStalled) })
	s := &Stream{c: c, body: resp.Body, dog: dog, cancel: cancel, actx: actx, parent: ctx, acc: newAccumulator(c.newID),
		ctype: resp.Header.Get("Content-Type")}
	s.br = bufio.NewReaderSize(&dogReader{r: resp.Body, s: s}, 32<<10)
	return s, 0, nil
}

// netRetry retries connection failures except those the same request will
// meet again: a typo in the host, a bad port, a certificate that does not
// verify, a server that does not speak HTTP (or speaks plain HTTP to an
// https:// URL), a redirect loop.
func (c *client) netRetry(err error) time.Duration {
	var dns *net.DNSError
	var addr *net.AddrError
	var cert *tls.CertificateVerificationError
	var rec tls.RecordHeaderError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound,
		errors.As(err, &addr),
		errors.As(err, &cert),
		errors.As(err, &rec),
		errors.Is(err, errRedirectLoop),
		notHTTP(err),
		httpToHTTPS(err):
		return -1
	}
	return 0
}

// notHTTP and httpToHTTPS recognise two net/http errors that have no type
// of their own, by their text.
func notHTTP(err error) bool { return strings.Contains(err.Error(), "malformed HTTP") }

func httpToHTTPS(err error) bool {
	return strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
}

func (c *client) netError(err error) error {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("nothing listening at %s", c.where())
	case errors.As(err, &dns):
		return fmt.Errorf("cannot resolve the host of %s", c.where())
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("could not connect to %s within %s", c.where(), c.cfg.ConnectTimeout)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s closed the connection before answering", c.where())
	case errors.Is(err, errRedirectLoop):
		return fmt.Errorf("%s redirected the request more than 10 times", c.where())
	case httpToHTTPS(err):
		return fmt.Errorf("%s answered in plain HTTP; use http:// in the base URL", c.where())
	}
	// url.Error repeats method and URL; keep only the cause.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if msg := err.Error(); notHTTP(err) {
		// Drop net/http's "transport connection broken" preamble.
		return fmt.Errorf("%s did not answer in HTTP (%s)", c.where(), msg[strings.Index(msg, "malformed HTTP"):])
	}
	return fmt.Errorf("cannot reach %s: %v", c.where(), err)
}

func (c *client) statusRetry(resp *http.Response, ae *APIError) time.Duration {
	s := resp.StatusCode
	quota := ae.Code == "insufficient_quota" || ae.Type == "insufficient_quota"
	if !(s == 408 || s == 409 || s == 429 || s >= 500) || quota {
		return -1
	}
	return retryAfter(resp.Header, c.cfg.RetryAfterCap)
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an
// HTTP date), capped so a server cannot park the REPL for minutes.
func retryAfter(h http.Header, limit time.Duration) time.Duration {
	var d time.Duration
	if v := h.Get("Retry-After-Ms"); v != "" {
		d = clampedDuration(v, time.Millisecond, limit)
	} else if v := h.Get("Retry-After"); v != "" {
		if t, err := http.ParseTime(v); err == nil {
			d = min(time.Until(t), limit)
		} else {
			d = clampedDuration(v, time.Second, limit)
		}
	}
	return max(d, 0)
}

// clampedDuration reads a number of units, capped at limit before it is
// converted: 1e20 seconds or Inf overflow a Duration, and must mean "the
// longest wait we allow", not "no Retry-After" (which would retry at once).
// A value too large for a float64 (1e400) counts as large too.
func clampedDuration(v string, unit, limit time.Duration) time.Duration {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if (err != nil && !errors.Is(err, strconv.ErrRange)) || math.IsNaN(f) || f <= 0 {
		return 0
	}
	if f >= float64(limit)/float64(unit) {
		return limit
	}
	return time.Duration(f * float64(unit))
}

// statusError turns an HTTP error into one line for the user.
func (c *client) statusError(model string, ae *APIError) error {
	msg := strings.TrimSpace(ae.Error())
	switch {
	case ae.HTTPStatus == 401:
		// The server's text is left out: OpenAI's echoes part of the key.
		return &statusErr{ae, fmt.Sprintf("API key rejected by %s (HTTP 401); check OPENAI_API_KEY", c.where())}
	case ae.HTTPStatus == 404 && (ae.Code == "model_not_found" || strings.Contains(strings.ToLower(msg), "model")):
		return &statusErr{ae, fmt.Sprintf("model %q not found at %s (set PYAICHAT_MODEL or use /model NAME)", model, c.where())}
	case ae.HTTPStatus == 404:
		return &statusErr{ae, fmt.Sprintf("%s has no chat completions endpoint (HTTP 404: %s); check OPENAI_BASE_URL", c.where(), msg)}
	case ae.HTTPStatus == 403:
		return &statusErr{ae, fmt.Sprintf("access denied by %s (HTTP 403): %s", c.where(), msg)}
	}
	return &statusErr{ae, fmt.Sprintf("%s (HTTP %d from %s)", msg, ae.HTTPStatus, c.where())}
}

// statusErr is an HTTP error with its one-line message; errors.As finds the
// APIError behind it.
type statusErr struct {
	api *APIError
	msg string
}

func (e *statusErr) Error() string { return e.msg }
func (e *statusErr) Unwrap() error { return e.api }

// Stream iterates over the visible text of one response as it arrives
// (Next/Current/Err/Close), then gives the whole Completion (Result).
type Stream struct {
	c      *client
	body   io.ReadCloser
	br     *bufio.Reader
	sse    *sseReader
	acc    *accumulator
	dog    *time.Timer
	cancel context.CancelCauseFunc
	actx   context.Context
	parent context.Context

	ctype   string // the response's Content-Type, to name it when the body is no stream
	started bool
	events  int // SSE events read
	pending []delta
	cur     delta
	err     error
	done    bool
	// unfinished is set when the body ended cleanly but the answer did not:
	// no [DONE] and no finish_reason (see atEOF).
	unfinished bool
}

// dogReader re-arms the stream's idle timer on every byte received, so
// keep-alive comments count as life and a silent server does not.
type dogReader struct {
	r io.Reader
	s *Stream
}

func (d *dogReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if n > 0 {
		d.s.dog.Reset(d.s.c.cfg.IdleTimeout)
	}
	return n, err
}

// Next advances to the next piece of visible text. It returns false at the
// end of the response or on an error (see Err).
func (s *Stream) Next() bool {
	for len(s.pending) == 0 {
		if s.done {
			return false
		}
		s.step()
	}
	s.cur, s.pending = s.pending[0], s.pending[1:]
	return true
}

// Current is the piece of text Next moved to.
func (s *Stream) Current() (kind DeltaKind, choice int, text string) {
	return s.cur.Kind, s.cur.Choice, s.cur.Text
}

func (s *Stream) step() {
	if !s.started {
		s.started = true
		if s.sniffJSON() {
			return
		}
		s.sse = newSSEReader(s.br)
	}
	ev, err := s.sse.Next()
	if err != nil {
		s.done = true
		if errors.Is(err, io.EOF) {
			s.atEOF()
		} else {
			s.err = s.readError(err)
		}
		return
	}
	s.events++
	if ev.Data == "[DONE]" {
		s.done = true
		return
	}
	s.pending, err = s.acc.addChunk(ev.Name, []byte(ev.Data), s.pending[:0])
	if err != nil {
		s.done = true
		s.err = fmt.Errorf("%s sent a stream event that is not a JSON object: %s", s.c.where(), squash(ev.Data, 80))
		return
	}
	if s.acc.c.Err != nil || s.acc.capped {
		// Stop at the first error: what follows (if anything) is [DONE],
		// and a server that errs and then stalls must not hang us. Stop
		// at the size cap too: the rest would only be dropped.
		s.done = true
	}
}

// Capped reports a response cut at maxResponseText; the rest was not read.
func (s *Stream) Capped() bool { return s.acc.capped }

// atEOF judges a body that ended cleanly before [DONE]. With no event at
// all and no event-stream Content-Type, whatever answered (a captive portal,
// a web server, a proxy's text/plain) is not a chat server, and saying "the
// model returned an empty answer" would mislead. With events but no
// finish_reason either, the connection was most likely cut (a body without
// Content-Length or chunking ends by a close that looks clean), so the
// answer may be incomplete.
func (s *Stream) atEOF() {
	switch {
	case s.events == 0 && !isMediaType(s.ctype, "text/event-stream"):
		s.err = s.notAStream()
	case s.events > 0 && s.acc.c.Err == nil && !s.acc.finished(0):
		s.unfinished = true
	}
}

// Unfinished reports a stream that ended without saying the answer was
// complete (no [DONE], no finish_reason): the answer may be cut short.
func (s *Stream) Unfinished() bool { return s.unfinished }

func (s *Stream) notAStream() error {
	ctype := "no Content-Type"
	if s.ctype != "" {
		ctype = "Content-Type " + squash(s.ctype, 80)
	}
	return fmt.Errorf("%s answered with %s, neither an event stream nor JSON; check OPENAI_BASE_URL (a proxy or login page may be answering)",
		displayURL(s.c.endpoint()), ctype)
}

func isMediaType(ctype, want string) bool {
	mt, _, _ := strings.Cut(ctype, ";")
	return strings.EqualFold(strings.TrimSpace(mt), want)
}

// sniffJSON handles a server that answers a stream request with one plain
// JSON body (it ignored stream:true, or it sent {"error":...} with status
// 200): the first non-space byte is '{' or '[' instead of an SSE field.
func (s *Stream) sniffJSON() bool {
	for {
		b, err := s.br.Peek(1)
		if err != nil {
			return false // empty body: the SSE path reports a clean EOF
		}
		if b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n' {
			s.br.Discard(1)
			continue
		}
		if b[0] != '{' && b[0] != '[' {
			return false
		}
		break
	}
	raw, err := io.ReadAll(io.LimitReader(s.br, maxEventBytes))
	s.done = true
	if err != nil {
		s.err = s.readError(err)
		return true
	}
	s.wholeJSON(raw)
	return true
}

// wholeJSON reads a body that is one JSON value: a chat completion, an
// error object, or Gemini's error wrapped in an array. Anything else ([],
// [1,2,3], {}) is named as what it is rather than shown as an error text
// or an empty answer.
func (s *Stream) wholeJSON(raw []byte) {
	if raw[0] == '[' {
		var arr []map[string]json.RawMessage
		if json.Unmarshal(raw, &arr) != nil || len(arr) == 0 || arr[0]["error"] == nil {
			s.err = s.notACompletion(raw)
			return
		}
		e := parseErrorValue(raw)
		s.acc.c.Err = &e
		return
	}
	var err error
	s.pending, err = s.acc.addChunk("message", raw, s.pending[:0])
	if err != nil || (len(s.acc.order) == 0 && s.acc.c.Err == nil) {
		s.err = s.notACompletion(raw)
	}
}

func (s *Stream) notACompletion(raw []byte) error {
	return fmt.Errorf("%s answered with JSON that is not a chat completion: %s", displayURL(s.c.endpoint()), squash(string(raw), 60))
}

func (s *Stream) readError(err error) error {
	if s.parent.Err() != nil {
		return context.Cause(s.parent)
	}
	switch context.Cause(s.actx) {
	case errNoResponse, errStalled:
		return fmt.Errorf("the stream from %s stalled (no data for %s)", s.c.where(), s.c.cfg.IdleTimeout)
	}
	if errors.Is(err, errEventTooLarge) {
		return fmt.Errorf("%s sent an event larger than %d MB", s.c.where(), maxEventBytes>>20)
	}
	return fmt.Errorf("connection to %s lost mid-answer", s.c.where())
}

// Err is the error that ended the stream early: a read failure, a stall, a
// cancellation, or an error the server reported inside the stream.
func (s *Stream) Err() error {
	if s.err != nil {
		return s.err
	}
	if e := s.acc.c.Err; e != nil {
		return &statusErr{e, fmt.Sprintf("%s (reported by %s mid-answer)", strings.TrimSpace(e.Error()), s.c.where())}
	}
	return nil
}

// Result returns what the response carried so far (all of it after Next
// returned false).
func (s *Stream) Result() *Completion { return s.acc.finish() }

// Close releases the connection; it is safe to call more than once.
func (s *Stream) Close() error {
	s.dog.Stop()
	s.cancel(nil)
	return s.body.Close()
}
