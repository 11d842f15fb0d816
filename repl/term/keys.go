package term

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/chzyer/readline"
)

// Bracketed paste markers (xterm): the terminal wraps pasted text in them
// while mode 2004 is on.
var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// chunk is a piece of terminal input.
type chunk struct {
	data []byte
}

// keySource is the terminal as the pump reads it: a byte at a time, so that
// it never takes more than the line editor needs.
type keySource interface {
	// readByte waits for a byte, calling idle first if it has to wait.
	// It returns errWoken, having read nothing, when wake was called.
	readByte(idle func()) (byte, error)
	// readyByte returns a byte if one can be read at once.
	readyByte() (byte, bool)
	// wake makes a readByte waiting now, or the next one, return errWoken.
	wake()
}

// errWoken is readByte's answer to wake.
var errWoken = errors.New("woken")

// pump hands the line editor its keys, and reads the terminal only while
// the editor has a prompt up and needs them. Whatever user code runs next
// (input(), pdb, GNU readline, a child program such as vi, bash or another
// python3) reads the terminal itself, so keys typed for it must still be in
// the terminal's queue: the pump reads a byte at a time, as GNU readline
// does, and stops after the byte that ends a line (Enter, Ctrl-C) or a
// paste. chzyer/readline reads from a goroutine of its own that asks for
// the next key as soon as a line is returned; that request waits here
// until the next prompt. The pump also lifts bracketed pastes out of the
// stream before the editor sees them: readline redraws the whole line per
// rune, which made a 20,000-character paste take over a minute.
type pump struct {
	src keySource

	mu       sync.Mutex
	cond     *sync.Cond
	queue    []chunk
	err      error // permanent read error (terminal gone)
	editorOn bool  // a prompt is up
	granted  bool  // the terminal may be read for this prompt's line
	reading  bool  // a read of the terminal is under way
	pastes   []string
	held     bool // a paste marker went to the editor; wait for takePaste
	// interrupted says the editor was handed a Ctrl-C, which ends its
	// line: the keys read along after it (see readKeys) are the next
	// prompt's. Handed at once, readline took them into the line it was
	// ending, before the REPL saw the Ctrl-C.
	interrupted bool
	// editorWaits, if set, is told (under mu) when the editor's reader
	// blocks for input and when input comes: the editor's output is sent
	// once it has handled all the keys it was given.
	editorWaits func(waiting bool)
	// echo, if set, is given a printable key as soon as it is read, when
	// the editor has taken every key before it (the Editor echoes it if
	// it can: see Editor.preEcho). Called by the goroutine reading.
	echo func(b byte)
	// handed counts the bytes handed to the editor for this prompt, and
	// seen those its input filter has had (Editor.filter): equal, no key
	// is on its way inside readline. (A key readline turns into another,
	// an escape sequence into one rune, leaves them unequal until the
	// next prompt.)
	handed, seen atomic.Int64

	// Paste scanner state, touched only by the goroutine reading.
	inPaste bool
	pasted  bytes.Buffer
	partial []byte // a possible marker prefix held back between reads
	// The reader's own view of pastes, to know where a read must stop.
	readInPaste bool
	readTail    []byte // the last bytes read, for markers split across reads
	// escape is where readline's parser stands in the keys read outside
	// pastes (see endsLine).
	escape escapeState
}

// escapeState follows chzyer/readline's parser of escape sequences: after
// ESC [ or ESC O it takes digits and semicolons, then any byte as the
// sequence's last (terminal.go's ioloop, readEscKey), Enter and Ctrl-C
// included.
type escapeState int

const (
	escNone  escapeState = iota
	escStart             // after ESC
	escKey               // after ESC [ or ESC O, and any digits and semicolons
)

