package serve

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// tokenPrefix marks the subprotocol that carries the token: browsers let
// a page set Sec-WebSocket-Protocol, and no other header, on a WebSocket.
const tokenPrefix = "auth.bearer."

// NewToken makes a per-launch token of 192 random bits.
func NewToken() (string, error) { return randomHex(24) }

// CheckLoopbackAddr refuses a listening address that is not on the
// loopback interface.
func CheckLoopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--addr %s is not a loopback address: serve listens on 127.0.0.1 or [::1] only (reach it from another machine through an SSH port forward)", addr)
}

// loopbackHost says whether a Host header names this machine's loopback.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// originAllowed accepts no Origin (a program, not a browser), "null" (an
// embedded webview, a file: page) and http(s) origins on the loopback.
func originAllowed(origin string) bool {
	if origin == "" || origin == "null" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopbackHost(u.Host)
}

// checkToken finds "auth.bearer.<token>" among the offered subprotocols
// and compares it with the server's in constant time.
func (s *Server) checkToken(r *http.Request) bool {
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			p = strings.TrimSpace(p)
			if strings.HasPrefix(p, tokenPrefix) {
				return s.tokenEqual(p[len(tokenPrefix):])
			}
		}
	}
	return false
}

func (s *Server) tokenEqual(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.opts.Token)) == 1
}

// refuse checks a request for the WebSocket or an upload, and answers it
// when refused: any query string (the token must never be in a URL, where
// logs and Referers keep it), a foreign Origin, a missing or wrong token.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, tokenOK func(*http.Request) bool) bool {
	status, msg := refusal(r, tokenOK)
	if status == 0 {
		return false
	}
	// The connection closes after the answer, reading no more: net/http
	// would otherwise read up to 256 KiB of an unread body, which a
	// client can trickle to keep the connection busy, beyond the reach of
	// the cap's eviction of idle ones.
	w.Header().Set("Connection", "close")
	http.NewResponseController(w).SetReadDeadline(time.Now())
	http.Error(w, msg, status)
	return true
}

// refusal is the status and message refusing r, or 0.
func refusal(r *http.Request, tokenOK func(*http.Request) bool) (int, string) {
	switch {
	case r.URL.RawQuery != "":
		return http.StatusBadRequest, "serve: no query string here; the token goes in the Sec-WebSocket-Protocol header as auth.bearer.<token>"
	case !originAllowed(r.Header.Get("Origin")):
		return http.StatusForbidden, "serve: Origin not allowed (only loopback pages and embedded webviews)"
	case !tokenOK(r):
		return http.StatusUnauthorized, "serve: missing or wrong token"
	}
	return 0, ""
}

// bearerToken checks an upload's "Authorization: Bearer <token>".
func (s *Server) bearerToken(r *http.Request) bool {
	t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && s.tokenEqual(t)
}
