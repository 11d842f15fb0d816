package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Name string // "message" unless an event: field (or llama.cpp's error: field) named it
	Data string // data: lines joined with "\n"
}

// maxEventBytes bounds one event so that a server that never sends a blank
// line cannot make us buffer without limit. llama.cpp's verbose mode sends
// single lines of a few tens of KB; 16 MiB is far above anything legitimate.
const maxEventBytes = 16 << 20

// sseReader is a server-sent-events reader written to the WHATWG spec
// (https://html.spec.whatwg.org/multipage/server-sent-events.html), used
// instead of go-openai's stream reader because that reader, on streams real
// providers send (captured in testdata/openai-wire):
//   - counts comment and blank lines toward EmptyMessagesLimit (300) and so
//     aborts long keep-alive runs (OpenRouter ": OPENROUTER PROCESSING",
//     DeepSeek ": keep-alive", llama.cpp ":" pings during slow prefill);
//   - mixes earlier comment/event: lines into its error accumulator, so a
//     later data: {"error":...} or Groq's "event: error" becomes "unexpected
//     end of JSON input" and the server's message is lost;
//   - ignores llama.cpp's non-standard "error:" field (the error vanishes);
//   - unmarshals each data: line separately, breaking legal multi-line data;
//   - drops a final event that has no trailing newline.
//
// Comments are skipped without any count (liveness is the client's idle
// timer's job), data: lines are joined, and "error:" lines are reported as an
// event named "error". One deliberate departure from the spec: an event still
// pending at EOF is dispatched, not discarded, because several servers end
// the body right after the last data line.
type sseReader struct {
	r      io.Reader
	buf    []byte
	start  int // unread data is buf[start:end]
	end    int
	skipLF bool // the last line ended in a CR at the buffer's end: a following LF belongs to it
	rerr   error
	name   string
	data   bytes.Buffer
	has    bool // at least one data (or error) field since the last dispatch
	eof    bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: r, buf: make([]byte, 16<<10)}
}

var errEventTooLarge = fmt.Errorf("server-sent event larger than %d bytes", maxEventBytes)

// Next returns the next event, io.EOF at a clean end of the body, or the
// read error.
func (s *sseReader) Next() (sseEvent, error) {
	for !s.eof {
		line, err := s.readLine()
		if err != nil && !errors.Is(err, io.EOF) {
			return sseEvent{}, err
		}
		if errors.Is(err, io.EOF) {
			s.eof = true
			if len(line) == 0 {
				break
			}
		}
		if ev, ok := s.field(line); ok {
			return ev, nil
		}
	}
	// Flush an event left without its blank line (see the type's comment).
	if ev, ok := s.dispatch(); ok {
		return ev, nil
	}
	return sseEvent{}, io.EOF
}

// readLine returns one line without its terminator; the slice is valid until
// the next call. Lines end at "\n", "\r\n" or a lone "\r", as the spec says.
func (s *sseReader) readLine() ([]byte, error) {
	scanned := s.start // buf[start:scanned] holds no line end
	for {
		s.dropLF()
		if line, ok := s.lineFrom(max(scanned, s.start)); ok {
			return line, nil
		}
		if s.rerr != nil {
			line := s.buf[s.start:s.end]
			s.start = s.end
			return line, s.rerr
		}
		partial := s.end - s.start
		if err := s.fill(); err != nil {
			return nil, err
		}
		scanned = s.start + partial
	}
}

// lineFrom returns the line that ends at the first line end in
// buf[from:end], and consumes it; ok is false when there is none yet.
func (s *sseReader) lineFrom(from int) (line []byte, ok bool) {
	i := bytes.IndexAny(s.buf[from:s.end], "\r\n")
	if i < 0 {
		return nil, false
	}
	i += from
	line = s.buf[s.start:i]
	s.start = i + 1
	if s.buf[i] == '\r' {
		s.skipLF = true
		s.dropLF()
	}
	return line, true
}

// dropLF drops the LF of a CRLF whose CR ended the last line, once the
// byte after the CR has been read.
func (s *sseReader) dropLF() {
	if s.skipLF && s.start < s.end {
		if s.buf[s.start] == '\n' {
			s.start++
		}
		s.skipLF = false
	}
}

// fill reads more of the body into buf, after sliding the unread bytes
// down and growing buf when one line fills it.
func (s *sseReader) fill() error {
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.start, s.end = 0, n
	}
	if s.end == len(s.buf) {
		if len(s.buf) >= maxEventBytes {
			return errEventTooLarge
		}
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	n, err := s.r.Read(s.buf[s.end:])
	s.end += n
	if err != nil {
		s.rerr = err
	}
	return nil
}

// field interprets one line; it returns an event when the line dispatches one.
func (s *sseReader) field(line []byte) (sseEvent, bool) {
	if len(line) == 0 {
		return s.dispatch()
	}
	if line[0] == ':' {
		return sseEvent{}, false // comment: keep-alive, "OPENROUTER PROCESSING", ...
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		value = bytes.TrimPrefix(value, []byte(" "))
	}
	switch string(name) {
	case "data":
		s.addData(value)
	case "event":
		s.name = string(value)
	case "error":
		// llama.cpp's server_sent_event(sink, "error", ...) writes the
		// error JSON on an "error:" line; treat it as an error event.
		s.name = "error"
		s.addData(value)
	}
	if s.data.Len() > maxEventBytes {
		s.data.Reset()
		s.has = false
	}
	return sseEvent{}, false
}

// addData adds one data line to the pending event.
func (s *sseReader) addData(value []byte) {
	if s.has {
		s.data.WriteByte('\n')
	}
	s.data.Write(value)
	s.has = true
}

func (s *sseReader) dispatch() (sseEvent, bool) {
	if !s.has {
		s.name = ""
		return sseEvent{}, false
	}
	ev := sseEvent{Name: s.name, Data: s.data.String()}
	if ev.Name == "" {
		ev.Name = "message"
	}
	s.name = ""
	s.data.Reset()
	s.has = false
	return ev, true
}