// next is the state after byte b.
func (s escapeState) next(b byte) escapeState {
	switch {
	case b == 0x1b && s != escKey:
		return escStart
	case s == escStart && (b == '[' || b == 'O'):
		return escKey
	case s == escKey && (b >= '0' && b <= '9' || b == ';'):
		return escKey
	}
	return escNone
}

// unboundMeta reports whether ESC then b, the way a terminal sends Meta
// (Alt) with a key, is a key chzyer/readline binds to nothing. It inserts
// the key itself for those, where GNU readline in python3 -i does what it
// binds (M-u, M-., ...) or nothing; the pump hands readline a marker
// that says which key it was (metaRune+b), which the editor carries out
// or drops. readline binds M-b, M-f, M-d, and reads ESC [ and ESC O as
// the start of a longer sequence. Of the control keys, it would take
// M-C-] (character search backward) for C-].
func unboundMeta(b byte) bool {
	return b >= ' ' && b < 0x7f && !bytes.ContainsRune([]byte("bfdO["), rune(b)) || b == ctrlBracket
}

// escapeEnd ends an escape sequence that readline is reading, as one it
// does nothing for, so that a Ctrl-C after it is a Ctrl-C.
const escapeEnd = 'Z'

func newPump(src keySource) *pump {
	p := &pump{src: src}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// readKeys reads what the terminal has for the editor: a byte (waiting
// for it), then every byte already there, up to and including one that
// ends the line, which ended reports. Called without mu, by the one
// goroutine reading.
//
// Ctrl-C reaches python3 as SIGINT, and signals that arrive before the
// first is handled merge into one: Ctrl-Cs sent together give one
// KeyboardInterrupt, and each one drops the keys typed before it that were
// still unread (the terminal flushes its input queue), while keys after
// the last one are kept. The line editor reads Ctrl-C as a byte, in order
// with the keys around it, so that is done here: after a Ctrl-C the bytes
// already waiting are read too, up to a line end, and those from the
// first Ctrl-C to the last one count as that one Ctrl-C. (Taking SIGINT
// itself at the prompt, with the terminal's signal keys on, would leave no
// way to tell the keys typed before it from those typed just after it,
// which can reach the editor before the signal reaches Go: keys typed
// right after a Ctrl-C were lost that way.)
func (p *pump) readKeys(idle func()) (ended bool, err error) {
	b, err := p.src.readByte(idle)
	if err != nil {
		return false, err
	}
	if p.echo != nil && b >= ' ' && b < 0x7f && p.atRest() {
		p.echo(b)
	}
	return p.readFrom(b), nil
}

// readFrom takes b, a byte just read, and the bytes already there after
// it, up to and including one that ends the line, into the queue; it
// reports whether one ended it (see readKeys).
func (p *pump) readFrom(b byte) (ended bool) {
	buf := []byte{b}
	first, last := -1, -1 // the Ctrl-Cs read
	inEscape := false     // the first Ctrl-C came inside an escape sequence
	for {
		wasInEscape := p.escape == escKey
		if p.escape == escStart && unboundMeta(b) {
			buf = utf8.AppendRune(buf[:len(buf)-1], metaRune+rune(b))
		}
		if p.endsLine(b) {
			ended = true
			if b != ctrlC {
				break
			}
			if first < 0 {
				first, inEscape = len(buf)-1, wasInEscape
			}
			last = len(buf) - 1
		}
		var ok bool
		if b, ok = p.src.readyByte(); !ok {
			break
		}
		buf = append(buf, b)
	}
	if last > first {
		buf = append(buf[:first+1], buf[last+1:]...)
	}
	if inEscape {
		// readline would take the Ctrl-C as the sequence's last byte,
		// and wait on for the line the pump has stopped reading for.
		buf = append(buf[:first], append([]byte{escapeEnd}, buf[first:]...)...)
	}
	p.scan(buf)
	return ended
}

// atRest reports whether a key just read would be the editor's next, with
// nothing before it still on its way: no paste or marker under way, no
// key queued, and every key handed over seen by the editor's filter.
// Called by the goroutine reading.
func (p *pump) atRest() bool {
	if p.inPaste || p.readInPaste || len(p.partial) > 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.editorOn && !p.held && !p.interrupted && len(p.queue) == 0 && p.handed.Load() == p.seen.Load()
}

// ctrlC is the byte Ctrl-C sends.
const ctrlC = 3

// endsLine records b as read and reports whether it ends what the editor
// needs for its line: Enter or Ctrl-C outside a paste, or a paste's end.
func (p *pump) endsLine(b byte) bool {
	p.readTail = append(p.readTail, b)
	if len(p.readTail) > len(pasteStart) {
		p.readTail = p.readTail[len(p.readTail)-len(pasteStart):]
	}
	if !p.readInPaste {
		if bytes.HasSuffix(p.readTail, pasteStart) {
			p.readInPaste = true
			p.escape = escNone
			return false
		}
		inEscape := p.escape == escKey
		p.escape = p.escape.next(b)
		if inEscape && b != ctrlC {
			// readline takes an Enter there as the sequence's end, as GNU
			// readline does: the line goes on.
			return false
		}
		return b == '\r' || b == '\n' || b == ctrlC
	}
	if bytes.HasSuffix(p.readTail, pasteEnd) {
		p.readInPaste = false
		return true
	}
	return false
}

func (p *pump) push(c chunk) {
	p.mu.Lock()
	p.queue = append(p.queue, c)
	p.cond.Broadcast()
	p.mu.Unlock()
}

// scan splits the raw bytes into typed input and pastes.
func (p *pump) scan(b []byte) {
	if len(p.partial) > 0 {
		b = append(p.partial, b...)
		p.partial = nil
	}
	var typed []byte
	for len(b) > 0 {
		marker := pasteStart
		if p.inPaste {
			marker = pasteEnd
		}
		i := bytes.Index(b, marker)
		if i < 0 {
			// Hold back a tail that could be the start of a split marker,
			// or of a key the editor's key map rewrites.
			keep := markerPrefixLen(b, marker)
			if !p.inPaste {
				keep = max(keep, editorKeys.prefixLen(b))
			}
			body := b[:len(b)-keep]
			if p.inPaste {
				p.pasted.Write(body)
			} else {
				typed = append(typed, body...)
			}
			p.partial = append([]byte(nil), b[len(b)-keep:]...)
			break
		}
		if p.inPaste {
			p.pasted.Write(b[:i])
			p.finishPaste(&typed)
		} else {
			typed = append(typed, b[:i]...)
			p.inPaste = true
			p.pasted.Reset()
		}
		b = b[i+len(marker):]
	}
	if len(typed) > 0 {
		p.push(chunk{data: editorKeys.translate(typed)})
	}
}

func (p *pump) finishPaste(typed *[]byte) {
	p.inPaste = false
	text := normalizeNewlines(p.pasted.String())
	p.pasted.Reset()
	if len(*typed) > 0 {
		p.push(chunk{data: editorKeys.translate(*typed)})
		*typed = nil
	}
	p.mu.Lock()
	p.pastes = append(p.pastes, text)
	p.queue = append(p.queue, chunk{data: pasteMarker})
	p.cond.Broadcast()
	p.mu.Unlock()
}

// markerPrefixLen is the length of the longest suffix of b that is a proper
// prefix of marker.
func markerPrefixLen(b, marker []byte) int {
	for n := min(len(marker)-1, len(b)); n > 0; n-- {
		if bytes.HasSuffix(b, marker[:n]) {
			return n
		}
	}
	return 0
}

// normalizeNewlines turns the CR that terminals send for Enter in a paste
// into LF.
func normalizeNewlines(s string) string {
	if !bytes.ContainsRune([]byte(s), '\r') {
		return s
	}
	b := bytes.ReplaceAll([]byte(s), []byte("\r\n"), []byte("\n"))
	return string(bytes.ReplaceAll(b, []byte("\r"), []byte("\n")))
}

// takePaste returns the oldest paste not yet taken.
func (p *pump) takePaste() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pastes) == 0 {
		return "", false
	}
	s := p.pastes[0]
	p.pastes = p.pastes[1:]
	p.held = false
	p.cond.Broadcast()
	return s, true
}

