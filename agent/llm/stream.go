package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// Stream iterates over the visible text of one response as it arrives
// (Next/Current/Err/Close), then gives the whole Completion (Result).
type Stream struct {
	c      *Client
	body   io.ReadCloser
	br     *bufio.Reader
	sse    *sseReader
	acc    *accumulator
	dog    *time.Timer
	cancel context.CancelCauseFunc
	actx   context.Context
	parent context.Context

	ctype   string // the response's Content-Type, to name it when the body is no stream
	started bool
	events  int // SSE events read
	pending []delta
	cur     delta
	err     error
	done    bool
	// unfinished is set when the body ended cleanly but the answer did not:
	// no [DONE] and no finish_reason (see atEOF).
	unfinished bool
}

// dogReader re-arms the stream's idle timer on every byte received, so
// keep-alive comments count as life and a silent server does not.
type dogReader struct {
	r io.Reader
	s *Stream
}

func (d *dogReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if n > 0 {
		d.s.dog.Reset(d.s.c.cfg.IdleTimeout)
	}
	return n, err
}

// Next advances to the next piece of visible text. It returns false at the
// end of the response or on an error (see Err).
func (s *Stream) Next() bool {
	for len(s.pending) == 0 {
		if s.done {
			return false
		}
		s.step()
	}
	s.cur, s.pending = s.pending[0], s.pending[1:]
	return true
}

// Current is the piece of text Next moved to.
func (s *Stream) Current() (kind DeltaKind, choice int, text string) {
	return s.cur.Kind, s.cur.Choice, s.cur.Text
}

func (s *Stream) step() {
	if !s.started {
		s.started = true
		if s.sniffJSON() {
			return
		}
		s.sse = newSSEReader(s.br)
	}
	ev, err := s.sse.Next()
	if err != nil {
		s.done = true
		if errors.Is(err, io.EOF) {
			s.atEOF()
		} else {
			s.err = s.readError(err)
		}
		return
	}
	s.events++
	if ev.Data == "[DONE]" {
		s.done = true
		return
	}
	s.pending, err = s.acc.addChunk(ev.Name, []byte(ev.Data), s.pending[:0])
	if err != nil {
		s.done = true
		s.err = fmt.Errorf("%s sent a stream event that is not a JSON object: %s", s.c.Where(), termsafe.Squash(ev.Data, 80))
		return
	}
	if s.acc.c.Err != nil || s.acc.capped {
		// Stop at the first error: what follows (if anything) is [DONE],
		// and a server that errs and then stalls must not hang us. Stop
		// at the size cap too: the rest would only be dropped.
		s.done = true
	}
}

// Capped reports a response cut at MaxResponseText; the rest was not read.
func (s *Stream) Capped() bool { return s.acc.capped }

// atEOF judges a body that ended cleanly before [DONE]. With no event at
// all, whatever answered (a captive portal, a web server, a proxy's
// text/plain, random bytes labelled an event stream) is not a chat server,
// and saying "the model returned an empty answer" would mislead. With events but no
// finish_reason either, the connection was most likely cut (a body without
// Content-Length or chunking ends by a close that looks clean), so the
// answer may be incomplete.
func (s *Stream) atEOF() {
	switch {
	case s.events == 0 && !isMediaType(s.ctype, "text/event-stream"):
		s.err = s.notAStream()
	case s.events == 0:
		// Labelled an event stream, it held no event: random bytes, an
		// HTML page, or nothing. No chat server answers so.
		s.err = fmt.Errorf("%s answered with an event stream that holds no event, not a chat completion; check OPENAI_BASE_URL (a proxy or login page may be answering)", DisplayURL(s.c.endpoint()))
	case s.events > 0 && s.acc.c.Err == nil && !s.acc.finished(0):
		s.unfinished = true
	}
}

// Unfinished reports a stream that ended without saying the answer was
// complete (no [DONE], no finish_reason): the answer may be cut short.
func (s *Stream) Unfinished() bool { return s.unfinished }

