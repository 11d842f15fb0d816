package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// client is one WebSocket connection: it may show several sessions, each
// through a pump that sends the session's output from the client's cursor.
type client struct {
	srv    *Server
	conn   *websocket.Conn
	ctx    context.Context
	hello  bool
	mu     sync.Mutex
	pumps  map[string]*pump // by session id
	pumpWG sync.WaitGroup
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	if s.refuse(w, r, s.checkToken) {
		return
	}
	// The Origin was checked above, against loopback rather than the Host.
	// A client that offers the token alone gets it back as the selected
	// subprotocol (see Subprotocol); it is its own token, on its own
	// connection.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:       []string{Subprotocol, tokenPrefix + s.opts.Token},
		InsecureSkipVerify: true,
	})
	if err != nil {
		return // Accept has answered the request
	}
	conn.SetReadLimit(hardReadLimit)
	ctx, cancel := context.WithCancel(r.Context())
	c := &client{srv: s, conn: conn, ctx: ctx, pumps: map[string]*pump{}}
	defer func() {
		cancel()
		c.pumpWG.Wait()
		conn.CloseNow()
	}()
	go c.keepAlive(cancel)
	c.readLoop()
}

// keepAlive pings the client and ends the connection when a ping goes
// unanswered for an interval.
func (c *client) keepAlive(cancel context.CancelFunc) {
	every := c.srv.opts.PingInterval
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		ctx, done := context.WithTimeout(c.ctx, every)
		err := c.conn.Ping(ctx)
		done()
		if err != nil {
			cancel()
			c.conn.CloseNow()
			return
		}
	}
}

// readLoop handles messages until the connection goes. A message that is
// too large, not JSON or of no known type is answered with an error and
// the connection goes on.
func (c *client) readLoop() {
	limit := int64(c.srv.opts.MaxMessage)
	for {
		typ, r, err := c.conn.Reader(c.ctx)
		if err != nil {
			return
		}
		data, err := io.ReadAll(io.LimitReader(r, limit+1))
		if err != nil {
			return
		}
		if int64(len(data)) > limit {
			if _, err := io.Copy(io.Discard, r); err != nil {
				return // beyond the hard limit: the connection is closed
			}
			c.sendError(nil, "", fmt.Sprintf("message of more than %d bytes refused", limit))
			continue
		}
		if typ != websocket.MessageText {
			c.sendError(nil, "", "binary messages are not part of the protocol; send JSON text")
			continue
		}
		c.handle(data)
	}
}

func (c *client) handle(data []byte) {
	var m inbound
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		c.sendError(nil, "", "malformed message: "+err.Error())
		return
	}
	if dec.More() {
		c.sendError(nil, "", "malformed message: more than one JSON value")
		return
	}
	if !c.hello && m.Type != "hello" {
		c.sendError(m.ID, m.SessionID, "say hello {protocolVersion} first")
		return
	}
	on := handlers[m.Type]
	if on == nil {
		c.sendError(m.ID, m.SessionID, fmt.Sprintf("unknown message type %q", m.Type))
		return
	}
	err := on(c, m)
	var gone errSessionGone
	switch {
	case errors.As(err, &gone):
		c.send(errorMsg{Type: "error", Message: err.Error(), ID: m.ID, SessionID: m.SessionID, SessionGone: true})
	case err != nil:
		c.sendError(m.ID, m.SessionID, err.Error())
	}
}

// handlers are the protocol's messages, by type, and what answers each.
var handlers = map[string]func(*client, inbound) error{
	"hello":               (*client).onHello,
	"openSession":         (*client).onOpen,
	"attach":              (*client).onAttach,
	"stdin":               (*client).onStdin,
	"resize":              (*client).onResize,
	"close":               (*client).onClose,
	"injectFiles":         (*client).onInject,
	"updateSessionConfig": func(*client, inbound) error { return errFixedCommand },
}

func (c *client) onHello(m inbound) error {
	if len(m.ProtocolVersion) == 0 {
		return fmt.Errorf("hello without protocolVersion (this server speaks %d)", ProtocolVersion)
	}
	if !spokenVersion(m.ProtocolVersion) {
		return fmt.Errorf("protocol version %s is not spoken here (this server speaks %d, also written \"1.0\")", m.ProtocolVersion, ProtocolVersion)
	}
	c.hello = true
	return c.send(welcomeMsg{Type: "welcome", ProtocolVersion: ProtocolVersion, Features: features, SessionConfig: c.srv.sessionConfig()})
}

// spokenVersion accepts protocolVersion 1 as a number (1 or 1.0) or as
// a string ("1", "1.0").
func spokenVersion(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s == "1" || s == "1.0"
	}
	var n float64
	return json.Unmarshal(raw, &n) == nil && n == ProtocolVersion
}

// errFixedCommand answers updateSessionConfig: a client with the token
// may type into a session, but never choose what a session runs.
var errFixedCommand = errors.New("updateSessionConfig refused: session commands are fixed by the server (every session runs the command in welcome's sessionConfig)")

// termSize checks a size from the client.
func termSize(cols, rows int) (uint16, uint16, error) {
	if cols < 1 || rows < 1 || cols > 1000 || rows > 1000 {
		return 0, 0, fmt.Errorf("terminal size %dx%d out of range (1 to 1000 each)", cols, rows)
	}
	return uint16(cols), uint16(rows), nil
}

func (c *client) onOpen(m inbound) error {
	cols, rows, err := termSize(m.Cols, m.Rows)
	if err != nil {
		return err
	}
	sess, err := c.srv.open(cols, rows)
	if err != nil {
		return err
	}
	c.show(sess, 0, openedMsg{Type: "opened", ID: m.ID, SessionID: sess.id})
	return nil
}

