package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// serveConn is what `pyaichat serve --print-conn-json` prints.
type serveConn struct {
	Port   int    `json:"port"`
	Token  string `json:"token"`
	UIBase string `json:"uiBase"`
	pid    int
}

// startServe runs `pyaichat serve --print-conn-json [flags] -- args` with
// home as its HOME and working directory, and stops it (SIGTERM, which
// ends its sessions) when the test ends.
func startServe(tb testing.TB, home string, flags []string, args ...string) serveConn {
	tb.Helper()
	argv := append([]string{"serve", "--print-conn-json"}, flags...)
	cmd := exec.Command(binary, append(append(argv, "--"), args...)...)
	cmd.Env = testEnv(home, "")
	cmd.Dir = home
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			tb.Errorf("pyaichat serve did not stop within 10 s of SIGTERM")
		}
	})
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		tb.Fatalf("pyaichat serve printed no connection line: %v; stderr %q", err, stderr.String())
	}
	var c serveConn
	if err := json.Unmarshal(line, &c); err != nil || c.Port == 0 || len(c.Token) < 32 || c.UIBase == "" {
		tb.Fatalf("connection line %q: %v", line, err)
	}
	c.pid = cmd.Process.Pid
	return c
}

// serveClient speaks the protocol over a real WebSocket.
type serveClient struct {
	tb   testing.TB
	conn *websocket.Conn
	ctx  context.Context
	out  []byte // the session's output
	seq  int64
	id   string
}

func dialServe(tb testing.TB, c serveConn) *serveClient {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	tb.Cleanup(cancel)
	conn, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d/ws", c.Port), &websocket.DialOptions{
		Subprotocols: []string{"pyaichat.v1", "auth.bearer." + c.Token},
	})
	if err != nil {
		tb.Fatalf("dial: %v", err)
	}
	conn.SetReadLimit(-1)
	tb.Cleanup(func() { conn.CloseNow() })
	s := &serveClient{tb: tb, conn: conn, ctx: ctx}
	s.send(map[string]any{"type": "hello", "protocolVersion": 1})
	s.until("welcome")
	return s
}

func (s *serveClient) send(v any) {
	s.tb.Helper()
	b, _ := json.Marshal(v)
	if err := s.conn.Write(s.ctx, websocket.MessageText, b); err != nil {
		s.tb.Fatalf("write: %v", err)
	}
}

// next reads a message, keeping stdout's data.
func (s *serveClient) next() map[string]any {
	s.tb.Helper()
	_, b, err := s.conn.Read(s.ctx)
	if err != nil {
		s.tb.Fatalf("read: %v; output ends %q", err, s.tail())
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		s.tb.Fatalf("%q: %v", b, err)
	}
	switch m["type"] {
	case "stdout":
		data, _ := base64.StdEncoding.DecodeString(m["dataBase64"].(string))
		s.out = append(s.out, data...)
		s.seq = int64(m["seq"].(float64))
	case "error":
		s.tb.Fatalf("server error: %v", m["message"])
	}
	return m
}

func (s *serveClient) until(typ string) map[string]any {
	s.tb.Helper()
	for {
		if m := s.next(); m["type"] == typ {
			return m
		}
	}
}

// waitFor reads until want appears in the output after offset from; it
// returns the offset after it.
func (s *serveClient) waitFor(from int, want string) int {
	s.tb.Helper()
	for {
		if i := bytes.Index(s.out[from:], []byte(want)); i >= 0 {
			return from + i + len(want)
		}
		if m := s.next(); m["type"] == "exit" {
			s.tb.Fatalf("exited (%v) waiting for %q; output ends %q", m["code"], want, s.tail())
		}
	}
}

func (s *serveClient) tail() string { return string(s.out[max(0, len(s.out)-400):]) }

func (s *serveClient) open() {
	s.tb.Helper()
	s.send(map[string]any{"type": "openSession", "id": 1, "cols": 100, "rows": 30})
	s.id = s.until("opened")["sessionId"].(string)
}

func (s *serveClient) attach(id string, lastSeq int64) map[string]any {
	s.tb.Helper()
	s.id = id
	s.send(map[string]any{"type": "attach", "sessionId": id, "lastSeq": lastSeq})
	return s.until("opened")
}

func (s *serveClient) keys(k string) {
	s.tb.Helper()
	s.send(map[string]any{"type": "stdin", "sessionId": s.id, "dataBase64": base64.StdEncoding.EncodeToString([]byte(k))})
}

