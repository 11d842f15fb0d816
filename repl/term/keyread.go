package term

import (
	"bytes"
	"unicode/utf8"
)

// keyKind says what a key is.
type keyKind int

const (
	keyChar  keyKind = iota // a character that goes into the line (r)
	keyCtrl                 // a control key: r is its byte (Enter is '\r')
	keyMeta                 // Meta (Alt) with a key, sent as ESC and the key: r
	keyCSI                  // an escape sequence, ESC [ or ESC O: seq
	keyPaste                // a bracketed paste: text
)

// key is one key as the editor takes it.
type key struct {
	kind keyKind
	r    rune
	// seq is an escape sequence after its ESC [ or ESC O: its parameters
	// and final byte ("A", "1;5D", "3~").
	seq string
	// text is a paste's text, its line ends made line feeds.
	text string
}

// byteReader gives the key reader the terminal's bytes: next waits for
// one, ready returns one only if it can be read at once, and unread keeps
// one for the next read.
type byteReader interface {
	next() (byte, error)
	ready() (byte, bool)
	unread(b byte)
}

// readKey reads the rest of the key whose first byte is b, from r, a byte
// at a time as GNU readline reads it, so that nothing after the key is
// taken from the terminal. A Ctrl-C inside an escape sequence ends the
// sequence and is the key: the sequence was cut short. With loneEsc (vi
// mode, where Esc is a key of its own), an ESC is a key unless a sequence
// follows it at once.
func readKey(b byte, r byteReader, loneEsc bool) (key, error) {
	switch {
	case b == esc && loneEsc:
		next, ok := r.ready()
		if ok && (next == '[' || next == 'O') {
			return readSequence(r)
		}
		if ok {
			r.unread(next)
		}
		return key{kind: keyCtrl, r: esc}, nil
	case b == esc:
		return readEscape(r)
	case b < ' ' || b == 0x7f:
		return key{kind: keyCtrl, r: rune(b)}, nil
	case b < utf8.RuneSelf:
		return key{kind: keyChar, r: rune(b)}, nil
	}
	return readUTF8(b, r)
}

const esc = 0x1b

// readEscape reads what follows an ESC: a sequence, a paste, or the key
// Meta goes with.
func readEscape(r byteReader) (key, error) {
	b, err := r.next()
	if err != nil {
		return key{}, err
	}
	switch b {
	case ctrlC:
		return key{kind: keyCtrl, r: ctrlC}, nil
	case '[', 'O':
		return readSequence(r)
	}
	if b >= utf8.RuneSelf {
		k, err := readUTF8(b, r)
		return key{kind: keyMeta, r: k.r}, err
	}
	return key{kind: keyMeta, r: rune(b)}, nil
}

// readSequence reads an escape sequence's parameters and its final byte,
// as GNU readline does: digits and semicolons, then any byte, Enter
// included. A bracketed paste's start reads the paste.
func readSequence(r byteReader) (key, error) {
	var seq []byte
	for {
		b, err := r.next()
		if err != nil {
			return key{}, err
		}
		if b == ctrlC {
			return key{kind: keyCtrl, r: ctrlC}, nil
		}
		seq = append(seq, b)
		if b >= '0' && b <= '9' || b == ';' {
			continue
		}
		if string(seq) == "200~" {
			return readPaste(r)
		}
		return key{kind: keyCSI, seq: string(seq)}, nil
	}
}

// pasteEnd ends a bracketed paste (xterm): the terminal wraps pasted text
// in ESC [ 200 ~ and this while mode 2004 is on.
var pasteEnd = []byte("\x1b[201~")

// readPaste reads a paste's text up to its end marker. It reads a byte at
// a time too: the keys typed after the paste are the next reader's.
func readPaste(r byteReader) (key, error) {
	var text bytes.Buffer
	for !bytes.HasSuffix(text.Bytes(), pasteEnd) {
		b, err := r.next()
		if err != nil {
			return key{}, err
		}
		text.WriteByte(b)
	}
	text.Truncate(text.Len() - len(pasteEnd))
	return key{kind: keyPaste, text: normalizeNewlines(text.String())}, nil
}

// readUTF8 reads the rest of a character that starts with lead. A byte
// that cannot be part of one stands for itself as U+FFFD; a byte after
// it that cannot go on the character is left for the next key.
func readUTF8(lead byte, r byteReader) (key, error) {
	buf := []byte{lead}
	for !utf8.FullRune(buf) {
		b, err := r.next()
		if err != nil {
			return key{}, err
		}
		buf = append(buf, b)
	}
	c, size := utf8.DecodeRune(buf)
	if size < len(buf) && len(buf) > 1 {
		r.unread(buf[len(buf)-1])
	}
	return key{kind: keyChar, r: c}, nil
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

// ctrlC is the byte Ctrl-C sends.
const ctrlC = 3

// isLineEnd reports whether b ends a line typed ahead.
func isLineEnd(b byte) bool { return b == '\r' || b == '\n' }
