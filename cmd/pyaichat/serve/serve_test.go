package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestRefusedWithoutTheRightToken(t *testing.T) {
	_, hs := newTestServer(t, Options{}, "cat")
	good := []string{Subprotocol, tokenPrefix + testToken}
	cases := []struct {
		name      string
		protocols []string
		suffix    string
		origin    string
		want      int
	}{
		{"no token", []string{Subprotocol}, "", "", http.StatusUnauthorized},
		{"wrong token", []string{Subprotocol, tokenPrefix + strings.Repeat("f", len(testToken))}, "", "", http.StatusUnauthorized},
		{"token prefix only", []string{Subprotocol, tokenPrefix + testToken[:10]}, "", "", http.StatusUnauthorized},
		{"token in the query string", []string{Subprotocol}, "?token=" + testToken, "", http.StatusBadRequest},
		{"token in both", good, "?token=" + testToken, "", http.StatusBadRequest},
		{"foreign origin", good, "", "https://evil.example", http.StatusForbidden},
		{"foreign origin naming localhost", good, "", "http://localhost.evil.example", http.StatusForbidden},
		{"file origin", good, "", "file://", http.StatusForbidden},
		{"loopback origin", good, "", "http://127.0.0.1:1234", 0},
		{"localhost origin", good, "", "http://localhost:8080", 0},
		{"ipv6 loopback origin", good, "", "http://[::1]:9", 0},
		{"embedded webview", good, "", "null", 0},
		{"no origin (not a browser)", good, "", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := refusedStatus(t, hs, tc.protocols, tc.suffix, tc.origin); got != tc.want {
				t.Errorf("status %d, want %d (0: accepted)", got, tc.want)
			}
		})
	}
}

// A page that a DNS rebinding attack loads names its own host: refused.
func TestRefusedForAForeignHost(t *testing.T) {
	_, hs := newTestServer(t, Options{}, "cat")
	req, _ := http.NewRequest("GET", hs.URL+"/", nil)
	req.Host = "attacker.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host attacker.example: status %d, want 403", resp.StatusCode)
	}
}

func TestPageHasItsPolicyAndAssets(t *testing.T) {
	if err := checkAssets(); err != nil {
		t.Fatal(err)
	}
	_, hs := newTestServer(t, Options{}, "cat")
	for _, path := range []string{"/", "/app.js", "/style.css", "/vendor/xterm.js", "/vendor/xterm.css", "/vendor/addon-fit.js", "/vendor/addon-unicode11.js", "/vendor/addon-web-links.js", "/vendor/addon-search.js", "/vendor/addon-image.js", "/token.js"} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Errorf("GET %s: %d, %d bytes", path, resp.StatusCode, len(body))
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
		if resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: Referrer-Policy %q", path, resp.Header.Get("Referrer-Policy"))
		}
	}
	resp, err := http.Get(hs.URL + "/vendor/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /vendor/: %d, want no listing", resp.StatusCode)
	}
}

func TestLoopbackAddrOnly(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:8080", "[::1]:0", "127.1.2.3:9"} {
		if err := CheckLoopbackAddr(addr); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:0", ":8080", "[::]:0", "192.168.1.2:80", "example.com:80", "nonsense"} {
		if err := CheckLoopbackAddr(addr); err == nil {
			t.Errorf("%s accepted", addr)
		}
	}
}

func TestHelloFirstAndItsVersion(t *testing.T) {
	_, hs := newTestServer(t, Options{}, "cat")
	c := dialRaw(t, hs)
	c.sendJSON(map[string]any{"type": "openSession", "cols": 80, "rows": 24})
	if m := c.next(); m["type"] != "error" || !strings.Contains(m["message"].(string), "hello") {
		t.Errorf("openSession before hello: %v", m)
	}
	c.sendJSON(map[string]any{"type": "hello", "protocolVersion": 99})
	if m := c.next(); m["type"] != "error" || !strings.Contains(m["message"].(string), "99") {
		t.Errorf("hello of version 99: %v", m)
	}
	c.sendJSON(map[string]any{"type": "hello", "protocolVersion": 1})
	m := c.next()
	if m["type"] != "welcome" || m["protocolVersion"] != float64(1) || !strings.Contains(fmt.Sprint(m["features"]), "replay") {
		t.Errorf("hello: %v", m)
	}
}

