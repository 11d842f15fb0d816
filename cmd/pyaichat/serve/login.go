package serve

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The URL serve prints carries a one-time code, not the token: a browser
// records the URL a tab was opened with (its history, its session files)
// before any script of the page can take it out of the address bar, and
// a code is useless once the page has exchanged it for the token
// (POST /token). One code is valid at a time; using it makes the next,
// which Options.NextCode is given to print.

// newCode makes a code of 128 random bits.
func newCode() (string, error) { return randomHex(16) }

// Code is the code valid now, for the URL to print or open.
func (s *Server) Code() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.code
}

// takeCode reports whether c is the code valid now, and if so replaces it
// with the next one, which it returns.
func (s *Server) takeCode(c string) (next string, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.code == "" || subtle.ConstantTimeCompare([]byte(c), []byte(s.code)) != 1 {
		return "", false, nil
	}
	next, err = newCode()
	if err != nil {
		return "", true, err
	}
	s.code = next
	return next, true, nil
}

// serveToken exchanges the code in the body, {"code"}, for {"token"}.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	if s.refuse(w, r, func(*http.Request) bool { return true }) {
		return
	}
	// The body, a few bytes, comes within the handshake timeout, as the
	// headers did: anyone may send it, slowly too.
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opts.HandshakeTimeout))
	var req struct {
		Code string `json:"code"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil || req.Code == "" {
		http.Error(w, `serve: send {"code": CODE}, the code from the URL serve printed`, http.StatusBadRequest)
		return
	}
	next, ok, err := s.takeCode(req.Code)
	switch {
	case !ok:
		http.Error(w, "serve: this link was used already (each opens one tab) or is not this server's: open the newest URL pyaichat serve printed", http.StatusForbidden)
		return
	case err != nil:
		http.Error(w, "serve: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if s.opts.NextCode != nil {
		s.opts.NextCode(next)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]string{"token": s.opts.Token})
}

// codeURL is the URL to open with code c.
func codeURL(base, c string) string { return fmt.Sprintf("%s#code=%s", base, c) }
