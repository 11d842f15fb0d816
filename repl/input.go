package repl

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/chzyer/readline"

	"github.com/pyaichat/pyaichat/pybridge"
)

// Bracketed paste markers (xterm): the terminal wraps pasted text in them
// while mode 2004 is on.
var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// pasteRune is sent to the line editor in place of a paste. The editor's
// input filter turns it into Enter, so the editor returns the text typed so
// far and the REPL takes the paste from the pump. It is a private-use
// character that no terminal sends.
const pasteRune = '\ue000'

var pasteMarker = []byte(string(pasteRune))

// chunk is a piece of terminal input, or an end-of-file mark (Ctrl-D on an
// empty line in the terminal's cooked mode; the terminal stays usable).
type chunk struct {
	data []byte
	eof  bool
}

// pump is the only reader of the terminal. chzyer/readline reads stdin from
// a goroutine of its own, which would steal the keystrokes meant for the
// user's input(); instead readline reads from the pump, which hands bytes to
// the line editor only while a prompt is up and to Python's input()
// otherwise. It also lifts bracketed pastes out of the stream before the
// editor sees them: readline redraws the whole line per rune, which made a
// 20,000-character paste take over a minute.
type pump struct {
	src io.Reader
	tty bool // src is a terminal: a read of 0 bytes is Ctrl-D, not the end

	mu        sync.Mutex
	cond      *sync.Cond
	queue     []chunk
	err       error // permanent read error (terminal gone)
	editorOn  bool  // the line editor may read
	pastes    []string
	held      bool   // a paste marker went to the editor; wait for takePaste
	interrupt uint64 // bumped by Ctrl-C to wake a blocked Python read
	// editorWaits, if set, is told (under mu) when the editor's reader
	// blocks for input and when input comes: the editor's output is sent
	// once it has handled all the keys it was given.
	editorWaits func(waiting bool)

	// Paste scanner state, touched only by the reading goroutine.
	inPaste bool
	pasted  bytes.Buffer
	partial []byte // a possible marker prefix held back between reads
}

func newPump(src io.Reader, tty bool) *pump {
	p := &pump{src: src, tty: tty}
	p.cond = sync.NewCond(&p.mu)
	go p.run()
	return p
}

func (p *pump) run() {
	buf := make([]byte, 64*1024)
	for {
		n, err := p.src.Read(buf)
		if n > 0 {
			p.scan(buf[:n])
		}
		if err != nil {
			if errors.Is(err, io.EOF) && p.tty {
				// Ctrl-D in cooked mode: one EOF, and the terminal goes on.
				p.push(chunk{eof: true})
				continue
			}
			p.mu.Lock()
			p.err = err
			p.cond.Broadcast()
			p.mu.Unlock()
			return
		}
		if n == 0 && p.tty {
			p.push(chunk{eof: true})
		}
	}
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
			// Hold back a tail that could be the start of a split marker.
			keep := markerPrefixLen(b, marker)
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
		p.push(chunk{data: typed})
	}
}

func (p *pump) finishPaste(typed *[]byte) {
	p.inPaste = false
	text := normalizeNewlines(p.pasted.String())
	p.pasted.Reset()
	if len(*typed) > 0 {
		p.push(chunk{data: *typed})
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

// setEditor lets the line editor read (at a prompt) or not (code running).
func (p *pump) setEditor(on bool) {
	p.mu.Lock()
	p.editorOn = on
	p.cond.Broadcast()
	p.mu.Unlock()
}

// editorReader is the line editor's stdin.
type editorReader struct{ p *pump }

// Read hands the editor bytes up to and including the first line end, so
// the editor's own buffer never holds input that belongs to the next
// input() call.
func (r editorReader) Read(b []byte) (int, error) {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	waited := false
	defer func() {
		if waited && p.editorWaits != nil {
			p.editorWaits(false)
		}
	}()
	for {
		if p.editorOn && len(p.queue) > 0 && p.queue[0].eof {
			// Ctrl-D typed ahead while code ran (the terminal was cooked):
			// it is still Ctrl-D to the editor.
			p.queue[0] = chunk{data: []byte{4}}
		}
		if p.editorOn && !p.held && len(p.queue) > 0 {
			break
		}
		if p.err != nil {
			return 0, p.err
		}
		if !waited && p.editorWaits != nil {
			p.editorWaits(true)
		}
		waited = true
		p.cond.Wait()
	}
	c := &p.queue[0]
	c.data = editorKeys.translate(c.data)
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
	c.data = c.data[n:]
	if len(c.data) == 0 {
		p.queue = p.queue[1:]
	}
	return n, nil
}

// Close is called by readline's Close; the pump outlives it.
func (r editorReader) Close() error { return nil }

// readLine serves input() and sys.stdin while code runs: the terminal is in
// cooked mode, so the kernel echoes and edits the line. A CR typed ahead in
// raw mode also ends a line.
func (p *pump) readLine(prompt string, showPrompt bool, out io.Writer) (string, error) {
	if showPrompt && prompt != "" {
		io.WriteString(out, prompt)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	gen := p.interrupt
	var line []byte
	for {
		if p.interrupt != gen {
			return "", pybridge.ErrInterrupted
		}
		if len(p.queue) > 0 {
			c := &p.queue[0]
			if c.eof {
				p.queue = p.queue[1:]
				if len(line) > 0 {
					return string(line), nil
				}
				return "", io.EOF
			}
			if i := bytes.IndexAny(c.data, "\r\n"); i >= 0 {
				line = append(line, c.data[:i]...)
				line = append(line, '\n')
				c.data = c.data[i+1:]
				if len(c.data) == 0 {
					p.queue = p.queue[1:]
				}
				return string(line), nil
			}
			line = append(line, c.data...)
			p.queue = p.queue[1:]
			continue
		}
		if p.err != nil {
			if len(line) > 0 {
				return string(line), nil
			}
			return "", io.EOF
		}
		p.cond.Wait()
	}
}

// interruptRead wakes a Python read blocked in readLine (Ctrl-C).
func (p *pump) interruptRead() {
	p.mu.Lock()
	p.interrupt++
	p.cond.Broadcast()
	p.mu.Unlock()
}

// ctrlCBetweenPrompts hands the line editor a Ctrl-C key for a Ctrl-C that
// came as a signal while no code ran: between two prompts the terminal is
// cooked, and the key would otherwise be lost where python3 reports it.
// Input typed ahead is dropped, as the terminal drops it on a Ctrl-C.
func (p *pump) ctrlCBetweenPrompts() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.editorWaits == nil {
		return // no line editor: a plain reader has no key for it
	}
	p.queue = []chunk{{data: []byte{3}}}
	p.cond.Broadcast()
}

// discardTyped drops input typed while code ran that nobody read; used when
// Ctrl-C interrupts code, as the terminal itself flushes its queue then.
func (p *pump) discardTyped() {
	p.mu.Lock()
	p.queue = nil
	p.mu.Unlock()
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

// translate rewrites b (a chunk of keys as the terminal sent them, which
// sends each key's sequence whole) with m.
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