// Every client message type, over a shell in a PTY.
func TestEveryMessageType(t *testing.T) {
	_, hs := newTestServer(t, Options{}, "/bin/sh")
	c := dial(t, hs)
	id := c.open()
	c.stdin(id, "echo hi-$((6*7))\n")
	c.untilOutput(id, "hi-42")

	c.sendJSON(map[string]any{"type": "resize", "sessionId": id, "cols": 123, "rows": 45})
	c.stdin(id, "stty size\n")
	c.untilOutput(id, "45 123")

	c.sendJSON(map[string]any{"type": "injectFiles", "sessionId": id, "paths": []string{"/tmp/a b.csv", "/tmp/it's"}})
	c.untilOutput(id, `'/tmp/a b.csv', '/tmp/it\'s'`)
	c.stdin(id, "\x15") // Ctrl-U: the injected text is not run

	lastSeq := c.seq[id]
	c.sendJSON(map[string]any{"type": "attach", "sessionId": id, "lastSeq": lastSeq})
	if m := c.until("opened"); m["sessionId"] != id || int64(m["seq"].(float64)) != lastSeq || m["gap"] != nil {
		t.Errorf("attach at lastSeq %d: %v", lastSeq, m)
	}

	c.sendJSON(map[string]any{"type": "close", "sessionId": id})
	m := c.until("exit")
	if m["sessionId"] != id || m["code"] != float64(128+int(syscall.SIGHUP)) {
		t.Errorf("close: %v, want the status of a SIGHUP", m)
	}
	c.stdin(id, "echo gone\n")
	if m := c.until("error"); !strings.Contains(m["message"].(string), "no session") {
		t.Errorf("stdin to a closed session: %v", m)
	}
}

// Bad input gets an error message; the connection and the session go on.
func TestBadInputLeavesTheSessionWhole(t *testing.T) {
	_, hs := newTestServer(t, Options{MaxMessage: 4096}, "cat")
	c := dial(t, hs)
	id := c.open()
	bad := []struct {
		name string
		send func()
		want string
	}{
		{"malformed JSON", func() { c.sendRaw([]byte(`{"type":`)) }, "malformed"},
		{"not an object", func() { c.sendRaw([]byte(`[1,2]`)) }, "malformed"},
		{"two values", func() { c.sendRaw([]byte(`{"type":"hello"} {}`)) }, "more than one"},
		{"unknown type", func() { c.sendJSON(map[string]any{"type": "exec", "cmd": "rm -rf /"}) }, `unknown message type "exec"`},
		{"oversized", func() {
			c.sendJSON(map[string]any{"type": "stdin", "sessionId": id, "dataBase64": strings.Repeat("QUFB", 2000)})
		}, "more than 4096 bytes"},
		{"binary", func() {
			if err := c.conn.Write(c.ctx, websocket.MessageBinary, []byte{1, 2, 3}); err != nil {
				t.Fatal(err)
			}
		}, "binary"},
		{"bad base64", func() { c.sendJSON(map[string]any{"type": "stdin", "sessionId": id, "dataBase64": "!!"}) }, "dataBase64"},
		{"no session", func() { c.sendJSON(map[string]any{"type": "stdin", "sessionId": "nope", "dataBase64": ""}) }, "no session"},
		{"no sessionId", func() { c.sendJSON(map[string]any{"type": "resize", "cols": 1, "rows": 1}) }, "no sessionId"},
		{"huge size", func() { c.sendJSON(map[string]any{"type": "resize", "sessionId": id, "cols": 100000, "rows": 5}) }, "out of range"},
		{"zero size", func() { c.sendJSON(map[string]any{"type": "openSession", "cols": 0, "rows": 0}) }, "out of range"},
		{"relative path", func() { c.sendJSON(map[string]any{"type": "injectFiles", "sessionId": id, "paths": []string{"a.csv"}}) }, "not absolute"},
		{"control characters in a path", func() {
			c.sendJSON(map[string]any{"type": "injectFiles", "sessionId": id, "paths": []string{"/tmp/a\nprint(1)"}})
		}, "control characters"},
		{"stale lastSeq ahead", func() { c.sendJSON(map[string]any{"type": "attach", "sessionId": id, "lastSeq": 1 << 40}) }, "lastSeq"},
	}
	for _, b := range bad {
		b.send()
		m := c.until("error")
		if !strings.Contains(m["message"].(string), b.want) {
			t.Errorf("%s: error %q, want it to say %q", b.name, m["message"], b.want)
		}
	}
	c.stdin(id, "still here\n")
	c.untilOutput(id, "still here")
}