func (c *client) onAttach(m inbound) error {
	sess, err := c.srv.lookup(m.SessionID)
	if err != nil {
		return err
	}
	var from int64
	if m.LastSeq != nil {
		from = *m.LastSeq
	}
	if latest := sess.out.latest(); from < 0 || from > latest {
		return fmt.Errorf("lastSeq %d is not in this session's output (0 to %d)", from, latest)
	}
	sp := sess.out.since(from, 0)
	c.show(sess, sp.from, openedMsg{Type: "opened", ID: m.ID, SessionID: sess.id, Seq: sp.from, Gap: sp.gap})
	return nil
}

func (c *client) session(m inbound) (*shell, error) {
	if m.SessionID == "" {
		return nil, errors.New("no sessionId")
	}
	return c.srv.lookup(m.SessionID)
}

func (c *client) onStdin(m inbound) error {
	sess, err := c.session(m)
	if err != nil {
		return err
	}
	data, err := base64.StdEncoding.DecodeString(m.DataBase64)
	if err != nil {
		return fmt.Errorf("dataBase64: %v", err)
	}
	return sess.input(data)
}

func (c *client) onResize(m inbound) error {
	sess, err := c.session(m)
	if err != nil {
		return err
	}
	cols, rows, err := termSize(m.Cols, m.Rows)
	if err != nil {
		return err
	}
	return sess.resize(cols, rows)
}

func (c *client) onClose(m inbound) error {
	if _, err := c.session(m); err != nil {
		return err
	}
	return c.srv.end(m.SessionID, reasonClosed)
}

func (c *client) onInject(m inbound) error {
	sess, err := c.session(m)
	if err != nil {
		return err
	}
	text, err := pathsText(m.Paths)
	if err != nil {
		return err
	}
	return sess.pasteText(text)
}

// pathsText spells absolute paths as Python string literals, separated by
// ", ", ready to go between the parentheses of open() or pd.read_csv().
func pathsText(paths []string) (string, error) {
	if len(paths) == 0 {
		return "", errors.New("no paths")
	}
	quoted := make([]string, len(paths))
	for i, p := range paths {
		if !strings.HasPrefix(p, "/") {
			return "", fmt.Errorf("path %q is not absolute", p)
		}
		if strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return "", fmt.Errorf("path %q has control characters", p)
		}
		quoted[i] = "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(p) + "'"
	}
	return strings.Join(quoted, ", "), nil
}

// pump is one session shown on this connection.
type pump struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// show sends opened, then sess's output from offset from on. A session
// already shown on this connection has its old pump stopped first, so
// that nothing of it follows the new opened.
func (c *client) show(sess *shell, from int64, opened openedMsg) {
	c.mu.Lock()
	old := c.pumps[sess.id]
	delete(c.pumps, sess.id)
	c.mu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
	} else {
		c.srv.attach(sess)
	}
	ctx, cancel := context.WithCancel(c.ctx)
	p := &pump{cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	c.pumps[sess.id] = p
	c.mu.Unlock()
	c.pumpWG.Add(1)
	c.srv.pumps.Add(1)
	go func() {
		defer c.srv.pumps.Done()
		defer c.pumpWG.Done()
		defer close(p.done)
		if c.send(opened) == nil {
			c.pump(ctx, sess, from)
		}
		c.mu.Lock()
		mine := c.pumps[sess.id] == p
		if mine {
			delete(c.pumps, sess.id)
		}
		c.mu.Unlock()
		if mine {
			c.srv.detach(sess)
		}
	}()
}

// pump sends sess's output from cursor on as it comes, then its exit.
// It writes with the connection's context: a cancelled write would close
// the connection.
//
// Output that follows a message closely is held for up to outHold after
// that message, so that a fast stream goes as a few large messages, not
// one per PTY read (often 1 KiB): each message costs a browser far more
// than its bytes do. A key's echo after a pause is sent at once.
func (c *client) pump(ctx context.Context, sess *shell, cursor int64) {
	var sent time.Time
	var cols, rows uint16 // the size this page was last told
	for ctx.Err() == nil {
		// The span first, then the size: a resize sets the size before it
		// wakes the span's waiters, so one that this look misses still
		// wakes the wait below.
		sp := sess.out.since(cursor, outChunk)
		if w, h := sess.size(); w != cols || h != rows {
			if c.send(resizedMsg{Type: "resized", SessionID: sess.id, Cols: int(w), Rows: int(h)}) != nil {
				return
			}
			cols, rows = w, h
		}
		if len(sp.data) > 0 || sp.gap {
			if wait := outHold - time.Since(sent); wait > 0 && len(sp.data) < outChunk/2 && !sp.ended {
				holdOutput(ctx, wait)
				continue
			}
			msg := stdoutMsg{Type: "stdout", SessionID: sess.id, DataBase64: base64.StdEncoding.EncodeToString(sp.data), Seq: sp.seq, Gap: sp.gap}
			if c.send(msg) != nil {
				return
			}
			sent = time.Now()
			cursor = sp.seq
			continue
		}
		if sp.ended {
			_, code := sess.exited()
			c.send(exitMsg{Type: "exit", SessionID: sess.id, Code: code, Reason: sess.exitReason()})
			return
		}
		select {
		case <-sp.more:
		case <-ctx.Done():
		}
	}
}

// holdOutput waits for d, or until ctx ends.
func holdOutput(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func (c *client) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.conn.Write(c.ctx, websocket.MessageText, b)
}

func (c *client) sendError(id json.RawMessage, sessionID, msg string) {
	c.send(errorMsg{Type: "error", Message: msg, ID: id, SessionID: sessionID})
}
