// Package serve is `pyaichat serve`: an HTTP server on the loopback
// interface that runs pyaichat REPLs in PTYs and shows them in an xterm.js
// page over a token-guarded WebSocket. Sessions outlive the page: a
// reload or a lost connection attaches again and replays what it missed.
package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure a Server. Zero values take the defaults below.
type Options struct {
	Token       string        // the per-launch secret (required)
	Command     Command       // what each session runs (required)
	IdleTimeout time.Duration // end a session no client has attached for this long; 0: never
	ReplayBytes int           // output kept per session for replay (default 1 MiB)
	MaxMessage  int           // a larger client message gets an error (default 1 MiB)
	MaxSessions int           // sessions at once (default 64)
	UploadLimit int64         // bytes of dropped files per session (default 100 MiB)
	UploadRoot  string        // where sessions' upload directories go (default a new temp dir)
	// PingInterval is how often a connection is pinged; one that has not
	// answered by the next ping is dropped, so that a page gone without a
	// word (a dropped network, a sleeping laptop) stops holding its
	// sessions from the idle timeout (default 30 s).
	PingInterval time.Duration
	// HandshakeTimeout bounds the wait for a request's headers, and
	// KeepAliveTimeout how long a connection may wait for its next
	// request; MaxConnsPerAddr is how many connections one address may
	// hold besides its authenticated WebSockets (see HTTPServer).
	// Defaults: 5 s, 30 s, 64.
	HandshakeTimeout time.Duration
	KeepAliveTimeout time.Duration
	MaxConnsPerAddr  int
	Log              io.Writer // one line per session start and end (default: nowhere)
	// NextCode, if set, is given the code that replaces one a page has
	// just exchanged for the token (see Code), for a URL to print.
	NextCode func(code string)
}

const (
	defaultReplay      = 1 << 20
	defaultMaxMessage  = 1 << 20
	defaultMaxSessions = 64
	defaultUploadLimit = 100 << 20
	defaultHandshake   = 5 * time.Second
	defaultKeepAlive   = 30 * time.Second
	defaultConnsPerIP  = 64
	// hardReadLimit closes a connection whose message is larger still
	// (the session is not touched; the page reconnects).
	hardReadLimit = 64 << 20
	// outChunk bounds the data of one stdout message.
	outChunk = 256 << 10
	// outHold is how long output that closely follows a stdout message
	// waits to gather more (see pump).
	outHold = 5 * time.Millisecond
	// killGrace is how long a SIGHUPed child has before SIGKILL.
	killGrace = 3 * time.Second
)

// Server holds the sessions and serves the page, the WebSocket and
// uploads.
type Server struct {
	opts    Options
	mux     *http.ServeMux
	ownsDir bool

	mu       sync.Mutex
	sessions map[string]*shell
	closed   bool
	code     string // the one-time code valid now (see login.go)
	// ended remembers why recent sessions ended (the newest maxEnded), so
	// that a page coming back to one learns why it is gone.
	ended      map[string]string
	endedOrder []string
	// pumps counts the goroutines sending sessions' output to pages, so
	// that Close lets them send the exit of each session it ends.
	pumps sync.WaitGroup
}

// maxEnded bounds the ended sessions remembered.
const maxEnded = 1024

// Why a session was ended by the server rather than by its child.
const (
	reasonClosed  = "closed by a page (Restart)"
	reasonStopped = "pyaichat serve stopped"
)

// errSessionGone is a session id the server does not have (any more):
// the page then starts a new session and says why.
type errSessionGone struct{ msg string }

func (e errSessionGone) Error() string { return e.msg }

// orDefault sets *v to def when it is zero or less: an Options field left
// unset.
func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// New checks the options and the embedded web UI and makes a Server.
func New(opts Options) (*Server, error) {
	if len(opts.Token) < 32 {
		return nil, errors.New("serve: the token must have at least 128 bits (32 hex digits)")
	}
	if opts.Command == nil {
		return nil, errors.New("serve: no command for sessions")
	}
	if err := checkAssets(); err != nil {
		return nil, err
	}
	orDefault(&opts.ReplayBytes, defaultReplay)
	orDefault(&opts.MaxMessage, defaultMaxMessage)
	orDefault(&opts.MaxSessions, defaultMaxSessions)
	orDefault(&opts.UploadLimit, defaultUploadLimit)
	orDefault(&opts.PingInterval, 30*time.Second)
	orDefault(&opts.HandshakeTimeout, defaultHandshake)
	orDefault(&opts.KeepAliveTimeout, defaultKeepAlive)
	orDefault(&opts.MaxConnsPerAddr, defaultConnsPerIP)
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	code, err := newCode()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, sessions: map[string]*shell{}, ended: map[string]string{}, code: code}
	if s.opts.UploadRoot == "" {
		dir, err := os.MkdirTemp("", "pyaichat-serve-")
		if err != nil {
			return nil, fmt.Errorf("serve: making the upload directory: %w", err)
		}
		s.opts.UploadRoot, s.ownsDir = dir, true
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /ws", s.serveWS)
	s.mux.HandleFunc("POST /upload/{session}", s.serveUpload)
	s.mux.HandleFunc("GET /sessions", s.serveSessions)
	s.mux.HandleFunc("POST /token", s.serveToken)
	s.mux.Handle("GET /", pageHandler())
	return s, nil
}

