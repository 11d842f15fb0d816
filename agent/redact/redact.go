package redact

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Policy says what is secret besides the well-known token formats.
type Policy struct {
	Secrets []Secret // exact values pyaichat holds (the configured API key...)
	Environ []string // "NAME=value" entries, as os.Environ() returns
	Hide    []string // extra environment variable names to treat as secret
	Allow   []string // environment variable names never treated as secret
}

// Secret is one exact value to remove, with the kind its marker names.
type Secret struct{ Kind, Value string }

// minSecretLen is the shortest exact value redacted: shorter configured
// keys are dummies ("x", "none", "ollama") whose removal would only damage
// ordinary words.
const minSecretLen = MinSecretLen

// MinSecretLen is the length in bytes below which a known value (a
// configured key, an environment value) is never redacted.
const MinSecretLen = 8

// Filter finds and replaces secrets. It is safe for concurrent use.
//
// A nil *Filter is usable: it redacts the built-in formats and
// high-entropy strings only, and SecretName applies the built-in rule.
type Filter struct {
	values []Secret // exact values, each at least minSecretLen bytes
	allow  map[string]bool
	hide   map[string]bool
	// known holds the values whose transformed forms are looked for:
	// values, and what the filter has redacted since (nil in the
	// shared nil-Filter stand-in, which learns nothing).
	known *knownSet
	// environ is the policy's environment, judged by value on first need
	// (judgeValues): byValue names the variables whose values look
	// secret although their names do not.
	environ   []string
	judgeOnce sync.Once
	byValue   map[string]bool
}

// New builds a Filter for the policy; New(Policy{}) is cheap and behaves
// like a nil Filter. The environment is read once, here;
// later changes to the process environment need a new Filter.
func New(p Policy) *Filter {
	f := &Filter{allow: upperSet(p.Allow), hide: upperSet(p.Hide), known: newKnownSet(), environ: p.Environ}
	seen := make(map[string]bool)
	add := func(kind, v string) {
		if len(v) < minSecretLen || seen[v] {
			return
		}
		seen[v] = true
		f.values = append(f.values, Secret{Kind: kind, Value: v})
	}
	for _, s := range p.Secrets {
		kind := s.Kind
		if kind == "" {
			kind = "secret"
		}
		add(kind, s.Value)
	}
	for _, e := range p.Environ {
		name, value, ok := strings.Cut(e, "=")
		if !ok {
			continue
		}
		if pw := urlPassword(value); pw != "" {
			add(kindURLPassword, pw)
		}
		if f.SecretName(name) && !looksLikePath(value) {
			add("value of $"+name, value)
		}
	}
	// Longer values first, so that when one value contains another the
	// longer one is found and wins the overlap.
	sort.SliceStable(f.values, func(i, j int) bool {
		return len(f.values[i].Value) > len(f.values[j].Value)
	})
	for _, v := range f.values {
		f.known.add(v.Kind, v.Value, false)
	}
	return f
}

// judgeValues finds, once, the environment variables whose names say
// nothing but whose values hold a password in a URL, a known token format
// or a generated-looking string, and makes those values known. It runs on
// first need, not in New: the format rules take a millisecond to compile.
func (f *Filter) judgeValues() {
	f.judgeOnce.Do(func() {
		f.byValue = map[string]bool{}
		for _, e := range f.environ {
			name, value, ok := strings.Cut(e, "=")
			if !ok || f.SecretName(name) || f.allow[strings.ToUpper(name)] || looksLikePath(value) {
				continue
			}
			var fs []finding
			fs = findFormats(value, fs)
			fs = findEntropy(value, fs)
			for _, k := range resolve(fs) {
				f.byValue[name] = true
				f.known.add(k.kind, value[k.start:k.end], false)
			}
		}
	})
}

// SecretVar reports whether the copy where expressions run must wipe the
// variable: its name looks secret (SecretName), or its value does
// (DATABASE_URL with a password, a token under an ordinary name). A nil
// Filter judges names only.
func (f *Filter) SecretVar(name string) bool {
	if f.SecretName(name) {
		return true
	}
	if f == nil || f.known == nil || f.allow[strings.ToUpper(name)] {
		return false
	}
	f.judgeValues()
	return f.byValue[name]
}

// learn makes the values of the formats and high-entropy strings just
// redacted known, so that their transformed forms are caught later.
func (f *Filter) learn(s string, kept []finding) {
	if f == nil || f.known == nil {
		return
	}
	for _, k := range kept {
		if k.prec == precFormat || k.prec == precEntropy {
			f.known.add(k.kind, s[k.start:k.end], true)
		}
	}
}

func upperSet(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[strings.ToUpper(n)] = true
	}
	return m
}

// looksLikePath tells an environment value that names a file (a key file,
// a credentials file) from the secret itself; paths recur in every
// traceback, and hiding them hides nothing.
func looksLikePath(v string) bool {
	if !(strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./")) {
		return false
	}
	return strings.Count(v, "/") >= 2 && !strings.ContainsAny(v, " \t\n")
}

// Source precedence, used to break ties between overlapping findings of
// equal length: smaller wins.
const (
	precMarker = iota // an existing marker: never touched
	precExact
	precFormat
	precDerived // a known secret transformed: it names the secret
	precEntropy
)

