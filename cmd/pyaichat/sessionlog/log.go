// Package sessions keeps pyaichat's session logs: one append-only JSONL
// file per interactive session, one event a line, written as each event
// happens. It reads them back for `pyaichat sessions` (list, show,
// export) and for --continue and --resume, and tolerates a torn last line
// (a session killed while writing).
//
// It knows nothing of the agent or the interpreter: cmd/pyaichat turns
// their events into Records.
package sessionlog

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// Record is one line of a session log. Ev says which fields are set:
//
//	start        ID, Version, Python, Venv, Cwd, Model
//	py           Src, Status ("ok", "error" with Exc, "exit" with Code);
//	             with --log-output, Output and OutputBytes
//	question     Text, Model
//	tool_call    CallID, Tool, Args, Step (the response of the question that
//	             made it, from 1), Extra (the server's extra_content)
//	tool_result  CallID, Tool, Result (as the model saw it), Size
//	notice       Text
//	answer_part  Text: a piece of the answer as it streams (Read folds
//	             them into the answer)
//	answer       Text
//	usage        In, Out (tokens, when the server told), Calls
//	error        Text, Kind
//	cancelled    (Ctrl-C during a question)
//	resumed      Text: the id of the session this one resumed
//	truncated    Text: the log reached its size bound; nothing follows
//	output_off   Text: the log passed its bound for output; no more is kept
//	end          Code (the exit status)
type Record struct {
	T  time.Time `json:"t"`
	Ev string    `json:"ev"`

	ID      string `json:"id,omitempty"`
	Version string `json:"version,omitempty"`
	Python  string `json:"python,omitempty"`
	Venv    string `json:"venv,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	Model   string `json:"model,omitempty"`
	// Kernel names the Jupyter kernel py> ran in (--existing, --kernel);
	// "" for the embedded Python.
	Kernel string `json:"kernel,omitempty"`

	Src    string `json:"src,omitempty"`
	Status string `json:"status,omitempty"`
	Exc    string `json:"exc,omitempty"`
	Code   *int   `json:"code,omitempty"`

	Text   string `json:"text,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Args   string `json:"args,omitempty"`
	Result string `json:"result,omitempty"`
	Size   int    `json:"size,omitempty"`
	In     int    `json:"tokens_in,omitempty"`
	Out    int    `json:"tokens_out,omitempty"`
	Calls  int    `json:"calls,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Step   int    `json:"step,omitempty"`
	// Extra is kept as the server sent it: an opaque signature, which a
	// resumed conversation sends back.
	Extra json.RawMessage `json:"extra,omitempty"`

	// Output is what a py> input printed, when output is captured, cut
	// at MaxOutput bytes; OutputBytes is how much it printed in all.
	Output      []Output `json:"output,omitempty"`
	OutputBytes int      `json:"output_bytes,omitempty"`
}

// Output is one run of a py> input's output, in the order written. Kind
// is "stdout", "stderr", "result" (the value shown, as sys.displayhook
// shows it) or "error" (a traceback or a SyntaxError).
type Output struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// Defaults of the bounds.
const (
	DefaultKeep     = 200      // session files kept, the oldest deleted first
	DefaultMaxBytes = 16 << 20 // bytes one file may grow to
	// maxField bounds each text in a record: a pasted megabyte or a long
	// answer is kept in part, said so.
	maxField = 64 << 10
	// MaxOutput bounds the output kept of one input.
	MaxOutput = 64 << 10
)

// Ext is the file name extension of a session log.
const Ext = ".jsonl"

// NewID is a session id: the local start time to the millisecond,
// readable and sorting as the sessions started (the newest is the last
// name), and a random hex digit; CreateNew tries another if two sessions
// ever start in the same millisecond with the same digit.
func NewID(now time.Time) string {
	var b [1]byte
	rand.Read(b[:])
	return now.Format("20060102-150405") + fmt.Sprintf("-%03d", now.Nanosecond()/1e6) + hex.EncodeToString(b[:])[1:]
}

// Writer appends Records to one session's file. Every record is one
// write(2) of one whole line, made before Write returns, so a crash or
// kill -9 loses at most the line being written (readers skip a torn one);
// nothing is buffered in the process. That write is on the py> line's
// path: BenchmarkLogCost measures what it adds to a round trip.
type Writer struct {
	mu       sync.Mutex
	f        *os.File
	size     int64
	maxBytes int64
	full     bool
	// outputOff: the log passed half its bound, and keeps no more
	// output, so that the inputs and the conversation still have room.
	outputOff bool
	redact    func(string) string
	// warn, failing, torn: see append.
	warn          func(string)
	failing, torn bool
	// line and enc encode each record, into the same buffer every time:
	// the REPL writes one a line typed.
	line bytes.Buffer
	enc  *json.Encoder
	// Path is the file written.
	Path string
}

// Options of a new log.
type Options struct {
	Keep     int                 // files kept in dir (DefaultKeep when 0)
	MaxBytes int64               // bound of the file (DefaultMaxBytes when 0)
	Redact   func(string) string // applied to every text of every record
	Warn     func(string)        // told, in one line, when a record cannot be written
}

// Create starts the log of session id in dir, made 0700 if missing; the
// file is 0600. The oldest logs beyond o.Keep are deleted.
func Create(dir, id string, o Options) (*Writer, error) {
	if o.Keep <= 0 {
		o.Keep = DefaultKeep
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, id+Ext)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	prune(dir, o.Keep)
	return &Writer{f: f, maxBytes: o.MaxBytes, redact: o.Redact, warn: o.Warn, Path: path}, nil
}

// CreateNew starts the log of a new session started now, under a new id.
func CreateNew(dir string, now time.Time, o Options) (*Writer, error) {
	for tries := 0; ; tries++ {
		w, err := Create(dir, NewID(now), o)
		if !errors.Is(err, fs.ErrExist) || tries == 20 {
			return w, err
		}
	}
}

// prune deletes the oldest logs (by name: ids sort by time) beyond keep,
// with the directory of figures saved beside each (ID/, see FilesDir).
func prune(dir string, keep int) {
	names := logNames(dir)
	for len(names) > keep {
		os.Remove(filepath.Join(dir, names[0]))
		os.RemoveAll(FilesDir(filepath.Join(dir, names[0])))
		names = names[1:]
	}
}

// FilesDir is the directory beside the log at path where the session's
// files go (figures that could not be drawn): the log's name without its
// extension. It is made only when a file is saved.
func FilesDir(path string) string { return strings.TrimSuffix(path, Ext) }

func logNames(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), Ext) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// keptLineBuffer bounds the buffer kept for the next record.
const keptLineBuffer = 64 << 10

// Write appends rec, stamped with the time now if it has none. Past the
// size bound, one "truncated" record says so and later ones are dropped.
func (w *Writer) Write(rec Record) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.full || w.f == nil {
		return nil
	}
	if rec.T.IsZero() {
		rec.T = time.Now()
	}
	rec.T = rec.T.UTC()
	w.clean(&rec)
	if w.enc == nil {
		w.enc = json.NewEncoder(&w.line)
	}
	w.line.Reset()
	defer func() {
		if w.line.Cap() > keptLineBuffer {
			w.line = bytes.Buffer{} // a record with much output: not kept for the next
		}
	}()
	if err := w.enc.Encode(rec); err != nil { // json.Marshal's bytes, and a newline
		return err
	}
	line := w.line.Bytes()
	var err error
	if len(rec.Output) > 0 && (w.outputOff || w.size+int64(len(line)) > w.maxBytes/2) {
		if line, err = w.withoutOutput(rec); err != nil {
			return err
		}
	}
	if w.size+int64(len(line)) > w.maxBytes-512 {
		w.full = true
		stop, _ := json.Marshal(Record{T: rec.T, Ev: "truncated", Text: fmt.Sprintf("the log reached its bound of %d bytes; later events were not written", w.maxBytes)})
		line = append(stop, '\n')
	}
	return w.append(line)
}

// append writes line whole or not at all: a write that fails or falls
// short (a full disk) is cut off again, so the next record starts on a
// line of its own, and the first failure of a run is one warning. While
// the cut itself fails, nothing more is written after the torn line.
func (w *Writer) append(line []byte) error {
	if w.torn {
		if err := w.f.Truncate(w.size); err != nil {
			return err
		}
		w.torn = false
	}
	n, err := w.f.Write(line)
	if err == nil && n == len(line) {
		w.failing = false
		w.size += int64(n)
		return nil
	}
	if err == nil {
		err = io.ErrShortWrite
	}
	if n > 0 && w.f.Truncate(w.size) != nil {
		w.torn = true
	}
	if !w.failing && w.warn != nil {
		w.warn(fmt.Sprintf("the session log %s could not be written (%v); that record is lost, later ones are written when they can be", w.Path, err))
	}
	w.failing = true
	return err
}

// withoutOutput is rec's line without its output, and, the first time,
// an output_off line after it saying why.
func (w *Writer) withoutOutput(rec Record) ([]byte, error) {
	rec.Output = nil
	line, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	line = append(line, '\n')
	if !w.outputOff {
		w.outputOff = true
		off, _ := json.Marshal(Record{T: rec.T, Ev: "output_off", Text: fmt.Sprintf("the log passed %d bytes, half its bound; Python's output is no longer kept", w.maxBytes/2)})
		line = append(append(line, off...), '\n')
	}
	return line, nil
}

// OutputOff says whether the log keeps no more output (see Record).
func (w *Writer) OutputOff() bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.outputOff || w.full
}

// clean redacts and bounds every text of rec.
func (w *Writer) clean(rec *Record) {
	for _, p := range []*string{&rec.Src, &rec.Text, &rec.Args, &rec.Result, &rec.Cwd, &rec.Venv, &rec.Tool, &rec.Exc} {
		if w.redact != nil {
			*p = w.redact(*p)
		}
		*p = bound(*p, maxField)
	}
	if len(rec.Output) > 0 {
		rec.Output = w.cleanOutput(rec.Output, rec.OutputBytes)
	}
}

// cleanOutput redacts output, then cuts it at MaxOutput bytes in all on a
// character boundary (redacted first, so that a cut never leaves half a
// secret), saying so at its end with how much was written.
func (w *Writer) cleanOutput(parts []Output, written int) []Output {
	out := make([]Output, 0, len(parts))
	kept, cut := 0, written > sumLen(parts)
	for _, p := range parts {
		text := strings.ToValidUTF8(p.Text, "\uFFFD")
		if w.redact != nil {
			text = w.redact(text)
		}
		if kept+len(text) > MaxOutput {
			text, cut = termsafe.Prefix(text, MaxOutput-kept), true
		}
		kept += len(text)
		if text != "" {
			out = append(out, Output{Kind: p.Kind, Text: text})
		}
		if cut && kept >= MaxOutput-utf8.UTFMax {
			break
		}
	}
	if cut && len(out) > 0 {
		last := &out[len(out)-1]
		last.Text += fmt.Sprintf("\n[output cut: %d bytes kept of %d written]", kept, max(written, sumLen(parts)))
	}
	return out
}

func sumLen(parts []Output) int {
	n := 0
	for _, p := range parts {
		n += len(p.Text)
	}
	return n
}

// bound cuts s to about n bytes on a character boundary, saying so.
func bound(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	return termsafe.Prefix(s, n) + fmt.Sprintf("\n[cut: %d bytes in all]", len(s))
}

// Close ends the file.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// Read reads a session log. A line that is not a whole record (the last
// line of a session killed while writing it) is skipped.
func Read(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var recs []Record
	for _, line := range strings.Split(string(data), "\n") {
		var r Record
		if strings.TrimSpace(line) == "" || json.Unmarshal([]byte(line), &r) != nil || r.Ev == "" {
			continue
		}
		recs = append(recs, r)
	}
	return withAnswerParts(recs), nil
}

// cutShort ends the answer of a session that ended while it streamed.
const cutShort = "\n[the answer was cut short: pyaichat ended while it streamed]"

// withAnswerParts replaces the answer_part records, which keep an answer
// as it streams, by the whole answer: an answer record follows them when
// the question ended, and makes them redundant; when none does (the
// session was killed meanwhile), their text is the answer, said cut short.
func withAnswerParts(recs []Record) []Record {
	out := recs[:0:0]
	var parts strings.Builder
	var last time.Time
	flush := func() {
		if parts.Len() > 0 {
			out = append(out, Record{T: last, Ev: "answer", Text: parts.String() + cutShort})
			parts.Reset()
		}
	}
	for _, r := range recs {
		switch r.Ev {
		case "answer_part":
			parts.WriteString(r.Text)
			last = r.T
			continue
		case "answer":
			parts.Reset()
		case "question", "py", "end", "resumed":
			flush()
		}
		out = append(out, r)
	}
	flush()
	return out
}

// ErrNoSessions is Latest in a directory without logs.
var ErrNoSessions = errors.New("no sessions have been logged yet")

// Find is the log whose id starts with prefix, which must name one.
func Find(dir, prefix string) (string, error) {
	prefix = strings.TrimSuffix(prefix, Ext)
	var found []string
	for _, n := range logNames(dir) {
		if strings.HasPrefix(n, prefix) {
			found = append(found, n)
		}
	}
	switch {
	case prefix == "" || len(found) == 0:
		return "", fmt.Errorf("no session %q (pyaichat sessions lists them)", prefix)
	case len(found) > 1:
		return "", fmt.Errorf("%q names %d sessions (%s, ...); give more of the id", prefix, len(found), strings.TrimSuffix(found[0], Ext))
	}
	return filepath.Join(dir, found[0]), nil
}

// Latest is the newest log in dir; skip is a file not to count (the log
// of the session asking).
func Latest(dir, skip string) (string, error) {
	names := logNames(dir)
	for i := len(names) - 1; i >= 0; i-- {
		p := filepath.Join(dir, names[i])
		if p != skip {
			return p, nil
		}
	}
	return "", ErrNoSessions
}

// IDOf is the id of the session logged at path.
func IDOf(path string) string { return strings.TrimSuffix(filepath.Base(path), Ext) }
