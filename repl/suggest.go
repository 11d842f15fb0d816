package repl

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// suggest is the line editor's Suggest hook: at py>, the rest of the name
// or attribute being typed at the end of line, from the interpreter
// (Options.Complete: the namespace, builtins, keywords, module and class
// attributes) or else from the names in py>'s history. Nothing at ai>.
func (r *Loop) suggest(line string) string {
	if mode, _ := r.state.get(); mode != ModePy {
		return ""
	}
	path, prefix, ok := nameAtEnd(line)
	if !ok {
		return ""
	}
	if rest := r.opts.Complete(path, prefix); rest != "" {
		return rest
	}
	if len(path) > 0 || r.hist == nil {
		return ""
	}
	return historyName(r.hist.py.entries, prefix)
}

// nameAtEnd splits the dotted name that line ends with ("x = os.pa") into
// the names before the last dot (["os"]) and the start of the last ("pa").
// ok is false where no name is being typed: nothing typed of it, a number,
// a name inside a string or after a comment.
func nameAtEnd(line string) (path []string, prefix string, ok bool) {
	i := len(line)
	for i > 0 {
		c, n := utf8.DecodeLastRuneInString(line[:i])
		if !isNameRune(c) && c != '.' {
			break
		}
		i -= n
	}
	word := line[i:]
	parts := strings.Split(word, ".")
	prefix = parts[len(parts)-1]
	path = parts[:len(parts)-1]
	if prefix == "" || !startsName(prefix) {
		return nil, "", false
	}
	for _, p := range path {
		if !startsName(p) {
			return nil, "", false
		}
	}
	if inStringOrComment(line[:i]) {
		return nil, "", false
	}
	return path, prefix, true
}

func isNameRune(c rune) bool {
	return c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c)
}

func startsName(s string) bool {
	c, _ := utf8.DecodeRuneInString(s)
	return c == '_' || unicode.IsLetter(c)
}

// inStringOrComment reports whether the end of s (one line of Python, or
// the last row of a block) is inside a string literal or a comment.
func inStringOrComment(s string) bool {
	_, start, comment := rowEnd(s)
	return start >= 0 || comment >= 0
}

// rowEnd scans the last row of s (one line of Python, or the last row of
// a block) for its quotes: the row, where the text of the string literal
// it ends inside starts (-1 outside one), and where the comment it ends
// in starts (-1 for none). Triple quotes spanning rows are not followed.
func rowEnd(s string) (row string, stringStart, comment int) {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	var quote string
	start := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != "":
			if c == '\\' {
				i++
			} else if strings.HasPrefix(s[i:], quote) {
				i += len(quote) - 1
				quote, start = "", -1
			}
		case c == '#':
			return s, -1, i
		case c == '\'' || c == '"':
			quote = string(c)
			if strings.HasPrefix(s[i:], strings.Repeat(quote, 3)) {
				quote = strings.Repeat(quote, 3)
			}
			start = min(i+len(quote), len(s))
			i += len(quote) - 1
		}
	}
	return s, start, -1
}

// historyName is the rest of a name in py>'s history that starts with
// prefix, from the most recent entry that has one: the shortest there.
func historyName(entries []string, prefix string) string {
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		best := ""
		for from := 0; ; {
			j := strings.Index(e[from:], prefix)
			if j < 0 {
				break
			}
			j += from
			from = j + len(prefix)
			if j > 0 {
				if c, _ := utf8.DecodeLastRuneInString(e[:j]); isNameRune(c) {
					continue // inside another name
				}
			}
			end := from
			for end < len(e) {
				c, n := utf8.DecodeRuneInString(e[end:])
				if !isNameRune(c) {
					break
				}
				end += n
			}
			if end > from && (best == "" || end-from < len(best)) {
				best = e[from:end]
			}
		}
		if best != "" {
			return best
		}
	}
	return ""
}
