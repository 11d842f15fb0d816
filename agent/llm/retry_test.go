package llm

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
)

// TestHugeRetryAfterMeansTheCap checks that values too large for a
// time.Duration wait the cap (30 ms in tests) instead of being ignored.
func TestHugeRetryAfterMeansTheCap(t *testing.T) {
	cases := []struct{ header, value, want string }{
		{"Retry-After", "99999999999999999999", "retrying in 30ms"},
		{"Retry-After", "Inf", "retrying in 30ms"},
		{"Retry-After", "1e400", "retrying in 30ms"},
		{"Retry-After-Ms", "1e300", "retrying in 30ms"},
		{"Retry-After", "100", "retrying in 30ms"},
		{"Retry-After-Ms", "7", "retrying in 7ms"},
		{"Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT", "retrying in 30ms"},
	}
	for _, c := range cases {
		t.Run(c.header+": "+c.value, func(t *testing.T) {
			f := fakemodel.New(t, fakemodel.Reply{Status: 429, ContentType: "application/json", Body: `{"error":{"message":"slow down"}}`, Header: []string{c.header, c.value}},
				fakemodel.Reply{Text: "ok"})
			client := New(Options{BaseURL: f.URL, APIKey: testKey, Limits: Limits{RetryBaseDelay: time.Millisecond, RetryMaxDelay: 5 * time.Millisecond, RetryAfterCap: 30 * time.Millisecond}})
			var notices []string
			st, err := client.Open(context.Background(), "m", []Message{{Role: "user", Content: "q"}}, Tools{}, func(n string) { notices = append(notices, n) })
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			if len(notices) != 1 || !strings.Contains(notices[0], c.want) {
				t.Errorf("notices %q, want one with %q", notices, c.want)
			}
		})
	}
}

// TestFailuresThatCannotFixThemselvesAreNotRetried: each of these meets the
// same failure on every attempt, so it is reported at once.
func TestFailuresThatCannotFixThemselvesAreNotRetried(t *testing.T) {
	var hits atomic.Int32
	count := func(h http.HandlerFunc) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); h(w, r) }))
		t.Cleanup(srv.Close)
		return srv
	}
	garbage := count(func(w http.ResponseWriter, r *http.Request) {
		// The whole request is read first: a connection closed while the
		// client still writes it is a network failure, which is retried.
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, _ := w.(http.Hijacker).Hijack()
		defer conn.Close()
		buf.WriteString("garbage\r\n\r\n")
		buf.Flush()
	})
	loop := count(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path, http.StatusTemporaryRedirect)
	})
	plain := count(func(w http.ResponseWriter, r *http.Request) {})
	cases := []struct {
		name, base, key, want string
		requests              int32
	}{
		{"malformed HTTP response", garbage.URL + "/v1", "sk-test-key", garbage.URL + "/v1 did not answer in HTTP (malformed HTTP response", 1},
		{"redirect loop", loop.URL + "/v1", "sk-test-key", loop.URL + "/v1 redirected the request more than 10 times", 10},
		{"https:// to a plain HTTP server", strings.Replace(plain.URL, "http:", "https:", 1) + "/v1", "k",
			strings.Replace(plain.URL, "http:", "https:", 1) + "/v1 answered in plain HTTP; use http:// in the base URL", 0},
		{"invalid port", "http://127.0.0.1:99999/v1", "sk-test-key", `base URL "http://127.0.0.1:99999/v1" has an invalid port`, 0},
		{"key with a control character", plain.URL + "/v1", "sk-abc\x01def", "the API key is malformed: it has a control character at byte 7 of 10; check OPENAI_API_KEY", 0},
		{"key with a newline", plain.URL + "/v1", "sk-abcdef\n", "the API key is malformed: it has a control character at byte 10 of 10", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hits.Store(0)
			client := New(Options{BaseURL: c.base, APIKey: c.key}) // real backoff: a retry would show
			var notices []string
			_, err := client.Open(context.Background(), "m", []Message{{Role: "user", Content: "q"}}, Tools{}, func(n string) { notices = append(notices, n) })
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant   %s", err, c.want)
			}
			if len(notices) > 0 || hits.Load() != c.requests {
				t.Errorf("%d requests, want %d; notices %q", hits.Load(), c.requests, notices)
			}
			if strings.Contains(err.Error(), "abc") {
				t.Errorf("the key is shown: %v", err)
			}
		})
	}
}
