package serve

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// HTTPServer is the http.Server for s, with the bounds on connections
// that have not shown the token: a request's headers must come within the
// handshake timeout, a keep-alive connection waiting for its next request
// is closed after the keep-alive timeout, and one address holds at most
// MaxConnsPerAddr of them. A WebSocket that showed the token is no longer
// counted: it is the page's, and the pings look after it.
func (s *Server) HTTPServer() *http.Server {
	conns := newConnLimit(s.opts.MaxConnsPerAddr)
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.opts.HandshakeTimeout,
		IdleTimeout:       s.opts.KeepAliveTimeout,
		ConnState:         conns.track,
	}
}

// connLimit counts each address's connections that have not become an
// authenticated WebSocket.
type connLimit struct {
	max    int
	mu     sync.Mutex
	conns  map[net.Conn]*trackedConn
	byAddr map[string]int
}

type trackedConn struct {
	addr    string
	waiting bool      // no request under way: new, or idle between requests
	since   time.Time // when it began waiting
}

func newConnLimit(max int) *connLimit {
	return &connLimit{max: max, conns: map[net.Conn]*trackedConn{}, byAddr: map[string]int{}}
}

// track is the http.Server's ConnState hook. A connection past the cap
// makes room by closing the address's connection that has waited longest
// without a request under way (a browser's spare or a flood's), so that
// a page can still connect while idle connections fill the cap; when
// every one is busy, the new one is closed instead.
func (l *connLimit) track(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch state {
	case http.StateNew:
		addr := remoteHost(c)
		if l.byAddr[addr] >= l.max && !l.evictLocked(addr) {
			c.Close() // its serve loop then reports StateClosed, unknown here
			return
		}
		l.conns[c] = &trackedConn{addr: addr, waiting: true, since: time.Now()}
		l.byAddr[addr]++
	case http.StateActive:
		if tc := l.conns[c]; tc != nil {
			tc.waiting = false
		}
	case http.StateIdle:
		if tc := l.conns[c]; tc != nil {
			tc.waiting, tc.since = true, time.Now()
		}
	case http.StateHijacked, http.StateClosed:
		l.forgetLocked(c)
	}
}

// evictLocked closes addr's connection that has waited longest, and
// reports whether there was one.
func (l *connLimit) evictLocked(addr string) bool {
	var oldest net.Conn
	var since time.Time
	for c, tc := range l.conns {
		if tc.addr == addr && tc.waiting && (oldest == nil || tc.since.Before(since)) {
			oldest, since = c, tc.since
		}
	}
	if oldest == nil {
		return false
	}
	l.forgetLocked(oldest)
	oldest.Close()
	return true
}

func (l *connLimit) forgetLocked(c net.Conn) {
	tc := l.conns[c]
	if tc == nil {
		return
	}
	delete(l.conns, c)
	if l.byAddr[tc.addr]--; l.byAddr[tc.addr] <= 0 {
		delete(l.byAddr, tc.addr)
	}
}

// remoteHost is the address a connection comes from, without its port.
func remoteHost(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.RemoteAddr().String()
}
