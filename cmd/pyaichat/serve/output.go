package serve

import "sync"

// output is a session's terminal output as a bounded, replayable stream.
// Every byte the PTY produced has an offset; seq in the protocol is the
// offset just past a message's data, so a client that saw up to lastSeq
// asks for exactly what it missed. The newest limit bytes (at least) are
// kept; older ones are forgotten.
type output struct {
	mu     sync.Mutex
	buf    []byte // the kept bytes, offsets [start, start+len(buf))
	start  int64
	limit  int
	ended  bool          // no more bytes will come
	notify chan struct{} // closed and replaced at each change
}

func newOutput(limit int) *output {
	return &output{limit: limit, notify: make(chan struct{})}
}

// write appends p and wakes the readers.
func (o *output) write(p []byte) {
	o.mu.Lock()
	o.buf = append(o.buf, p...)
	// Trim to limit only once twice that is held, so that a stream of
	// small writes copies each byte about once, not once per write.
	if len(o.buf) > 2*o.limit {
		drop := len(o.buf) - o.limit
		o.start += int64(drop)
		o.buf = append(o.buf[:0:0], o.buf[drop:]...)
	}
	o.wake()
	o.mu.Unlock()
}

// end marks the stream finished and wakes the readers.
func (o *output) end() {
	o.mu.Lock()
	o.ended = true
	o.wake()
	o.mu.Unlock()
}

// poke wakes the readers with no new bytes: something else about the
// session changed.
func (o *output) poke() {
	o.mu.Lock()
	o.wake()
	o.mu.Unlock()
}

func (o *output) wake() {
	close(o.notify)
	o.notify = make(chan struct{})
}

// span is what a reader gets: data from its cursor on, whether bytes
// before it were forgotten, and what to wait on for more.
type span struct {
	data  []byte // a copy
	from  int64  // the offset of data[0]
	seq   int64  // from + len(data)
	gap   bool   // bytes between the cursor and from were forgotten
	ended bool   // and there will be no more
	more  <-chan struct{}
}

// since returns up to max bytes from offset cursor on.
func (o *output) since(cursor int64, max int) span {
	o.mu.Lock()
	defer o.mu.Unlock()
	end := o.start + int64(len(o.buf))
	s := span{from: cursor, more: o.notify}
	if cursor < o.start {
		s.gap, s.from = true, o.start
	}
	if s.from > end {
		s.from = end
	}
	n := end - s.from
	if n > int64(max) {
		n = int64(max)
	}
	i := s.from - o.start
	s.data = append([]byte(nil), o.buf[i:i+n]...)
	s.seq = s.from + n
	s.ended = o.ended && s.seq == end
	return s
}

// latest is the offset past the last byte written.
func (o *output) latest() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.start + int64(len(o.buf))
}
