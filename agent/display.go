package agent

import (
	"strings"

	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/redact"
)

// Everything a model or a server sends reaches the terminal made visible
// (termsafe.Visible): the view (agent/view) makes visible what it shows,
// and Session.clean the errors the REPL prints, preview the result asked
// about under share = "ask". pyaichat adds its own styling only after the
// text has been made visible.

// keyFilter redacts the key from text that arrives in pieces: a key split
// across stream deltas ("sk-SEC" then "RET123") is whole in neither piece.
// It holds back the longest tail that could still be the start of the key
// until more text or the end of the answer arrives; ordinary text is held
// back only when it ends like the key begins.
type keyFilter struct {
	key  string
	tail string
}

// push returns the part of the text so far that is safe to show.
func (k *keyFilter) push(s string) string {
	if k.key == "" {
		return s
	}
	s = k.tail + s
	n := keyPrefixTail(s, k.key)
	k.tail = s[len(s)-n:]
	return llm.RedactKey(s[:len(s)-n], k.key)
}

// flush returns what push held back, at the end of the text, where a
// whole key is one.
func (k *keyFilter) flush() string {
	t := k.tail
	k.tail = ""
	return llm.RedactKey(t, k.key)
}

// keyPrefixTail is the length of the longest end of s that is a prefix of
// key (the whole key too: whether it is a whole token depends on the byte
// that follows). Only positions holding key's first byte are tried, so a
// delta costs about len(key) byte comparisons.
func keyPrefixTail(s, key string) int {
	if len(key) < redact.MinSecretLen {
		return 0
	}
	for i := max(0, len(s)-len(key)); i < len(s); i++ {
		if s[i] == key[0] && strings.HasPrefix(key, s[i:]) {
			return len(s) - i
		}
	}
	return 0
}
