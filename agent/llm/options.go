package llm

import (
	"net/http"
	"time"

	"github.com/pyaichat/pyaichat/agent/redact"
)

// Options are the server, the key and the bounds of a Client.
type Options struct {
	BaseURL string // with /chat/completions and /models below it
	APIKey  string // "" for servers that need none
	// KeyHint is what a rejected or malformed key tells the user to
	// check, where the key came from; "" is OPENAI_API_KEY.
	KeyHint string
	Limits

	// HTTPClient replaces the default client (tests); nil builds one with
	// ConnectTimeout.
	HTTPClient *http.Client
}

// Limits are a Client's time and retry bounds. Zero ones take the
// defaults in parentheses (WithDefaults).
type Limits struct {
	ConnectTimeout   time.Duration // TCP+TLS connect (10 s)
	FirstByteTimeout time.Duration // request sent -> response headers (120 s: local prefill is slow)
	IdleTimeout      time.Duration // silence inside a stream, keep-alive comments count as data (90 s)
	MaxRetries       int           // extra attempts for retryable failures (2; negative: none)
	RetryBaseDelay   time.Duration // first backoff, doubled each retry (500 ms)
	RetryMaxDelay    time.Duration // backoff cap (8 s)
	RetryAfterCap    time.Duration // longest Retry-After honoured (20 s)
}

// WithDefaults fills every zero bound.
func (o Options) WithDefaults() Options {
	o.Limits = o.Limits.WithDefaults()
	return o
}

// WithDefaults fills every zero bound.
func (o Limits) WithDefaults() Limits {
	def := func(p *time.Duration, d time.Duration) {
		if *p <= 0 {
			*p = d
		}
	}
	def(&o.ConnectTimeout, 10*time.Second)
	def(&o.FirstByteTimeout, 120*time.Second)
	def(&o.IdleTimeout, 90*time.Second)
	if o.MaxRetries == 0 {
		o.MaxRetries = 2
	}
	def(&o.RetryBaseDelay, 500*time.Millisecond)
	def(&o.RetryMaxDelay, 8*time.Second)
	def(&o.RetryAfterCap, 20*time.Second)
	return o
}

// RedactKey replaces the API key in s where it is a whole token and long
// enough to be a secret (see redact.ReplaceToken): servers echo keys in
// their errors, and models in their answers.
func RedactKey(s, key string) string { return redact.ReplaceToken(s, key, "[key]") }

// clean redacts the key from a line that may quote a server.
func (c *Client) clean(msg string) string { return RedactKey(msg, c.cfg.APIKey) }

// cleanErr is err with the key redacted from its message.
func (c *Client) cleanErr(err error) error { return Reworded(err, c.clean(err.Error())) }

// Reworded is err with msg as its message, or err itself when msg is its
// message already; errors.Is and errors.As still find what err wraps (an
// *APIError). It is how an error loses the key, or becomes one line,
// without losing what it is.
func Reworded(err error, msg string) error {
	if msg == err.Error() {
		return err
	}
	return &reworded{err, msg}
}

type reworded struct {
	err error
	msg string
}

func (r *reworded) Error() string { return r.msg }
func (r *reworded) Unwrap() error { return r.err }