// The page goes (reload, lost connection); the process and its state do
// not, and a new connection gets what it missed.
func TestAttachReplaysWhatWasMissed(t *testing.T) {
	_, hs := newTestServer(t, Options{}, "/bin/sh")
	c := dial(t, hs)
	id := c.open()
	c.stdin(id, "X=42; echo set-$X\n")
	c.untilOutput(id, "set-42")
	seen := c.seq[id]
	c.conn.Close(websocket.StatusNormalClosure, "")

	// Output while nobody watches.
	d := dial(t, hs)
	d.sendJSON(map[string]any{"type": "attach", "sessionId": id, "lastSeq": seen})
	if m := d.until("opened"); int64(m["seq"].(float64)) != seen {
		t.Fatalf("attach: %v", m)
	}
	d.stdin(id, "echo still-$X\n")
	d.untilOutput(id, "still-42")
	if strings.Contains(d.output(id), "set-42") {
		t.Errorf("attach at lastSeq %d replayed output from before it: %q", seen, d.output(id))
	}
	d.conn.Close(websocket.StatusNormalClosure, "")

	// A reloaded page knows nothing: from 0, everything.
	e := dial(t, hs)
	e.sendJSON(map[string]any{"type": "attach", "sessionId": id, "lastSeq": 0})
	e.until("opened")
	e.untilOutput(id, "still-42")
	if !strings.Contains(e.output(id), "set-42") {
		t.Errorf("attach from 0 did not replay the start: %q", e.output(id))
	}
}

// A client whose lastSeq is older than the bounded buffer gets what is
// kept, told that the rest is gone.
func TestAttachWithAStaleSeq(t *testing.T) {
	_, hs := newTestServer(t, Options{ReplayBytes: 1000}, "/bin/sh")
	c := dial(t, hs)
	id := c.open()
	c.stdin(id, "i=0; while [ $i -lt 2000 ]; do echo line-$i; i=$((i+1)); done; echo done-$i\n")
	c.untilOutput(id, "done-2000")
	c.conn.Close(websocket.StatusNormalClosure, "")

	d := dial(t, hs)
	d.sendJSON(map[string]any{"type": "attach", "sessionId": id, "lastSeq": 10})
	m := d.until("opened")
	from := int64(m["seq"].(float64))
	if m["gap"] != true || from <= 10 {
		t.Fatalf("attach at a forgotten lastSeq: %v, want gap and a later seq", m)
	}
	d.untilOutput(id, "done-2000")
	if n := len(d.output(id)); n > 2*1000 || d.seq[id]-from != int64(n) {
		t.Errorf("replayed %d bytes from %d to %d; want at most twice the bound, contiguous", n, from, d.seq[id])
	}
	if strings.Contains(d.output(id), "line-1\r\n") {
		t.Errorf("replay holds forgotten output")
	}
}

// The child killed under the server: its clients are told, and the
// server goes on.
func TestChildKilledUnderTheServer(t *testing.T) {
	srv, hs := newTestServer(t, Options{}, "/bin/sh")
	c := dial(t, hs)
	id := c.open()
	sess, err := srv.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	c.stdin(id, "echo pid-$$\n")
	c.untilOutput(id, "pid-"+strconv.Itoa(sess.cmd.Process.Pid)) // the shell is the session's child
	syscall.Kill(sess.cmd.Process.Pid, syscall.SIGKILL)
	if m := c.until("exit"); m["code"] != float64(128+9) {
		t.Errorf("exit after SIGKILL: %v", m)
	}
	c.stdin(id, "x")
	if m := c.until("error"); !strings.Contains(m["message"].(string), "exited") {
		t.Errorf("stdin after the child died: %v", m)
	}
	// A page attaching later still gets the output and the status.
	d := dial(t, hs)
	d.sendJSON(map[string]any{"type": "attach", "sessionId": id, "lastSeq": 0})
	d.untilOutput(id, "pid-")
	if m := d.until("exit"); m["code"] != float64(137) {
		t.Errorf("late attach: %v", m)
	}
	other := d.open()
	d.stdin(other, "echo al''ive\n")
	d.untilOutput(other, "alive")
}

