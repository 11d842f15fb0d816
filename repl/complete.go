package repl

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pyaichat/pyaichat/repl/term"
)

// completion is TAB after a name or an attribute being typed at py>
// ("json.du", "imp", "json."), or where a call's argument starts
// ("f(", "f(a, se"): the one way it can go on is inserted, and where
// there are several, what they share is, and they are listed below the
// line. ok is false where nothing is being typed that completes: TAB then
// does what it does elsewhere.
func (r *Loop) completion(before string) (a term.KeyAction, ok bool) {
	names, prefix := r.completions(before)
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

// completions are the ways the text before the cursor can go on, and the
// start of the name they complete.
func (r *Loop) completions(before string) (names []string, prefix string) {
	path, prefix, ok := nameAtEnd(before)
	if !ok && strings.HasSuffix(before, ".") {
		// "json." lists every public attribute: nothing typed of it yet.
		path, _, ok = nameAtEnd(before + "_")
		ok, prefix = ok && len(path) > 0, ""
	}
	var args []string
	if callee, inCall := calleeAt(before, prefix); inCall && len(path) == 0 && r.opts.Arguments != nil {
		args = r.opts.Arguments(callee, prefix)
	}
	switch {
	case ok:
		names = args
		for _, n := range r.candidates(path, prefix) {
			if !slices.Contains(args, n+"=") { // the argument says it better
				names = append(names, n)
			}
		}
		return names, prefix
	case !inStringOrComment(before):
		return args, "" // "f(": the call's keyword arguments alone
	}
	if partial, ok := stringAtEnd(before); ok {
		return pathCompletions(partial)
	}
	return nil, ""
}

// maxPathChoices bounds the directory entries read for one TAB.
const maxPathChoices = 1000

// pathCompletions are the files and directories the path being typed in
// a string may go on to (a directory's name ends in a slash), and the
// start of the name they complete. Hidden ones are listed only when the
// name starts with a dot.
func pathCompletions(partial string) (names []string, prefix string) {
	dir, base := filepath.Split(partial)
	read := dir
	if home, err := os.UserHomeDir(); err == nil && strings.HasPrefix(read, "~/") {
		read = filepath.Join(home, read[2:])
	}
	if read == "" {
		read = "."
	}
	f, err := os.Open(read)
	if err != nil {
		return nil, ""
	}
	defer f.Close()
	entries, _ := f.ReadDir(maxPathChoices)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, base
}

// stringAtEnd is the text of the string literal the line (or a block's
// last row) ends inside, from its opening quote; ok is false outside one.
func stringAtEnd(s string) (text string, ok bool) {
	row, start, _ := rowEnd(s)
	if start < 0 {
		return "", false
	}
	return row[start:], true
}

// calleeAt is the dotted name of the call whose arguments the cursor is
// in, when the name being typed (prefix) starts an argument: right after
// the call's opening bracket or a comma.
func calleeAt(before, prefix string) ([]string, bool) {
	head := strings.TrimRight(strings.TrimSuffix(before, prefix), " \t")
	if !strings.HasSuffix(head, ",") && !strings.HasSuffix(head, "(") {
		return nil, false
	}
	open := openParen(head)
	if open < 0 {
		return nil, false
	}
	path, last, ok := nameAtEnd(head[:open])
	if !ok {
		return nil, false
	}
	return append(path, last), true
}

// openParen is where the call bracket that is still open at the end of s
// starts, or -1 (brackets inside strings are not followed: a guess, as
// suggestions are).
func openParen(s string) int {
	var opens []int
	for i, c := range s {
		switch c {
		case '(', '[', '{':
			opens = append(opens, i)
		case ')', ']', '}':
			if len(opens) > 0 {
				opens = opens[:len(opens)-1]
			}
		}
	}
	if len(opens) == 0 || s[opens[len(opens)-1]] != '(' {
		return -1
	}
	return opens[len(opens)-1]
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
	for n > 0 && n < len(a) && !utf8.RuneStart(a[n]) {
		n--
	}
	return a[:n]
}
