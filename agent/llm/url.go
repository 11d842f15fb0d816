package llm

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// DisplayURL is a base URL as it may be shown: without userinfo, query or
// fragment, and with any control characters made visible. A URL that does
// not parse is trimmed by hand the same way.
func DisplayURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return termsafe.Visible(roughURL(raw))
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return termsafe.Visible(strings.TrimRight(u.String(), "/"))
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

// CheckKey rejects a key that no server can accept: net/http refuses to
// send a header with a control character in it (a stray newline from a
// key file is the usual one), and its error blames the connection. The
// message says where the character is, never what the key is, and tells
// to check hint (Options.KeyHint).
func CheckKey(key, hint string) error {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("the API key is malformed: it has a control character at byte %d of %d; check %s", i+1, len(key), keyHint(hint))
		}
	}
	return nil
}

// CheckBaseURL finds a base URL that can never work, before any request
// (the agent's LoadConfig calls it at start-up, Open before each request).
// Its messages show the URL as DisplayURL does, never its userinfo or
// query, and never Go's url.Error, which repeats the raw string (key and
// all).
func CheckBaseURL(base string) error {
	u, err := url.Parse(base)
	// Without a scheme, host:port/v1 fails to parse ("first path segment
	// in URL cannot contain colon"), which hides what is missing.
	if err != nil && !strings.Contains(base, "://") {
		return fmt.Errorf("base URL %s must start with http:// or https://", quotedURL(base))
	}
	if err != nil {
		return fmt.Errorf("base URL %s is malformed: %s", quotedURL(base), urlProblem(err))
	}
	// url.Parse lowers the scheme: HTTP:// is http://, as RFC 3986 says.
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("base URL %s must start with http:// or https://", quotedURL(base))
	}
	if u.Host == "" {
		return fmt.Errorf("base URL %s has no host", quotedURL(base))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("base URL %s has an invalid port (%s; ports are 1-65535)", quotedURL(base), termsafe.OneLine(p, 20))
		}
	}
	return nil
}

// quotedURL quotes DisplayURL's form by hand: %q would escape the
// backslashes visible already wrote.
func quotedURL(base string) string { return `"` + DisplayURL(base) + `"` }

// urlProblem is what url.Parse found wrong, without the URL it repeats.
func urlProblem(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return termsafe.OneLine(err.Error(), 80)
}

// keyHint is what to check about a key: hint, or OPENAI_API_KEY, where
// the key comes from when nobody said otherwise.
func keyHint(hint string) string {
	if hint == "" {
		return "OPENAI_API_KEY"
	}
	return hint
}
