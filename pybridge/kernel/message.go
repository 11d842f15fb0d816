package kernel

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// delimiter separates a message's routing identities from its signed parts.
const delimiter = "<IDS|MSG>"

// protocolVersion is the messaging protocol version this client speaks.
const protocolVersion = "5.3"

// Header is a message's header (and its parent_header in replies).
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// message is one decoded protocol message; Content stays raw until its
// type says what it holds.
type message struct {
	Header  Header
	Parent  Header
	Content json.RawMessage
}

// signer signs and checks messages with the connection file's key.
type signer struct{ key []byte }

func (s signer) sign(parts ...[]byte) []byte {
	if len(s.key) == 0 {
		return nil
	}
	mac := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		mac.Write(p)
	}
	return []byte(hex.EncodeToString(mac.Sum(nil)))
}

// encode builds the frames of a message from this client; the frames
// before the delimiter are left out since a DEALER socket sends none.
func (s signer) encode(session, msgType string, content any) (Header, [][]byte, error) {
	h := Header{
		MsgID:    newID(),
		Session:  session,
		Username: "pyaichat",
		Date:     time.Now().UTC().Format(time.RFC3339Nano),
		MsgType:  msgType,
		Version:  protocolVersion,
	}
	header, err := json.Marshal(h)
	if err != nil {
		return h, nil, err
	}
	body, err := json.Marshal(content)
	if err != nil {
		return h, nil, fmt.Errorf("kernel %s: %w", msgType, err)
	}
	parent, metadata := []byte("{}"), []byte("{}")
	frames := [][]byte{[]byte(delimiter), s.sign(header, parent, metadata, body), header, parent, metadata, body}
	return h, frames, nil
}

// decode checks a received message's signature and reads its headers;
// a message whose signature does not match is refused, since anyone who
// can reach the port could otherwise speak for the kernel.
func (s signer) decode(frames [][]byte) (message, error) {
	at := -1
	for i, f := range frames {
		if string(f) == delimiter {
			at = i
			break
		}
	}
	if at < 0 || len(frames) < at+6 {
		return message{}, errors.New("kernel message without the protocol's frames")
	}
	sig, header, parent, metadata, content := frames[at+1], frames[at+2], frames[at+3], frames[at+4], frames[at+5]
	if len(s.key) > 0 && !hmac.Equal(sig, s.sign(header, parent, metadata, content)) {
		return message{}, errors.New("kernel message with a bad signature")
	}
	var m message
	if err := json.Unmarshal(header, &m.Header); err != nil {
		return message{}, fmt.Errorf("kernel message header: %w", err)
	}
	if err := json.Unmarshal(parent, &m.Parent); err != nil {
		return message{}, fmt.Errorf("kernel message parent header: %w", err)
	}
	m.Content = append(json.RawMessage(nil), content...)
	return m, nil
}

// newID is a random UUID-like hex identifier for messages and sessions.
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("kernel: no randomness for a message id: %v", err))
	}
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
