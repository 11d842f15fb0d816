package serve

import "encoding/json"

// ProtocolVersion is the version of the WebSocket protocol below; a
// client's hello must name it, as the number 1 or, as the protocol's
// first draft spelt it, the string "1.0" (or "1").
const ProtocolVersion = 1

// Subprotocol is the WebSocket subprotocol the server selects; the token
// travels beside it as "auth.bearer.<token>" (see checkToken). A client
// written to the first draft offers the token alone, and the server then
// selects that (a browser fails a connection whose server selects none of
// the subprotocols it offered).
const Subprotocol = "pyaichat.v1"

// features are announced in welcome.
var features = []string{"replay", "resize", "injectFiles", "upload"}

// inbound is any client message: each type uses some of the fields.
//
//	hello       {protocolVersion}
//	openSession {id, cols, rows}
//	attach      {sessionId, lastSeq}
//	stdin       {sessionId, dataBase64}
//	resize      {sessionId, cols, rows}
//	close       {sessionId}
//	injectFiles {sessionId, paths}
//	updateSessionConfig {...}: refused, the server fixes what sessions run
type inbound struct {
	Type            string          `json:"type"`
	ProtocolVersion json.RawMessage `json:"protocolVersion"`
	ID              json.RawMessage `json:"id"`
	SessionID       string          `json:"sessionId"`
	Cols            int             `json:"cols"`
	Rows            int             `json:"rows"`
	LastSeq         *int64          `json:"lastSeq"`
	DataBase64      string          `json:"dataBase64"`
	Paths           []string        `json:"paths"`
}

type welcomeMsg struct {
	Type            string        `json:"type"` // "welcome"
	ProtocolVersion int           `json:"protocolVersion"`
	Features        []string      `json:"features"`
	SessionConfig   sessionConfig `json:"sessionConfig"`
}

// sessionConfig tells a client what every session of this server is:
// the command it runs (fixed by the server: updateSessionConfig is
// refused) and the bounds it lives within.
type sessionConfig struct {
	Command            []string `json:"command"`
	ReplayBytes        int      `json:"replayBytes"`
	IdleTimeoutSeconds float64  `json:"idleTimeoutSeconds"` // 0: never
	UploadLimitBytes   int64    `json:"uploadLimitBytes"`
	MaxSessions        int      `json:"maxSessions"`
	Mutable            bool     `json:"mutable"` // always false
}

// openedMsg answers openSession (with the request's id) and attach. seq is
// the offset output will be replayed from; gap says that output between
// the client's lastSeq and seq was forgotten.
type openedMsg struct {
	Type      string          `json:"type"` // "opened"
	ID        json.RawMessage `json:"id,omitempty"`
	SessionID string          `json:"sessionId"`
	Seq       int64           `json:"seq"`
	Gap       bool            `json:"gap,omitempty"`
}

// stdoutMsg carries output; seq is the stream offset just past its data,
// what the client sends back as lastSeq when it attaches again.
type stdoutMsg struct {
	Type       string `json:"type"` // "stdout"
	SessionID  string `json:"sessionId"`
	DataBase64 string `json:"dataBase64"`
	Seq        int64  `json:"seq"`
	Gap        bool   `json:"gap,omitempty"`
}

// resizedMsg tells each page showing a session its terminal's size, when
// the page starts showing it and when a page changes it.
type resizedMsg struct {
	Type      string `json:"type"` // "resized"
	SessionID string `json:"sessionId"`
	Cols      int    `json:"cols"`
	Rows      int    `json:"rows"`
}

// exitMsg says the session's child has gone; reason says why, when the
// server ended it (Restart, the idle timeout, serve stopping).
type exitMsg struct {
	Type      string `json:"type"` // "exit"
	SessionID string `json:"sessionId"`
	Code      int    `json:"code"`
	Reason    string `json:"reason,omitempty"`
}

// errorMsg answers a message that failed; sessionGone says its session
// is not (or no longer) the server's, and message why.
type errorMsg struct {
	Type        string          `json:"type"` // "error"
	Message     string          `json:"message"`
	ID          json.RawMessage `json:"id,omitempty"`
	SessionID   string          `json:"sessionId,omitempty"`
	SessionGone bool            `json:"sessionGone,omitempty"`
}