// The real pyaichat behind the WebSocket: py> and ai>, Ctrl-C, and a
// session that outlives its connection with its variables.
func TestServeRunsPyaichat(t *testing.T) {
	home := t.TempDir()
	srv := startServe(t, home, nil, "-q")
	c := dialServe(t, srv)
	c.open()
	off := c.waitFor(0, "py> ")
	c.keys("x = 6 * 7\r")
	off = c.waitFor(off, "py> ")
	c.keys("x\r")
	off = c.waitFor(off, "42\r\n")
	off = c.waitFor(off, "py> ")
	c.keys("\t")
	off = c.waitFor(off, "ai> ")
	c.keys("\t")
	off = c.waitFor(off, "py> ")
	// Ctrl-C once the code runs (and the terminal is cooked): the marker
	// is printed from inside it.
	c.keys("import time; print('sleep' + 'ing'); time.sleep(60)\r")
	off = c.waitFor(off, "sleeping")
	c.keys("\x03")
	off = c.waitFor(off, "KeyboardInterrupt")
	c.waitFor(off, "py> ")
	id, seen := c.id, c.seq
	c.conn.Close(websocket.StatusNormalClosure, "")

	// Another connection, as after a reload: the same process, x still 42,
	// and from lastSeq only what came after.
	d := dialServe(t, srv)
	if m := d.attach(id, seen); int64(m["seq"].(float64)) != seen {
		t.Fatalf("attach at %d: %v", seen, m)
	}
	d.keys("print(x + 1)\r")
	off = d.waitFor(0, "43\r\n")
	d.waitFor(off, "py> ")
	if strings.Contains(string(d.out), "KeyboardInterrupt") {
		t.Errorf("the replay from lastSeq repeated older output: %q", d.out)
	}
	d.keys("raise SystemExit(3)\r")
	if m := d.until("exit"); m["code"] != float64(3) {
		t.Errorf("exit: %v, want status 3", m)
	}
}

func TestServeRefusesANonLoopbackAddr(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--addr", "0.0.0.0:0")
	cmd.Env = testEnv(t.TempDir(), "")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("serve --addr 0.0.0.0:0: %v, want exit status 1", err)
	}
	msg := strings.TrimSpace(string(out))
	if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "not a loopback address") {
		t.Errorf("message %q, want one line saying it is not loopback", msg)
	}
}

// Without --print-conn-json, serve prints the URL to open with a one-time
// code in its fragment, which the page exchanges for the token (POST
// /token); once used, the code is refused and serve prints the next URL.
// The token appears nowhere: not in its output, not in its log of
// sessions on stderr.
func TestServePrintsTheURLAndKeepsTheTokenOutOfItsLog(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(binary, "serve", "--", "-q")
	cmd.Env = testEnv(home, "")
	cmd.Dir = home
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewReader(out)
	line, err := lines.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^pyaichat serve: open http://127\.0\.0\.1:(\d+)/#code=([0-9a-f]{32})\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q, want the URL with a 128-bit code in its fragment", line)
	}
	port, _ := strconv.Atoi(m[1])
	status, token := exchangeCode(t, port, m[2])
	if status != 200 || len(token) != 48 {
		t.Fatalf("exchanging the code: %d %q", status, token)
	}
	if status, _ := exchangeCode(t, port, m[2]); status != 403 {
		t.Errorf("the code exchanged again: %d, want 403", status)
	}
	line, err = lines.ReadString('\n')
	next := regexp.MustCompile(`^pyaichat serve: that link has been used; for another tab open http://127\.0\.0\.1:\d+/#code=([0-9a-f]{32})\n$`).FindStringSubmatch(line)
	if err != nil || next == nil || next[1] == m[2] {
		t.Fatalf("after the code was used serve printed %q (%v), want the next URL", line, err)
	}
	if status, again := exchangeCode(t, port, next[1]); status != 200 || again != token {
		t.Errorf("the next code: %d %q", status, again)
	}
	c := dialServe(t, serveConn{Port: port, Token: token})
	c.open()
	c.waitFor(0, "py> ")
	c.keys("raise SystemExit(0)\r")
	c.until("exit")
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v", err)
	}
	if !strings.Contains(stderr.String(), "started") || strings.Contains(stderr.String(), token) {
		t.Errorf("stderr %q: want the session's start, and never the token", stderr.String())
	}
}