// finding is a span of the text to replace. kind "" protects a span (an
// existing marker) without replacing it.
type finding struct {
	start, end int
	prec       int // source precedence
	rank       int // order among formats: more specific first
	kind       string
}

var defaultFilter = &Filter{}

// Text returns s with every secret replaced by a marker, and what it
// replaced.
func (f *Filter) Text(s string) (string, Report) {
	if f == nil {
		f = defaultFilter
	}
	if f.known != nil {
		f.judgeValues()
	}
	var fs []finding
	fs = findMarkers(s, fs)
	fs = f.findValues(s, fs)
	fs = findFormats(s, fs)
	fs = findEntropy(s, fs)
	fs = f.findDerived(s, fs)
	if len(fs) == 0 {
		return s, Report{}
	}
	kept := resolve(fs)
	f.learn(s, kept)
	return apply(s, kept)
}

// findMarkers protects markers already in s, so Text applied twice gives
// the same result as once.
func findMarkers(s string, fs []finding) []finding {
	for off := 0; ; {
		i := strings.Index(s[off:], markerPrefix)
		if i < 0 {
			return fs
		}
		start := off + i
		j := strings.IndexAny(s[start+len(markerPrefix):], "<>\n")
		if j < 0 || s[start+len(markerPrefix)+j] != '>' {
			off = start + len(markerPrefix)
			continue
		}
		end := start + len(markerPrefix) + j + 1
		if strings.HasSuffix(s[start:end], " chars>") {
			fs = append(fs, finding{start: start, end: end, prec: precMarker})
		}
		off = end
	}
}

// findValues finds the policy's exact values where they stand as whole
// tokens: "sk-abc12345" is not found inside "sk-abc123456". A value of
// LongSecretLen bytes or more is found anywhere: it cannot occur by
// chance, and a server may glue it to other text.
func (f *Filter) findValues(s string, fs []finding) []finding {
	for _, v := range f.values {
		for off := 0; off < len(s); {
			i := strings.Index(s[off:], v.Value)
			if i < 0 {
				break
			}
			start, end := off+i, off+i+len(v.Value)
			if len(v.Value) >= LongSecretLen || wholeToken(s, start, end) {
				fs = append(fs, finding{start: start, end: end, prec: precExact, kind: v.Kind})
				off = end
			} else {
				off = start + 1
			}
		}
	}
	return fs
}

// tokenByte is the character class that may not touch a whole token.
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// wholeToken reports whether s[start:end] is not glued to neighbouring
// token characters. An escape such as the two characters `\n` in a Python
// repr counts as a separator, although its 'n' is a letter.
func wholeToken(s string, start, end int) bool {
	if start > 0 && tokenByte(s[start-1]) && !escapedAt(s, start-1) {
		return false
	}
	return end >= len(s) || !tokenByte(s[end])
}

// escapedAt reports whether s[i] is the letter of a backslash escape
// (\n, \r, \t).
func escapedAt(s string, i int) bool {
	if i < 1 || s[i-1] != '\\' {
		return false
	}
	c := s[i]
	return c == 'n' || c == 'r' || c == 't'
}

// resolve keeps one finding per span of text: markers first, then exact
// values, then formats, then entropy; within a source the longest, then
// the most specific. A finding that overlaps one already kept is dropped.
func resolve(fs []finding) []finding {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.prec != b.prec {
			return a.prec < b.prec
		}
		if la, lb := a.end-a.start, b.end-b.start; la != lb {
			return la > lb
		}
		return a.rank < b.rank
	})
	kept := fs[:0:0]
	for _, c := range fs {
		if !overlapsAny(kept, c) {
			kept = append(kept, c)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].start < kept[j].start })
	return kept
}

func overlapsAny(kept []finding, c finding) bool {
	for _, k := range kept {
		if c.start < k.end && k.start < c.end {
			return true
		}
	}
	return false
}

// apply writes s with each kept finding replaced by its marker.
func apply(s string, kept []finding) (string, Report) {
	var b strings.Builder
	var r Report
	b.Grow(len(s))
	last := 0
	for _, k := range kept {
		if k.kind == "" {
			continue
		}
		b.WriteString(s[last:k.start])
		b.WriteString(Marker(k.kind, utf8.RuneCountInString(s[k.start:k.end])))
		r.note(k.kind)
		last = k.end
	}
	if r.Count == 0 {
		return s, Report{}
	}
	b.WriteString(s[last:])
	return b.String(), r
}

// LongSecretLen is the length from which a known value is redacted
// wherever it occurs, not only as a whole token.
const LongSecretLen = 20

// ReplaceToken replaces value in s with repl wherever value is a whole
// token (anywhere, from LongSecretLen bytes), and only when value is long
// enough to be a secret: the display's
// redaction of the API key, where a dummy key such as "x" must never turn
// "fox" into "fo[key]".
func ReplaceToken(s, value, repl string) string {
	if len(value) < minSecretLen || !strings.Contains(s, value) {
		return s
	}
	var b strings.Builder
	rest, at := s, 0
	for {
		i := strings.Index(rest, value)
		if i < 0 {
			break
		}
		start, end := at+i, at+i+len(value)
		b.WriteString(s[at:start])
		if len(value) >= LongSecretLen || wholeToken(s, start, end) {
			b.WriteString(repl)
		} else {
			b.WriteString(value)
		}
		at = end
		rest = s[at:]
	}
	b.WriteString(rest)
	return b.String()
}
