package term

import (
	"io"
	"testing"
)

// bytesLeft is a byteReader over a string; what is left after a key is
// what the terminal would still hold.
type bytesLeft struct{ s string }

func (b *bytesLeft) next() (byte, error) {
	if b.s == "" {
		return 0, io.EOF
	}
	c := b.s[0]
	b.s = b.s[1:]
	return c, nil
}

func (b *bytesLeft) ready() (byte, bool) {
	c, err := b.next()
	return c, err == nil
}

func (b *bytesLeft) unread(c byte) { b.s = string(c) + b.s }

// Each key is read whole and nothing after it: sequences with their
// parameters, Meta keys, characters of several bytes, a paste up to its
// end marker (line ends made line feeds), and a Ctrl-C that cuts a
// sequence short.
func TestReadKeyTakesOneKeyAndNothingMore(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     key
		left     string
	}{
		{"a character", "ab", key{kind: keyChar, r: 'a'}, "b"},
		{"Enter", "\rx", key{kind: keyCtrl, r: '\r'}, "x"},
		{"Up", "\x1b[Ax", key{kind: keyCSI, seq: "A"}, "x"},
		{"Up in application mode", "\x1bOAx", key{kind: keyCSI, seq: "A"}, "x"},
		{"Ctrl-Left", "\x1b[1;5Dx", key{kind: keyCSI, seq: "1;5D"}, "x"},
		{"Delete", "\x1b[3~x", key{kind: keyCSI, seq: "3~"}, "x"},
		{"an Enter ends a sequence", "\x1b[\r\r", key{kind: keyCSI, seq: "\r"}, "\r"},
		{"Ctrl-C cuts a sequence short", "\x1b[1\x03x", key{kind: keyCtrl, r: ctrlC}, "x"},
		{"Ctrl-C after ESC", "\x1b\x03x", key{kind: keyCtrl, r: ctrlC}, "x"},
		{"Meta-b", "\x1bbx", key{kind: keyMeta, r: 'b'}, "x"},
		{"Meta-DEL", "\x1b\x7fx", key{kind: keyMeta, r: 0x7f}, "x"},
		{"two bytes", "éx", key{kind: keyChar, r: 'é'}, "x"},
		{"four bytes", "😀x", key{kind: keyChar, r: '😀'}, "x"},
		{"a stray continuation byte", "\x80x", key{kind: keyChar, r: '\uFFFD'}, "x"},
		{"a character cut short by a key", "\xe4\xb8x", key{kind: keyChar, r: '\uFFFD'}, "x"},
		{"a paste", "\x1b[200~a\r\nb\rc\x1b[201~x", key{kind: keyPaste, text: "a\nb\nc"}, "x"},
		{"a paste with bytes that are no UTF-8", "\x1b[200~'\xff\xfe'\x1b[201~", key{kind: keyPaste, text: "'\xff\xfe'"}, ""},
	} {
		in := &bytesLeft{c.in[1:]}
		got, err := readKey(c.in[0], in, false)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want || in.s != c.left {
			t.Errorf("%s: read %+v leaving %q, want %+v leaving %q", c.name, got, in.s, c.want, c.left)
		}
	}
}

// A terminal that goes away in the middle of a key is an error, not a
// key.
func TestReadKeyCutOff(t *testing.T) {
	for _, in := range []string{"\x1b", "\x1b[1", "\xe4\xb8", "\x1b[200~abc"} {
		if k, err := readKey(in[0], &bytesLeft{in[1:]}, false); err == nil {
			t.Errorf("%q: read %+v, want an error", in, k)
		}
	}
}