// A child that exits leaving a process that holds the terminal open: the
// exit is reported all the same.
func TestExitWithAProcessLeftHoldingThePTY(t *testing.T) {
	srv, hs := newTestServer(t, Options{}, "/bin/sh", "-c", "trap '' HUP; sleep 300 & echo left-behind; exit 5")
	c := dial(t, hs)
	id := c.open()
	sess, err := srv.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-sess.cmd.Process.Pid, syscall.SIGKILL) // the sleep, still in the group
	c.untilOutput(id, "left-behind")
	if m := c.until("exit"); m["code"] != float64(5) {
		t.Errorf("exit: %v, want status 5", m)
	}
}

func TestTwentyConcurrentSessions(t *testing.T) {
	_, hs := newTestServer(t, Options{}, "cat")
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := dial(t, hs)
			id := c.open()
			word := fmt.Sprintf("session-%d-word", i)
			c.stdin(id, word+"\n")
			c.untilOutput(id, word+"\r\n"+word) // the PTY's echo, then cat's copy
			for other := 0; other < 20; other++ {
				if other != i && strings.Contains(c.output(id), fmt.Sprintf("session-%d-word", other)) {
					errs <- fmt.Sprintf("session %d shows session %d's output", i, other)
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// A session no page shows for the idle timeout ends.
func TestIdleSessionEnds(t *testing.T) {
	srv, hs := newTestServer(t, Options{IdleTimeout: 50 * time.Millisecond}, "cat")
	c := dial(t, hs)
	id := c.open()
	sess, _ := srv.lookup(id)
	c.conn.Close(websocket.StatusNormalClosure, "")
	<-sess.done
	if _, err := srv.lookup(id); err == nil {
		t.Errorf("the idle session is still listed")
	}
}

// A page gone without closing its connection (it reads nothing, answers
// no ping) stops holding its session: the idle timeout ends it.
func TestSilentClientIsDropped(t *testing.T) {
	srv, hs := newTestServer(t, Options{IdleTimeout: 50 * time.Millisecond, PingInterval: 50 * time.Millisecond}, "cat")
	c := dial(t, hs)
	id := c.open()
	sess, err := srv.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	select { // the client never reads again, so never answers a ping
	case <-sess.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the session outlived its silent client by 30 s")
	}
	if _, err := srv.lookup(id); err == nil {
		t.Errorf("the session of the silent client is still listed")
	}
}

func TestUploadIntoTheSessionDirectory(t *testing.T) {
	srv, hs := newTestServer(t, Options{UploadLimit: 1000}, "cat")
	c := dial(t, hs)
	id := c.open()
	post := func(name, body, token string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", hs.URL+"/upload/"+id, strings.NewReader(body))
		req.Header.Set("X-File-Name", url.PathEscape(name))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	if resp, _ := post("a.csv", "x", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %d", resp.StatusCode)
	}
	if resp, _ := post("a.csv", "x", strings.Repeat("0", len(testToken))); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", resp.StatusCode)
	}
	resp, body := post("../../etc/data set.csv", "a,b\n1,2\n", testToken)
	var got struct{ Path string }
	if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("upload: %d %q %v", resp.StatusCode, body, err)
	}
	sess, _ := srv.lookup(id)
	if got.Path != filepath.Join(sess.uploadDir, "data set.csv") {
		t.Errorf("stored at %s, want data set.csv in %s", got.Path, sess.uploadDir)
	}
	if b, err := os.ReadFile(got.Path); err != nil || string(b) != "a,b\n1,2\n" {
		t.Errorf("stored %q %v", b, err)
	}
	if resp, body := post("data set.csv", "again", testToken); !strings.Contains(body, "data set-1.csv") {
		t.Errorf("a second file of the same name: %d %q", resp.StatusCode, body)
	}
	if resp, _ := post("big.bin", strings.Repeat("z", 1000), testToken); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("over the limit: %d", resp.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(sess.uploadDir, "big.bin")); err == nil {
		t.Errorf("the refused upload was kept")
	}
	c.sendJSON(map[string]any{"type": "close", "sessionId": id})
	c.until("exit")
	if _, err := os.Stat(sess.uploadDir); !os.IsNotExist(err) {
		t.Errorf("the upload directory outlived its session: %v", err)
	}
}

// Injected paths are pasted as a terminal pastes: bracketed when the
// child asked for it, even when the request came split across reads.
func TestPasteModeFollowsTheChild(t *testing.T) {
	s := &shell{}
	steps := []struct {
		out  string
		want bool
	}{
		{"hello", false},
		{"\x1b[?2004h", true},
		{"text", true},
		{"\x1b[?20", true},
		{"04l", false},
		{"a\x1b[?2004hb\x1b[?2004l", false},
		{"\x1b[?2004l...\x1b[?2004h", true},
	}
	for _, st := range steps {
		s.notePasteMode([]byte(st.out))
		if s.paste != st.want {
			t.Errorf("after %q: paste %v, want %v", st.out, s.paste, st.want)
		}
	}
}

func TestOutputKeepsTheNewestBytes(t *testing.T) {
	o := newOutput(10)
	for i := 0; i < 100; i++ {
		o.write([]byte{byte('a' + i%26)})
	}
	sp := o.since(0, 1000)
	if !sp.gap || sp.seq != 100 || len(sp.data) < 10 || len(sp.data) > 20 || sp.from != 100-int64(len(sp.data)) {
		t.Fatalf("since(0): gap %v from %d seq %d, %d bytes", sp.gap, sp.from, sp.seq, len(sp.data))
	}
	if sp := o.since(95, 1000); sp.gap || !bytes.Equal(sp.data, []byte("rstuv")) {
		t.Errorf("since(95): %q gap %v", sp.data, sp.gap)
	}
	if sp := o.since(95, 2); string(sp.data) != "rs" || sp.seq != 97 {
		t.Errorf("since(95) of 2: %q %d", sp.data, sp.seq)
	}
}

// A fast stream of small writes (one per line, as on a terminal) is held
// and gathered into larger messages: every byte still arrives once, in
// order, each message's seq counts exactly the bytes before it, and the
// exit comes after the last of them.
func TestFastOutputArrivesWholeAndInOrder(t *testing.T) {
	_, hs := newTestServer(t, Options{}, "/bin/sh", "-c", "seq 1 30000; exit 3")
	c := dial(t, hs)
	id := c.open()
	var got int64
	for {
		m := c.next()
		if m["type"] == "exit" {
			if m["code"] != float64(3) {
				t.Errorf("exit: %v, want status 3", m)
			}
			break
		}
		if m["type"] == "stdout" {
			if m["gap"] == true {
				t.Fatalf("a gap in %d bytes of output: %v", got, m)
			}
			got = int64(len(c.output(id)))
			if c.seq[id] != got {
				t.Fatalf("stdout seq %d after %d bytes", c.seq[id], got)
			}
		}
	}
	var want strings.Builder
	for i := 1; i <= 30000; i++ {
		fmt.Fprintf(&want, "%d\r\n", i)
	}
	if out := c.output(id); out != want.String() {
		t.Errorf("output: %d bytes, want %d; it ends %q", len(out), want.Len(), out[max(0, len(out)-40):])
	}
}

// A client written to the protocol's first draft: the token alone as the
// subprotocol, protocolVersion as the string "1.0", sessionConfig read
// from welcome, and updateSessionConfig, which the server refuses.
func TestFirstDraftClient(t *testing.T) {
	_, hs := newTestServer(t, Options{IdleTimeout: time.Minute, UploadLimit: 5000}, "cat")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	draftProtocol := tokenPrefix + testToken
	conn, _, err := websocket.Dial(ctx, wsURL(hs), &websocket.DialOptions{Subprotocols: []string{draftProtocol}})
	if err != nil {
		t.Fatalf("dial with the token alone as subprotocol: %v", err)
	}
	defer conn.CloseNow()
	if got := conn.Subprotocol(); got != draftProtocol {
		t.Errorf("selected subprotocol %q, want the one offered", got)
	}
	c := &testClient{t: t, conn: conn, ctx: ctx, out: map[string]*strings.Builder{}, seq: map[string]int64{}}
	for _, bad := range []string{`"2.0"`, `"1.0.0"`, `"one"`, `2`, `null`} {
		c.sendRaw([]byte(`{"type":"hello","protocolVersion":` + bad + `}`))
		if m := c.next(); m["type"] != "error" || !strings.Contains(m["message"].(string), "speaks 1") {
			t.Errorf("hello of version %s: %v", bad, m)
		}
	}
	c.sendRaw([]byte(`{"type":"hello","protocolVersion":"1.0"}`))
	m := c.next()
	if m["type"] != "welcome" {
		t.Fatalf("hello of version \"1.0\": %v", m)
	}
	cfg, _ := m["sessionConfig"].(map[string]any)
	if fmt.Sprint(cfg["command"]) != "[cat]" || cfg["idleTimeoutSeconds"] != float64(60) ||
		cfg["uploadLimitBytes"] != float64(5000) || cfg["mutable"] != false {
		t.Errorf("welcome's sessionConfig: %v", m["sessionConfig"])
	}
	id := c.open()
	c.sendRaw([]byte(`{"type":"updateSessionConfig","id":3,"sessionId":"` + id + `","sessionConfig":{"command":["/bin/sh"]}}`))
	m = c.until("error")
	if msg, _ := m["message"].(string); !strings.Contains(msg, "fixed by the server") || m["id"] != float64(3) {
		t.Errorf("updateSessionConfig: %v", m)
	}
	c.stdin(id, "draft-ok\n")
	c.untilOutput(id, "draft-ok\r\ndraft-ok") // the session is cat all the same
	// A number works as well, on a connection of its own.
	d := dialRaw(t, hs)
	d.sendRaw([]byte(`{"type":"hello","protocolVersion":1.0}`))
	if m := d.next(); m["type"] != "welcome" {
		t.Errorf("hello of version 1.0 (a number): %v", m)
	}
}

// GET /sessions lists the sessions to a holder of the token, and refuses
// anyone else: a page asks it to learn whether its token still holds.
func TestSessionList(t *testing.T) {
	_, hs := newTestServer(t, Options{}, "cat")
	get := func(token string) (int, string) {
		req, _ := http.NewRequest("GET", hs.URL+"/sessions", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code, _ := get(strings.Repeat("0", len(testToken))); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", code)
	}
	c := dial(t, hs)
	id := c.open()
	code, body := get(testToken)
	var list struct {
		Sessions []sessionInfo `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || code != http.StatusOK {
		t.Fatalf("GET /sessions: %d %q %v", code, body, err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].ID != id || list.Sessions[0].Attached != 1 || list.Sessions[0].Exited {
		t.Errorf("GET /sessions: %+v, want session %s attached once", list.Sessions, id)
	}
}

// A session the server ends says why: to the pages showing it (exit's
// reason), and to a page that comes back to it later (an error with
// sessionGone). An exited session no longer counts against the limit.
func TestEndedSessionSaysWhy(t *testing.T) {
	srv, hs := newTestServer(t, Options{IdleTimeout: 50 * time.Millisecond, MaxSessions: 2}, "cat")
	a := dial(t, hs)
	id := a.open()
	b := dial(t, hs)
	b.sendJSON(map[string]any{"type": "attach", "sessionId": id, "lastSeq": 0})
	b.until("opened")
	a.sendJSON(map[string]any{"type": "close", "sessionId": id})
	if m := b.until("exit"); m["reason"] != reasonClosed {
		t.Errorf("exit for the other page: %v, want the reason %q", m, reasonClosed)
	}
	b.sendJSON(map[string]any{"type": "attach", "sessionId": id, "lastSeq": 0})
	if m := b.until("error"); m["sessionGone"] != true || !strings.Contains(m["message"].(string), reasonClosed) {
		t.Errorf("attach to the closed session: %v", m)
	}

	idle := a.open()
	sess, _ := srv.lookup(idle)
	a.conn.Close(websocket.StatusNormalClosure, "")
	<-sess.done
	c := dial(t, hs)
	c.sendJSON(map[string]any{"type": "attach", "sessionId": idle, "lastSeq": 0})
	if m := c.until("error"); m["sessionGone"] != true || !strings.Contains(m["message"].(string), "idle timeout") {
		t.Errorf("attach to the session ended when idle: %v", m)
	}

	// Two sessions whose child exited, still listed, leave room for two more.
	for i := 0; i < 2; i++ {
		done := c.open()
		c.stdin(done, "\x04")
		if m := c.until("exit"); m["reason"] != nil {
			t.Errorf("a child that exited by itself: exit %v, want no reason", m)
		}
	}
	c.open()
	c.open()
	c.sendJSON(map[string]any{"type": "openSession", "id": 9, "cols": 80, "rows": 24})
	if m := c.until("error"); !strings.Contains(m["message"].(string), "too many sessions") || m["id"] != float64(9) {
		t.Errorf("a third running session: %v", m)
	}

	srv.Close()
	if m := c.until("exit"); m["reason"] != reasonStopped {
		t.Errorf("exit when the server stops: %v", m)
	}
}

// Every page showing a session is told its size: when it starts showing
// it, and when any page changes it.
func TestResizedGoesToEveryPage(t *testing.T) {
	_, hs := newTestServer(t, Options{}, "cat")
	a := dial(t, hs)
	id := a.open()
	if m := a.until("resized"); m["cols"] != float64(80) || m["rows"] != float64(24) {
		t.Errorf("the size the opening page is told: %v", m)
	}
	b := dial(t, hs)
	b.sendJSON(map[string]any{"type": "attach", "sessionId": id, "lastSeq": 0})
	if m := b.until("resized"); m["cols"] != float64(80) {
		t.Errorf("the size an attaching page is told: %v", m)
	}
	b.sendJSON(map[string]any{"type": "resize", "sessionId": id, "cols": 100, "rows": 30})
	if m := a.until("resized"); m["cols"] != float64(100) || m["rows"] != float64(30) || m["sessionId"] != id {
		t.Errorf("the other page is told %v, want 100x30", m)
	}
}

// The URL to open carries a one-time code: POST /token exchanges it for
// the token once, and the next code, handed to NextCode, works in turn.
func TestOneTimeCode(t *testing.T) {
	next := make(chan string, 2)
	srv, hs := newTestServer(t, Options{NextCode: func(c string) { next <- c }}, "cat")
	exchange := func(code, origin string) (int, string) {
		req, _ := http.NewRequest("POST", hs.URL+"/token", strings.NewReader(`{"code":"`+code+`"}`))
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	first := srv.Code()
	if len(first) != 32 {
		t.Fatalf("code %q, want 128 bits in hex", first)
	}
	if code, _ := exchange(first, "https://evil.example"); code != http.StatusForbidden {
		t.Errorf("an exchange from a foreign origin: %d", code)
	}
	if code, body := exchange(strings.Repeat("0", 32), ""); code != http.StatusForbidden || !strings.Contains(body, "newest URL") {
		t.Errorf("a wrong code: %d %q", code, body)
	}
	code, body := exchange(first, hs.URL)
	if code != http.StatusOK || !strings.Contains(body, `"token":"`+testToken+`"`) {
		t.Fatalf("the code: %d %q", code, body)
	}
	if code, body := exchange(first, hs.URL); code != http.StatusForbidden || !strings.Contains(body, "used already") {
		t.Errorf("the code again: %d %q", code, body)
	}
	second := <-next
	if second == first || second != srv.Code() {
		t.Errorf("the next code %q (the first %q, now %q)", second, first, srv.Code())
	}
	if code, _ := exchange(second, ""); code != http.StatusOK {
		t.Errorf("the next code: %d", code)
	}
}