// ServeHTTP refuses any request whose Host is not a loopback name (a DNS
// rebinding page's would be its own name), then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		http.Error(w, "serve: requests must name a loopback host", http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// open starts a session of the given size.
func (s *Server) open(cols, rows uint16) (*shell, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the server is shutting down")
	}
	if s.liveLocked() >= s.opts.MaxSessions {
		return nil, fmt.Errorf("too many sessions (%d); close one first", s.opts.MaxSessions)
	}
	sess, err := startShell(s.opts.Command(), cols, rows, s.opts.ReplayBytes, s.opts.UploadRoot)
	if err != nil {
		return nil, err
	}
	s.sessions[sess.id] = sess
	fmt.Fprintf(s.opts.Log, "serve: session %s started (pid %d)\n", sess.id, sess.cmd.Process.Pid)
	go func() {
		<-sess.done
		_, code := sess.exited()
		fmt.Fprintf(s.opts.Log, "serve: session %s exited with status %d\n", sess.id, code)
	}()
	return sess, nil
}

// liveLocked counts the sessions whose child runs (s.mu held): an exited
// one waits for its page, or the idle timeout, to be removed.
func (s *Server) liveLocked() int {
	n := 0
	for _, sess := range s.sessions {
		if done, _ := sess.exited(); !done {
			n++
		}
	}
	return n
}

func (s *Server) lookup(id string) (*shell, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[id]
	if sess != nil {
		return sess, nil
	}
	if why, ok := s.ended[id]; ok {
		return nil, errSessionGone{fmt.Sprintf("no session %q: it has ended (%s)", id, why)}
	}
	return nil, errSessionGone{fmt.Sprintf("no session %q (not one of this server's)", id)}
}

// end removes a session and ends its child, for the reason given.
func (s *Server) end(id, why string) error {
	s.mu.Lock()
	sess := s.sessions[id]
	delete(s.sessions, id)
	if sess != nil {
		s.rememberLocked(id, sess.endedBecause(why))
	}
	s.mu.Unlock()
	if sess == nil {
		return fmt.Errorf("no session %q", id)
	}
	sess.terminate(killGrace)
	return nil
}

// rememberLocked keeps why session id ended (s.mu held).
func (s *Server) rememberLocked(id, why string) {
	s.ended[id] = why
	s.endedOrder = append(s.endedOrder, id)
	if len(s.endedOrder) > maxEnded {
		delete(s.ended, s.endedOrder[0])
		s.endedOrder = s.endedOrder[1:]
	}
}

// attach counts a client showing sess, which stops its idle clock.
func (s *Server) attach(sess *shell) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.attached++
	if sess.idle != nil {
		sess.idle.Stop()
		sess.idle = nil
	}
}

// detach uncounts one; with none left, the idle clock starts.
func (s *Server) detach(sess *shell) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	sess.attached--
	if sess.attached > 0 || s.opts.IdleTimeout <= 0 {
		return
	}
	sess.idle = time.AfterFunc(s.opts.IdleTimeout, func() {
		sess.mu.Lock()
		idle := sess.attached == 0
		sess.mu.Unlock()
		if idle {
			fmt.Fprintf(s.opts.Log, "serve: session %s idle for %v, ending it\n", sess.id, s.opts.IdleTimeout)
			s.end(sess.id, fmt.Sprintf("no page showed it for %v, the idle timeout", s.opts.IdleTimeout))
		}
	})
}

// Close ends every session, waiting up to the kill grace and a little
// more for them to go, and removes the upload directories.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	all := make([]*shell, 0, len(s.sessions))
	for id, sess := range s.sessions {
		all = append(all, sess)
		delete(s.sessions, id)
	}
	s.mu.Unlock()
	for _, sess := range all {
		sess.endedBecause(reasonStopped)
		sess.terminate(killGrace)
	}
	for _, sess := range all {
		select {
		case <-sess.done:
		case <-time.After(killGrace + time.Second):
		}
	}
	pumped := make(chan struct{})
	go func() { s.pumps.Wait(); close(pumped) }()
	select { // a page that reads nothing holds serve up no longer
	case <-pumped:
	case <-time.After(killGrace):
	}
	if s.ownsDir {
		os.RemoveAll(s.opts.UploadRoot)
	}
}

// sessionConfig describes every session this server starts.
func (s *Server) sessionConfig() sessionConfig {
	return sessionConfig{
		Command:            s.opts.Command().Args,
		ReplayBytes:        s.opts.ReplayBytes,
		IdleTimeoutSeconds: s.opts.IdleTimeout.Seconds(),
		UploadLimitBytes:   s.opts.UploadLimit,
		MaxSessions:        s.opts.MaxSessions,
	}
}

// sessionInfo is one session in GET /sessions.
type sessionInfo struct {
	ID       string `json:"id"`
	Attached int    `json:"attached"` // connections showing it
	Exited   bool   `json:"exited"`
	Code     int    `json:"code,omitempty"` // its exit status, once exited
}

// serveSessions lists the sessions for a page holding the token; a page
// also asks it to learn whether its token is still the server's, which a
// refused WebSocket does not tell it (browsers hide the status).
func (s *Server) serveSessions(w http.ResponseWriter, r *http.Request) {
	if s.refuse(w, r, s.bearerToken) {
		return
	}
	s.mu.Lock()
	list := make([]sessionInfo, 0, len(s.sessions))
	for _, sess := range s.sessions {
		list = append(list, sess.info())
	}
	s.mu.Unlock()
	slices.SortFunc(list, func(a, b sessionInfo) int { return strings.Compare(a.ID, b.ID) })
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"sessions": list})
}