func (s *Stream) notAStream() error {
	ctype := "no Content-Type"
	if s.ctype != "" {
		ctype = "Content-Type " + termsafe.Squash(s.ctype, 80)
	}
	return fmt.Errorf("%s answered with %s, neither an event stream nor JSON; check OPENAI_BASE_URL (a proxy or login page may be answering)",
		DisplayURL(s.c.endpoint()), ctype)
}

func isMediaType(ctype, want string) bool {
	mt, _, _ := strings.Cut(ctype, ";")
	return strings.EqualFold(strings.TrimSpace(mt), want)
}

// sniffJSON handles a server that answers a stream request with one plain
// JSON body (it ignored stream:true, or it sent {"error":...} with status
// 200): the first non-space byte is '{' or '[' instead of an SSE field.
func (s *Stream) sniffJSON() bool {
	for {
		b, err := s.br.Peek(1)
		if err != nil {
			return false // empty body: the SSE path reports a clean EOF
		}
		if b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n' {
			s.br.Discard(1)
			continue
		}
		if b[0] != '{' && b[0] != '[' {
			return false
		}
		break
	}
	raw, err := io.ReadAll(io.LimitReader(s.br, maxEventBytes))
	s.done = true
	if err != nil {
		s.err = s.readError(err)
		return true
	}
	s.wholeJSON(raw)
	return true
}

// wholeJSON reads a body that is one JSON value: a chat completion, an
// error object, or Gemini's error wrapped in an array. Anything else ([],
// [1,2,3], {}) is named as what it is rather than shown as an error text
// or an empty answer.
func (s *Stream) wholeJSON(raw []byte) {
	if raw[0] == '[' {
		var arr []map[string]json.RawMessage
		if json.Unmarshal(raw, &arr) != nil || len(arr) == 0 || arr[0]["error"] == nil {
			s.err = s.notACompletion(raw)
			return
		}
		e := parseErrorValue(raw)
		s.acc.c.Err = &e
		return
	}
	var err error
	s.pending, err = s.acc.addChunk("message", raw, s.pending[:0])
	if err != nil || (len(s.acc.order) == 0 && s.acc.c.Err == nil) {
		s.err = s.notACompletion(raw)
	}
}

func (s *Stream) notACompletion(raw []byte) error {
	return fmt.Errorf("%s answered with JSON that is not a chat completion: %s", DisplayURL(s.c.endpoint()), termsafe.Squash(string(raw), 60))
}

func (s *Stream) readError(err error) error {
	if s.parent.Err() != nil {
		return context.Cause(s.parent)
	}
	switch context.Cause(s.actx) {
	case errNoResponse, errStalled:
		return fmt.Errorf("the stream from %s stalled (no data for %s)", s.c.Where(), s.c.cfg.IdleTimeout)
	}
	if errors.Is(err, errEventTooLarge) {
		return fmt.Errorf("%s sent an event larger than %d MB", s.c.Where(), maxEventBytes>>20)
	}
	return fmt.Errorf("connection to %s lost mid-answer", s.c.Where())
}

// Err is the error that ended the stream early: a read failure, a stall, a
// cancellation, or an error the server reported inside the stream.
func (s *Stream) Err() error {
	if s.err != nil {
		return s.c.cleanErr(s.err)
	}
	if e := s.acc.c.Err; e != nil {
		return s.c.cleanErr(&statusErr{e, fmt.Sprintf("%s (reported by %s mid-answer)", strings.TrimSpace(e.Error()), s.c.Where())})
	}
	return nil
}

// Result returns what the response carried so far (all of it after Next
// returned false).
func (s *Stream) Result() *Completion { return s.acc.finish() }

// Close releases the connection; it is safe to call more than once.
func (s *Stream) Close() error {
	s.dog.Stop()
	s.cancel(nil)
	return s.body.Close()
}
