package serve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef"

// newTestServer serves sessions of the command name args over httptest on
// 127.0.0.1.
func newTestServer(t testing.TB, opts Options, name string, args ...string) (*Server, *httptest.Server) {
	t.Helper()
	opts.Token = testToken
	if opts.Command == nil {
		opts.Command = func() *exec.Cmd {
			cmd := exec.Command(name, args...)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "TERM=xterm-256color", "LC_ALL=C.UTF-8"}
			return cmd
		}
	}
	opts.UploadRoot = t.TempDir()
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	hs.Config = srv.HTTPServer() // with its bounds on connections
	hs.Start()
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
	})
	return srv, hs
}

// wsURL is the server's WebSocket address.
func wsURL(hs *httptest.Server) string { return "ws" + strings.TrimPrefix(hs.URL, "http") + "/ws" }

// testClient is a protocol client over a real WebSocket.
type testClient struct {
	t    testing.TB
	conn *websocket.Conn
	ctx  context.Context
	out  map[string]*strings.Builder // stdout by session
	seq  map[string]int64
}

// dial connects with the token and says hello.
func dial(t testing.TB, hs *httptest.Server) *testClient {
	t.Helper()
	c := dialRaw(t, hs)
	c.sendJSON(map[string]any{"type": "hello", "protocolVersion": ProtocolVersion})
	if m := c.next(); m["type"] != "welcome" {
		t.Fatalf("after hello: %v", m)
	}
	return c
}

func dialRaw(t testing.TB, hs *httptest.Server) *testClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	conn, _, err := websocket.Dial(ctx, wsURL(hs), &websocket.DialOptions{
		Subprotocols: []string{Subprotocol, tokenPrefix + testToken},
	})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	conn.SetReadLimit(-1)
	t.Cleanup(func() { conn.CloseNow() })
	return &testClient{t: t, conn: conn, ctx: ctx, out: map[string]*strings.Builder{}, seq: map[string]int64{}}
}

func (c *testClient) sendJSON(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(b)
}

func (c *testClient) sendRaw(b []byte) {
	c.t.Helper()
	if err := c.conn.Write(c.ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next reads one message, recording stdout.
func (c *testClient) next() map[string]any {
	c.t.Helper()
	_, b, err := c.conn.Read(c.ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("server sent %q: %v", b, err)
	}
	if m["type"] == "stdout" {
		id := m["sessionId"].(string)
		data, err := base64.StdEncoding.DecodeString(m["dataBase64"].(string))
		if err != nil {
			c.t.Fatal(err)
		}
		if c.out[id] == nil {
			c.out[id] = &strings.Builder{}
		}
		c.out[id].Write(data)
		c.seq[id] = int64(m["seq"].(float64))
	}
	return m
}

// until reads messages until one of type typ, which it returns.
func (c *testClient) until(typ string) map[string]any {
	c.t.Helper()
	for {
		if m := c.next(); m["type"] == typ {
			return m
		}
	}
}

// untilOutput reads until session id's output contains s.
func (c *testClient) untilOutput(id, s string) {
	c.t.Helper()
	for c.out[id] == nil || !strings.Contains(c.out[id].String(), s) {
		if m := c.next(); m["type"] == "exit" || m["type"] == "error" {
			c.t.Fatalf("waiting for %q: %v; output so far %q", s, m, c.output(id))
		}
	}
}

func (c *testClient) output(id string) string {
	if c.out[id] == nil {
		return ""
	}
	return c.out[id].String()
}

// open starts a session and returns its id.
func (c *testClient) open() string {
	c.t.Helper()
	c.sendJSON(map[string]any{"type": "openSession", "id": 7, "cols": 80, "rows": 24})
	m := c.until("opened")
	if m["id"] != float64(7) {
		c.t.Fatalf("opened answers id %v, want 7", m["id"])
	}
	return m["sessionId"].(string)
}

func (c *testClient) stdin(id, s string) {
	c.t.Helper()
	c.sendJSON(map[string]any{"type": "stdin", "sessionId": id, "dataBase64": base64.StdEncoding.EncodeToString([]byte(s))})
}

// refusedStatus dials with the given subprotocols, URL suffix and Origin
// and returns the HTTP status of the refusal (0 when accepted).
func refusedStatus(t *testing.T, hs *httptest.Server, protocols []string, suffix, origin string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	conn, resp, err := websocket.Dial(ctx, wsURL(hs)+suffix, &websocket.DialOptions{Subprotocols: protocols, HTTPHeader: h})
	if err == nil {
		conn.CloseNow()
		return 0
	}
	if resp == nil {
		t.Fatalf("dial: %v", err)
	}
	return resp.StatusCode
}
