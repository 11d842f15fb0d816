package repl

import (
	"strings"

	"github.com/pyaichat/pyaichat/repl/term"
)

// completion is TAB after a name or an attribute being typed at py>
// ("json.du", "imp"): the one way it can go on is inserted, and where
// there are several, what they share is, and they are listed below the
// line. ok is false where no name is being typed or nothing completes it:
// TAB then does what it does elsewhere.
func (r *Loop) completion(before string) (a term.KeyAction, ok bool) {
	path, prefix, ok := nameAtEnd(before)
	if !ok && strings.HasSuffix(before, ".") {
		// "json." lists every public attribute: nothing typed of it yet.
		path, _, ok = nameAtEnd(before + "_")
		ok = ok && len(path) > 0
		prefix = ""
	}
	if !ok {
		return a, false
	}
	names := r.candidates(path, prefix)
	switch len(names) {
	case 0:
		return a, false
	case 1:
		return term.KeyAction{Insert: names[0][len(prefix):], Handled: true}, true
	}
	common := names[0]
	for _, n := range names[1:] {
		common = commonPrefix(common, n)
	}
	return term.KeyAction{Insert: common[len(prefix):], Choices: names, Handled: true}, true
}

// candidates are the names prefix may complete to after path: the
// interpreter's (Options.Candidates), or Complete's one suggestion, or a
// name from py>'s history.
func (r *Loop) candidates(path []string, prefix string) []string {
	if r.opts.Candidates != nil {
		if names := r.opts.Candidates(path, prefix); len(names) > 0 {
			return names
		}
	} else if r.opts.Complete != nil {
		if rest := r.opts.Complete(path, prefix); rest != "" {
			return []string{prefix + rest}
		}
	}
	if len(path) > 0 || r.hist == nil {
		return nil
	}
	if rest := historyName(r.hist.py.entries, prefix); rest != "" {
		return []string{prefix + rest}
	}
	return nil
}

// commonPrefix is the longest start a and b share, whole characters.
func commonPrefix(a, b string) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && n < len(a) && !utf8RuneStart(a[n]) {
		n--
	}
	return a[:n]
}

func utf8RuneStart(b byte) bool { return b&0xc0 != 0x80 }