// setEditor lets the line editor read (a prompt is up) or not. Without a
// prompt, a read of the terminal under way stops, so that the keys go to
// whoever reads next.
func (p *pump) setEditor(on bool) {
	p.mu.Lock()
	p.openLocked(on, on)
	reading := p.reading
	p.mu.Unlock()
	if !on && reading {
		p.src.wake()
	}
}

func (p *pump) openLocked(on, granted bool) {
	p.editorOn = on
	p.granted = granted
	p.interrupted = false
	if on {
		p.handed.Store(0)
		p.seen.Store(0)
	}
	p.cond.Broadcast()
}

// idle reports whether nothing waits for the editor: no keys queued or
// held back, no paste under way. The prompt's first keys may then be
// read by the editor's own goroutine (see Editor.typeLine).
func (p *pump) idle() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue) == 0 && len(p.pastes) == 0 && !p.held && !p.inPaste && len(p.partial) == 0 && p.err == nil
}

// typing says the editor's own goroutine is reading the terminal
// (Editor.typeLine) while readline does not: a Ctrl-C between prompts
// (ctrlCBetweenPrompts) then wakes that read, as it would the pump's.
func (p *pump) typing(on bool) {
	p.mu.Lock()
	p.reading = on
	p.mu.Unlock()
}

