package serve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hangBound bounds a wait for something the server must do; it is no
// measure of speed.
const hangBound = 30 * time.Second

// rawConn opens a TCP connection to the server that says nothing yet.
func rawConn(t *testing.T, hs *httptest.Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByServer waits until the server has closed c, and reports
// whether it did within the bound.
func closedByServer(c net.Conn, bound time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(bound))
	_, err := io.Copy(io.Discard, c) // returns at EOF or a reset
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// A connection that sends no request, and a keep-alive connection that
// sends no next one, are closed by the server.
func TestSilentConnectionsAreClosed(t *testing.T) {
	_, hs := newTestServer(t, Options{HandshakeTimeout: 200 * time.Millisecond, KeepAliveTimeout: 200 * time.Millisecond}, "cat")
	silent := rawConn(t, hs)
	half := rawConn(t, hs)
	fmt.Fprintf(half, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n") // the headers never end
	kept := rawConn(t, hs)
	fmt.Fprintf(kept, "GET /favicon.svg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(kept), nil)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("a keep-alive request: %v %v", resp, err)
	}
	resp.Body.Close()
	for name, c := range map[string]net.Conn{"a silent connection": silent, "unfinished headers": half, "an idle keep-alive connection": kept} {
		if !closedByServer(c, hangBound) {
			t.Errorf("%s is still open after %v", name, hangBound)
		}
	}
}

// One address holds at most MaxConnsPerAddr connections that have not
// become an authenticated WebSocket: a flood of silent ones neither keeps
// the page from loading and connecting nor takes its WebSocket away.
func TestConnectionsPerAddressAreCapped(t *testing.T) {
	const limit = 8
	_, hs := newTestServer(t, Options{MaxConnsPerAddr: limit, HandshakeTimeout: time.Hour, KeepAliveTimeout: time.Hour}, "cat")
	page := dial(t, hs)
	id := page.open()
	var flood []net.Conn
	for i := 0; i < 5*limit; i++ {
		flood = append(flood, rawConn(t, hs))
	}
	// The page loads and a second WebSocket connects, past the flood.
	resp, err := http.Get(hs.URL + "/")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the page behind %d silent connections: %v %v", len(flood), resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	second := dial(t, hs)
	second.sendJSON(map[string]any{"type": "attach", "sessionId": id, "lastSeq": 0})
	second.until("opened")
	// Of the flood, no more than the cap is left open.
	var closed sync.WaitGroup
	var mu sync.Mutex
	open := 0
	for _, c := range flood {
		closed.Add(1)
		go func(c net.Conn) {
			defer closed.Done()
			// One left open times out quickly here; one the server closed
			// reads EOF at once.
			if !closedByServer(c, time.Second) {
				mu.Lock()
				open++
				mu.Unlock()
			}
		}(c)
	}
	closed.Wait()
	if open > limit {
		t.Errorf("%d of %d silent connections are open, want at most %d", open, len(flood), limit)
	}
	// The first page's WebSocket still works.
	page.stdin(id, "still-here\n")
	page.untilOutput(id, "still-here\r\nstill-here")
}

// uploadReq posts body as name to session id's uploads with the token.
func uploadReq(t *testing.T, hs *httptest.Server, id, name string, body io.Reader) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", hs.URL+"/upload/"+id, body)
	req.Header.Set("X-File-Name", url.PathEscape(name))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The upload limit holds for a session's uploads together, also when
// they run at once: each is under way (its file made) before any sends
// the rest of its body.
func TestUploadLimitIsForTheSessionsUploadsTogether(t *testing.T) {
	const limit, each, uploads = 1000, 900, 8
	srv, hs := newTestServer(t, Options{UploadLimit: limit}, "cat")
	c := dial(t, hs)
	id := c.open()
	sess, _ := srv.lookup(id)
	var wg sync.WaitGroup
	writers := make([]*io.PipeWriter, uploads)
	codes := make([]int, uploads)
	for i := range writers {
		pr, pw := io.Pipe()
		writers[i] = pw
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			codes[i], _ = uploadReq(t, hs, id, fmt.Sprintf("part%d.bin", i), pr)
			pr.Close() // a refused upload's rest has nowhere to go
		}(i)
		pw.Write([]byte("x")) // a body is under way
	}
	deadline := time.Now().Add(hangBound)
	for {
		entries, _ := os.ReadDir(sess.uploadDir)
		if len(entries) >= uploads-1 || time.Now().After(deadline) {
			break // every upload but perhaps a refused one has begun
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, pw := range writers {
		pw.Write([]byte(strings.Repeat("x", each-1)))
		pw.Close()
	}
	wg.Wait()
	var stored int64
	entries, _ := os.ReadDir(sess.uploadDir)
	for _, e := range entries {
		info, _ := e.Info()
		stored += info.Size()
	}
	if stored > limit {
		t.Errorf("%d bytes stored for the session, over its limit of %d (statuses %v)", stored, limit, codes)
	}
	refused := 0
	for _, code := range codes {
		if code == http.StatusRequestEntityTooLarge {
			refused++
		}
	}
	if refused < uploads-1 {
		t.Errorf("%d of %d uploads of %d bytes refused under a limit of %d, want %d (statuses %v)", refused, uploads, each, limit, uploads-1, codes)
	}
	// The refused uploads' bytes are given back: a small one fits.
	if code, body := uploadReq(t, hs, id, "small.txt", strings.NewReader("ok")); code != http.StatusOK {
		t.Errorf("a small upload after the refused ones: %d %s", code, body)
	}
}

// An upload to a session whose child has exited is refused and leaves
// nothing on the disk.
func TestUploadToAnExitedSessionIsRefused(t *testing.T) {
	srv, hs := newTestServer(t, Options{}, "cat")
	c := dial(t, hs)
	id := c.open()
	sess, _ := srv.lookup(id)
	if code, body := uploadReq(t, hs, id, "before.txt", strings.NewReader("a")); code != http.StatusOK {
		t.Fatalf("upload while the session runs: %d %s", code, body)
	}
	c.stdin(id, "\x04") // cat ends at end of file
	c.until("exit")
	<-sess.done
	code, body := uploadReq(t, hs, id, "after.txt", strings.NewReader("b"))
	if code != http.StatusGone || !strings.Contains(body, "exited") {
		t.Errorf("upload to the exited session: %d %q, want 410 saying it exited", code, body)
	}
	if _, err := os.Stat(sess.uploadDir); !os.IsNotExist(err) {
		t.Errorf("the exited session's upload directory exists: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(sess.uploadDir)); len(entries) != 0 {
		t.Errorf("the upload root holds %d entries after the only session exited", len(entries))
	}
}

// deadlineRecorder is a ResponseWriter that records the write deadline
// a handler sets.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadline time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error { d.deadline = t; return nil }

// The page's files are written within a deadline: a client that reads
// nothing does not keep its connection busy for good.
func TestPageFilesHaveAWriteDeadline(t *testing.T) {
	rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	req := httptest.NewRequest("GET", "/vendor/xterm.js", nil)
	before := time.Now()
	pageHandler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /vendor/xterm.js: %d", rec.Code)
	}
	if rec.deadline.Before(before) || rec.deadline.After(before.Add(pageWriteTimeout+time.Minute)) {
		t.Errorf("write deadline %v, want about %v from %v", rec.deadline, pageWriteTimeout, before)
	}
}

// A refused request whose body a client trickles does not keep its
// connection: the server answers and closes it, reading none of the body.
func TestRefusedRequestDoesNotWaitForItsBody(t *testing.T) {
	_, hs := newTestServer(t, Options{}, "cat")
	c := rawConn(t, hs)
	fmt.Fprintf(c, "POST /upload/none HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\nX-File-Name: a\r\n\r\nab")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an upload without the token: %v %v", resp, err)
	}
	if !closedByServer(c, hangBound) {
		t.Errorf("the connection is still open after %v, waiting for the body", hangBound)
	}
}

// POST /token, which needs no token, takes its body within the handshake
// timeout: one trickled does not keep the connection.
func TestCodeExchangeBodyIsBounded(t *testing.T) {
	_, hs := newTestServer(t, Options{HandshakeTimeout: 200 * time.Millisecond}, "cat")
	c := rawConn(t, hs)
	fmt.Fprintf(c, "POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{\"co")
	if !closedByServer(c, hangBound) {
		t.Errorf("the connection is still open after %v, waiting for the body", hangBound)
	}
}