// exchangeCode posts a one-time code to serve on port, as its page does,
// and returns the status and the token it got.
func exchangeCode(t *testing.T, port int, code string) (int, string) {
	t.Helper()
	resp, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/token", port), "application/json", strings.NewReader(`{"code":"`+code+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct{ Token string }
	json.NewDecoder(resp.Body).Decode(&got)
	return resp.StatusCode, got.Token
}

// startServeOpen runs `pyaichat serve --open -- -q` with a stand-in for
// xdg-open that records its argument and what it was given to read. It
// returns the printed URL, the file the opener got, a copy of that file
// as the opener read it, and the running serve.
func startServeOpen(t *testing.T, home string) (url, opened, seen string, cmd *exec.Cmd) {
	t.Helper()
	bin := filepath.Join(home, "bin")
	got := filepath.Join(home, "opened")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ncp -p \"$1\" " + got + ".page && stat -c %a \"$(dirname \"$1\")\" > " + got + ".dirmode && " +
		"printf '%s' \"$*\" > " + got + ".tmp && mv " + got + ".tmp " + got + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(binary, "serve", "--open", "--", "-q")
	cmd.Env = append(testEnv(home, ""), "PATH="+bin+":/usr/bin:/bin")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(strings.TrimPrefix(line, "pyaichat serve: open "))
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(got)
		if err == nil {
			return url, string(b), got + ".page", cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("xdg-open was not run within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// --open hands the desktop's opener (here a stand-in) a private file that
// sends the browser on to the URL: no command line holds its code. The
// file is 0600 in a 0700 directory, and goes when serve stops.
func TestServeOpensTheBrowser(t *testing.T) {
	home := t.TempDir()
	url, opened, seen, cmd := startServeOpen(t, home)
	if strings.Contains(opened, "#") || !strings.HasSuffix(opened, ".html") || !filepath.IsAbs(opened) {
		t.Errorf("xdg-open got %q, want the path of an HTML file and no secret", opened)
	}
	info, err := os.Stat(seen)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("the file the opener got has mode %o, want 600", mode)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "opened.dirmode")); strings.TrimSpace(string(b)) != "700" {
		t.Errorf("its directory has mode %q, want 700", b)
	}
	if page, _ := os.ReadFile(seen); !strings.Contains(string(page), `content="0;url=`+url+`"`) {
		t.Errorf("the file does not send the browser to %s:\n%s", url, page)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if _, err := os.Stat(filepath.Dir(opened)); !os.IsNotExist(err) {
		t.Errorf("the file's directory outlived serve: %v", err)
	}
}

// A client written to the protocol's first draft reaches pyaichat: the
// token alone as subprotocol, protocolVersion "1.0", the session's
// command read from welcome's sessionConfig, and updateSessionConfig
// answered with an error that says the command is the server's.
func TestServeFirstDraftClient(t *testing.T) {
	srv := startServe(t, t.TempDir(), nil, "-q")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d/ws", srv.Port), &websocket.DialOptions{
		Subprotocols: []string{"auth.bearer." + srv.Token},
	})
	if err != nil {
		t.Fatalf("dial with the token alone: %v", err)
	}
	defer conn.CloseNow()
	c := &serveClient{tb: t, conn: conn, ctx: ctx}
	c.send(map[string]any{"type": "hello", "protocolVersion": "1.0"})
	welcome := c.until("welcome")
	cfg, _ := welcome["sessionConfig"].(map[string]any)
	command, _ := cfg["command"].([]any)
	if len(command) != 2 || filepath.Base(fmt.Sprint(command[0])) != "pyaichat" || command[1] != "-q" {
		t.Errorf("sessionConfig.command %v, want pyaichat -q", cfg["command"])
	}
	c.open()
	off := c.waitFor(0, "py> ")
	c.send(map[string]any{"type": "updateSessionConfig", "sessionId": c.id, "sessionConfig": map[string]any{"command": []string{"/bin/sh"}}})
	_, b, err := conn.Read(ctx)
	for err == nil && !bytes.Contains(b, []byte(`"type":"error"`)) {
		_, b, err = conn.Read(ctx)
	}
	if err != nil || !bytes.Contains(b, []byte("fixed by the server")) {
		t.Errorf("updateSessionConfig answered %s %v", b, err)
	}
	c.keys("6 * 7\r")
	c.waitFor(off, "42\r\n")
}

// A flood of connections that never send a request (the red team's
// 19,990 used up serve's descriptors, and the page could not connect):
// serve holds at most 64 of them per address, and the page's WebSocket
// still gets in and runs Python.
func TestServeBoundsSilentConnections(t *testing.T) {
	srv := startServe(t, t.TempDir(), nil, "-q")
	fds := func() int {
		entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", srv.pid))
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	before := fds()
	const flood = 400
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < flood; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", srv.Port))
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	c := dialServe(t, srv) // behind the flood in the accept queue
	c.open()
	off := c.waitFor(0, "py> ")
	if grown := fds() - before; grown > 64+8 {
		t.Errorf("serve holds %d more descriptors after %d silent connections, want at most the cap of 64 and the session's", grown, flood)
	}
	c.keys("6 * 7\r")
	c.waitFor(off, "42\r\n")
}