// open lets the line editor read, as setEditor(true) does, with key, if
// not nil, the first byte of a key that the editor's goroutine read and
// readline is to handle: it and the bytes after it that are already
// there go first, read as the pump reads keys.
func (p *pump) open(key []byte) {
	ended := false
	if len(key) > 0 {
		ended = p.readFrom(key[0])
	}
	p.mu.Lock()
	p.openLocked(true, !ended)
	p.mu.Unlock()
}

// editorReader is the line editor's stdin.
type editorReader struct{ p *pump }

// Read hands the editor bytes up to and including the first line end, so
// the editor's own buffer never holds input that belongs to whoever reads
// after it.
func (r editorReader) Read(b []byte) (int, error) {
	// readline's reader hands each key to its editing goroutine and reads
	// again at once; that goroutine, which echoes the key, is ready to run
	// but waits for this one to block. Yield to it first: the key is
	// echoed before the terminal is read again (three system calls and a
	// park sooner).
	runtime.Gosched()
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	w := &editorWait{p: p}
	defer w.done()
	if err := p.waitForKeys(w); err != nil {
		return 0, err
	}
	return p.takeKeys(b), nil
}

// editorWait tells editorWaits, once, that the editor waits for keys, and
// when they come.
type editorWait struct {
	p      *pump
	waited bool
}

// start is called with mu held.
func (w *editorWait) start() {
	if !w.waited && w.p.editorWaits != nil {
		w.p.editorWaits(true)
	}
	w.waited = true
}

// idle is start for the goroutine reading the terminal, without mu.
func (w *editorWait) idle() {
	w.p.mu.Lock()
	w.start()
	w.p.mu.Unlock()
}

func (w *editorWait) done() {
	if w.waited && w.p.editorWaits != nil {
		w.p.editorWaits(false)
	}
}

// waitForKeys returns, with mu held, once the queue has keys for the
// editor, reading the terminal for them while the prompt may.
func (p *pump) waitForKeys(w *editorWait) error {
	for {
		if p.editorOn && !p.held && !p.interrupted && len(p.queue) > 0 {
			return nil
		}
		if p.err != nil {
			return p.err
		}
		if p.editorOn && !p.held && p.granted && !p.reading {
			p.reading = true
			p.mu.Unlock()
			ended, err := p.readKeys(w.idle)
			p.mu.Lock()
			p.reading = false
			if ended {
				p.granted = false // until the next prompt
			}
			if err != nil && !errors.Is(err, errWoken) {
				p.err = err
			}
			continue
		}
		w.start()
		p.cond.Wait()
	}
}

