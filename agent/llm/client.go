package llm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
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
)

// Client talks to one OpenAI-compatible server. It owns retries and
// timeouts because go-openai has neither (no retry, no Retry-After, and an
// http.Client without any timeout).
type Client struct {
	cfg  Options
	http *http.Client
	// noStreamOptions is set once a server rejected stream_options (older
	// Groq and some proxies answer 400); later requests leave it out.
	noStreamOptions atomic.Bool
	ids             atomic.Int64
}

// New makes a client for the server and key in opts; zero bounds take
// their defaults (Options.WithDefaults).
func New(opts Options) *Client {
	cfg := opts.WithDefaults()
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
	return &Client{cfg: cfg, http: hc}
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

// NewCallID makes an id for a tool call that came without one (Gemini
// sends "", and a call written as text has none): unique for the client.
func (c *Client) NewCallID() string {
	return "call_pyaichat_" + strconv.FormatInt(c.ids.Add(1), 10)
}

// endpoint is the base URL with /chat/completions added to its path; a
// query stays a query (Azure's ?api-version=...).
func (c *Client) endpoint() string {
	u, err := url.Parse(c.cfg.BaseURL)
	if err != nil {
		return c.cfg.BaseURL // the request reports it
	}
	return u.JoinPath("chat/completions").String()
}

// setKey puts the key where the server looks for it: Azure OpenAI wants it
// in an api-key header (Bearer there means an Entra ID token), every other
// server as a Bearer token.
func (c *Client) setKey(h http.Header) {
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

// Where is the base URL as shown to the user: no userinfo, no query (Azure
// style ?api-key=... must never be printed).
func (c *Client) Where() string { return DisplayURL(c.cfg.BaseURL) }

var (
	errNoResponse = errors.New("no response")
	errStalled    = errors.New("stream stalled")
)

// Open sends one chat request and returns the response stream, retrying
// connection errors, 408, 409, 429 and 5xx (not insufficient_quota) with
// exponential backoff and jitter, honouring Retry-After up to a cap. notify
// is told about each wait so the user sees it. Its errors are one line
// each and never hold the key (see clean).
func (c *Client) Open(ctx context.Context, model string, msgs []Message, tools Tools, notify func(string)) (*Stream, error) {
	s, err := c.open(ctx, model, msgs, tools, func(msg string) { notify(c.clean(msg)) })
	if err != nil {
		return nil, c.cleanErr(err)
	}
	return s, nil
}

func (c *Client) open(ctx context.Context, model string, msgs []Message, tools Tools, notify func(string)) (*Stream, error) {
	if err := c.checkOptions(); err != nil {
		return nil, err
	}
	attempts := max(c.cfg.MaxRetries, 0) + 1
	for attempt := 1; ; attempt++ {
		body, err := buildRequest(model, msgs, tools, !c.noStreamOptions.Load())
		if err != nil {
			return nil, fmt.Errorf("building the request: %w", err)
		}
		s, wait, err := c.try(ctx, model, body)
		if err == nil {
			return s, nil
		}
		if c.dropStreamOptions(err) {
			attempt-- // the same attempt, without what the server refused
			continue
		}
		if wait < 0 || attempt >= attempts || ctx.Err() != nil {
			return nil, err
		}
		if wait == 0 {
			wait = c.backoff(attempt)
		}
		notify(fmt.Sprintf("(%s; retrying in %s, attempt %d of %d)", err, roundDur(wait), attempt+1, attempts))
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// checkOptions checks the base URL and the key: options not checked by
// whoever made them may hold anything.
func (c *Client) checkOptions() error {
	if err := CheckBaseURL(c.cfg.BaseURL); err != nil {
		return err
	}
	return CheckKey(c.cfg.APIKey, c.cfg.KeyHint)
}

// dropStreamOptions reports whether err is a server refusing
// stream_options, and if so leaves them out of this client's requests
// from now on.
func (c *Client) dropStreamOptions(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 400 || c.noStreamOptions.Load() ||
		!strings.Contains(strings.ToLower(ae.Message), "stream_options") {
		return false
	}
	c.noStreamOptions.Store(true)
	return true
}

// sleep waits for d, or until ctx ends, returning its cause.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

func (c *Client) backoff(attempt int) time.Duration {
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
func (c *Client) try(ctx context.Context, model string, body []byte) (*Stream, time.Duration, error) {
	actx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoint(), bytes.NewReader(body))
	if err != nil {
		cancel(nil)
		return nil, -1, fmt.Errorf("bad base URL %s: %s", c.Where(), urlProblem(err))
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
			return nil, -1, fmt.Errorf("no response from %s within %s", c.Where(), c.cfg.FirstByteTimeout)
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
	s := &Stream{c: c, body: resp.Body, dog: dog, cancel: cancel, actx: actx, parent: ctx, acc: newAccumulator(c.NewCallID),
		ctype: resp.Header.Get("Content-Type")}
	s.br = bufio.NewReaderSize(&dogReader{r: resp.Body, s: s}, 32<<10)
	return s, 0, nil
}

// netRetry retries connection failures except those the same request will
// meet again: a typo in the host, a bad port, a certificate that does not
// verify, a server that does not speak HTTP (or speaks plain HTTP to an
// https:// URL), a redirect loop.
func (c *Client) netRetry(err error) time.Duration {
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

func (c *Client) netError(err error) error {
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("nothing listening at %s", c.Where())
	case errors.As(err, &dns):
		return fmt.Errorf("cannot resolve the host of %s", c.Where())
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("could not connect to %s within %s", c.Where(), c.cfg.ConnectTimeout)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s closed the connection before answering", c.Where())
	case errors.Is(err, errRedirectLoop):
		return fmt.Errorf("%s redirected the request more than 10 times", c.Where())
	case httpToHTTPS(err):
		return fmt.Errorf("%s answered in plain HTTP; use http:// in the base URL", c.Where())
	}
	// url.Error repeats method and URL; keep only the cause.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if msg := err.Error(); notHTTP(err) {
		// Drop net/http's "transport connection broken" preamble.
		return fmt.Errorf("%s did not answer in HTTP (%s)", c.Where(), msg[strings.Index(msg, "malformed HTTP"):])
	}
	return fmt.Errorf("cannot reach %s: %v", c.Where(), err)
}

func (c *Client) statusRetry(resp *http.Response, ae *APIError) time.Duration {
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
func (c *Client) statusError(model string, ae *APIError) error {
	msg := strings.TrimSpace(ae.Error())
	switch {
	case ae.HTTPStatus == 401:
		// The server's text is left out: OpenAI's echoes part of the key.
		return &statusErr{ae, fmt.Sprintf("API key rejected by %s (HTTP 401); check %s", c.Where(), keyHint(c.cfg.KeyHint))}
	case ae.HTTPStatus == 404 && (ae.Code == "model_not_found" || strings.Contains(strings.ToLower(msg), "model")):
		return &statusErr{ae, fmt.Sprintf("model %q not found at %s (set PYAICHAT_MODEL or use /model NAME)", model, c.Where())}
	case ae.HTTPStatus == 404:
		return &statusErr{ae, fmt.Sprintf("%s has no chat completions endpoint (HTTP 404: %s); check OPENAI_BASE_URL", c.Where(), msg)}
	case ae.HTTPStatus == 403:
		return &statusErr{ae, fmt.Sprintf("access denied by %s (HTTP 403): %s", c.Where(), msg)}
	}
	return &statusErr{ae, fmt.Sprintf("%s (HTTP %d from %s)", msg, ae.HTTPStatus, c.Where())}
}

// statusErr is an HTTP error with its one-line message; errors.As finds the
// APIError behind it.
type statusErr struct {
	api *APIError
	msg string
}

func (e *statusErr) Error() string { return e.msg }
func (e *statusErr) Unwrap() error { return e.api }