// takeKeys moves into b the keys at the head of the queue, up to a line
// end or a paste (mu held).
func (p *pump) takeKeys(b []byte) int {
	c := &p.queue[0]
	end := len(c.data)
	if i := bytes.IndexAny(c.data, "\r\n\x03\x04"); i >= 0 {
		end = i + 1
	}
	if bytes.HasPrefix(c.data, pasteMarker) {
		// The editor returns on the marker; what follows it is for the
		// next prompt, after the REPL has taken the paste.
		end = len(pasteMarker)
		p.held = true
	} else if i := bytes.Index(c.data[:end], pasteMarker); i >= 0 {
		end = i
	}
	n := copy(b, c.data[:end])
	p.handed.Add(int64(n))
	if n > 0 && b[n-1] == ctrlC {
		p.interrupted = true
	}
	c.data = c.data[n:]
	if len(c.data) == 0 {
		p.queue = p.queue[1:]
	}
	return n
}

// Close is called by readline's Close; the pump outlives it.
func (r editorReader) Close() error { return nil }

// ctrlCBetweenPrompts hands the line editor a Ctrl-C key for a Ctrl-C that
// came as a signal while no code ran: between two prompts the terminal is
// cooked, and the key would otherwise be lost where python3 reports it.
// Keys read ahead are dropped, as the terminal drops its queue on a Ctrl-C.
func (p *pump) ctrlCBetweenPrompts() {
	p.mu.Lock()
	p.queue = []chunk{{data: []byte{3}}}
	reading := p.reading
	p.cond.Broadcast()
	p.mu.Unlock()
	if reading {
		p.src.wake() // the editor waits in a read of the terminal
	}
}

// keyMap rewrites keys the line editor does not know into ones it does.
type keyMap []struct{ from, to []byte }

// editorKeys are the common keys chzyer/readline misses that GNU readline
// (and so python3) takes from Debian's /etc/inputrc: Home and End as
// tmux, screen and rxvt send them, and Ctrl-Left/Right as word moves.
var editorKeys = keyMap{
	{[]byte("\x1b[1~"), []byte{readline.CharLineStart}}, // Home
	{[]byte("\x1b[7~"), []byte{readline.CharLineStart}}, // Home (rxvt)
	{[]byte("\x1b[4~"), []byte{readline.CharLineEnd}},   // End
	{[]byte("\x1b[8~"), []byte{readline.CharLineEnd}},   // End (rxvt)
	{[]byte("\x1b[1;5D"), []byte("\x1bb")},              // Ctrl-Left: back a word
	{[]byte("\x1b[1;5C"), []byte("\x1bf")},              // Ctrl-Right: forward a word
	{[]byte("\x1b[5D"), []byte("\x1bb")},
	{[]byte("\x1b[5C"), []byte("\x1bf")},
}

// translate rewrites b (keys as the terminal sent them, with no sequence
// cut short: see prefixLen) with m.
func (m keyMap) translate(b []byte) []byte {
	if bytes.IndexByte(b, 0x1b) < 0 {
		return b
	}
	for _, k := range m {
		if bytes.Contains(b, k.from) {
			b = bytes.ReplaceAll(b, k.from, k.to)
		}
	}
	return b
}

// prefixLen is the length of the longest suffix of b that is the start of
// a key m rewrites, which a read can cut off from the rest of its sequence.
func (m keyMap) prefixLen(b []byte) int {
	n := 0
	for _, k := range m {
		n = max(n, markerPrefixLen(b, k.from))
	}
	return n
}
