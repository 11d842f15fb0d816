package redact

import (
	"regexp"
	"strings"
	"sync"
)

// rule is one well-known secret format. Every match contains one of the
// rule's literal triggers, so the regexp runs only on a small window around
// each trigger found by a fast substring search: text without triggers
// costs a handful of strings.Index calls.
type rule struct {
	kind     string
	triggers []string // literals every match contains
	fold     bool     // triggers are lower case and searched case-insensitively
	back     int      // a match may start this many bytes before its trigger
	span     int      // and end at most this many bytes after it
	re       *regexp.Regexp
	whole    bool // the secret must be a whole token (see wholeToken)
	// ok, if set, vets a candidate secret s[start:end] in its context.
	ok func(s string, start, end int) bool
}

const (
	kindURLPassword = "password in URL"
	kindPassword    = "password"
	kindPrivateKey  = "private key"
	kindEntropy     = "high-entropy string"
)

// pemLabel is the label of a PEM private key ("RSA PRIVATE KEY", "PRIVATE
// KEY", "OPENSSH PRIVATE KEY", "PGP PRIVATE KEY BLOCK").
const pemLabel = `[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`

// formatRules are tried in this order; when two find the same span, the
// earlier (more specific) one names it: Anthropic keys also look like OpenAI
// keys. They are compiled on first use, not at start-up: compiling them
// takes about a millisecond and 450 KB, which a session that never reaches
// the assistant should not pay.
var formatRules = sync.OnceValue(func() []rule {
	return []rule{
		{kind: "Anthropic API key", triggers: []string{"sk-ant-"}, span: 512, whole: true,
			re: regexp.MustCompile(`^sk-ant-[A-Za-z0-9_-]{20,}`)},
		{kind: "OpenAI API key", triggers: []string{"sk-"}, span: 512, whole: true,
			re: regexp.MustCompile(`^sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), ok: hasDigitAndLetter},
		{kind: "GitHub token", triggers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, span: 256, whole: true,
			re: regexp.MustCompile(`^gh[pousr]_[A-Za-z0-9]{30,}`)},
		{kind: "GitHub token", triggers: []string{"github_pat_"}, span: 512, whole: true,
			re: regexp.MustCompile(`^github_pat_[A-Za-z0-9_]{22,}`)},
		{kind: "AWS access key", triggers: []string{"AKIA", "ASIA"}, span: 20, whole: true,
			re: regexp.MustCompile(`^(?:AKIA|ASIA)[A-Z0-9]{16}`), ok: plausibleAWSKeyID},
		{kind: "AWS secret key", triggers: []string{"secret"}, fold: true, back: 8, span: 160,
			re: regexp.MustCompile(`(?i)(?:aws[_-]?secret(?:[_-]?access)?(?:[_-]?key)?|secret[_-]?access[_-]?key)[A-Za-z0-9_]*["']?[ \t]*(?::|=>?)[ \t]*["']?([A-Za-z0-9/+=]{40})`),
			ok: notGluedBase64},
		{kind: "Slack token", triggers: []string{"xox"}, span: 512, whole: true,
			re: regexp.MustCompile(`^xox[abprs]-[A-Za-z0-9-]{10,}`), ok: hasDigitAndLetter},
		{kind: "Google API key", triggers: []string{"AIza"}, span: 39, whole: true,
			re: regexp.MustCompile(`^AIza[0-9A-Za-z_-]{35}`)},
		{kind: "JWT", triggers: []string{"eyJ"}, span: 16384, whole: true,
			re: regexp.MustCompile(`^eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)},
		{kind: kindPrivateKey, triggers: []string{"-----BEGIN "}, span: 65536,
			re: regexp.MustCompile(`^-----BEGIN ` + pemLabel + `(?s:.*?)-----END ` + pemLabel)},
		// A key cut short (a truncated tool result) is still a key: take the
		// header and the base64 lines that follow it.
		{kind: kindPrivateKey, triggers: []string{"-----BEGIN "}, span: 65536,
			re: regexp.MustCompile(`^-----BEGIN ` + pemLabel + `(?:(?:\r?\n|\\r?\\n)+[A-Za-z0-9+/=]+)*`)},
		{kind: "authorization value", triggers: []string{"authorization"}, fold: true, span: 4096,
			re: regexp.MustCompile(`^(?i)authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token|digest)[ \t]+)?([^\s"',;]{8,})`)},
		{kind: "bearer token", triggers: []string{"bearer", "basic"}, fold: true, span: 4096,
			re: regexp.MustCompile(`^(?i)(?:bearer|basic)[ \t]+([A-Za-z0-9._~+/=-]{16,})`), ok: bearerValue},
		{kind: kindPassword, triggers: []string{"pwd", "passw"}, fold: true, span: 512,
			re: regexp.MustCompile(`^(?i)(?:pwd|passwd|password)[ \t]*=[ \t]*(\{[^}\n]*\}|[^;\s"'{}]+)`), ok: odbcContext},
		{kind: kindPassword, triggers: []string{"passw"}, fold: true, span: 512,
			re: regexp.MustCompile(`^(?i)passw(?:or)?d["']?[ \t]*[:=][ \t]*(?:"([^"\r\n]{4,256})"|'([^'\r\n]{4,256})')`)},
		// password=VALUE unquoted, as an exception message or a log line
		// writes it: a value of 4 or more characters that is not a
		// constant (password=None) or already masked.
		{kind: kindPassword, triggers: []string{"passw"}, fold: true, span: 512,
			re: regexp.MustCompile(`^(?i)passw(?:or)?d[ \t]*=[ \t]*([^\s"'<>,;(){}\[\]]{4,256})`), ok: notConstant},
	}
})

// Warm compiles the rules now, for a caller that expects text to filter
// soon (a question being typed) and would rather not wait for them then.
func Warm() {
	formatRules()
	awsSecretName()
	awsSecretValue()
}

// findFormats adds the spans of every well-known format in s.
func findFormats(s string, fs []finding) []finding {
	// Which bytes occur, as is and lowered: a trigger with a missing byte
	// cannot occur, which settles most rules on short strings (the many
	// small strings of a JSON document) without a substring search.
	var have, haveFold byteSet
	for i := 0; i < len(s); i++ {
		have.add(s[i])
		haveFold.add(lowerByte(s[i]))
	}
	var lower string // ASCII-lowered s, same offsets; made on first need
	rules := formatRules()
	for rank := range rules {
		r := &rules[rank]
		set := &have
		if r.fold {
			set = &haveFold
		}
		for _, t := range r.triggers {
			if !set.hasAll(t) {
				continue
			}
			hay := s
			if r.fold {
				if lower == "" {
					lower = asciiLower(s)
				}
				hay = lower
			}
			fs = r.find(s, hay, t, rank, fs)
		}
	}
	return findURLPasswords(s, fs)
}

// byteSet is a set of bytes, one bit each.
type byteSet [4]uint64

func (b *byteSet) add(c byte)      { b[c>>6] |= 1 << (c & 63) }
func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }
func (b *byteSet) hasAll(t string) bool {
	for i := 0; i < len(t); i++ {
		if !b.has(t[i]) {
			return false
		}
	}
	return true
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// find runs r around every occurrence of trigger t in hay.
func (r *rule) find(s, hay, t string, rank int, fs []finding) []finding {
	for off := 0; ; {
		i := strings.Index(hay[off:], t)
		if i < 0 {
			return fs
		}
		at := off + i
		off = at + len(t)
		lo, hi := max(0, at-r.back), min(len(s), at+len(t)+r.span)
		for _, m := range r.re.FindAllStringSubmatchIndex(s[lo:hi], -1) {
			start, end := secretPart(m)
			start, end = start+lo, end+lo
			if r.whole && !wholeToken(s, start, end) || r.ok != nil && !r.ok(s, start, end) {
				continue
			}
			fs = append(fs, finding{start: start, end: end, prec: precFormat, rank: rank, kind: r.kind})
		}
	}
}

// secretPart is the first capturing group that took part in the match, or
// the whole match when the regexp has none: the name and separator around
// a password stay visible, only the value goes.
func secretPart(m []int) (int, int) {
	for g := 2; g+1 < len(m); g += 2 {
		if m[g] >= 0 {
			return m[g], m[g+1]
		}
	}
	return m[0], m[1]
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	return string(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isLetter(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// hasDigitAndLetter rejects kebab-case words that merely start like a key
// ("sk-learn-compatible-estimators"): generated keys mix digits in.
func hasDigitAndLetter(s string, start, end int) bool {
	var d, l bool
	for i := start; i < end; i++ {
		d = d || isDigit(s[i])
		l = l || isLetter(s[i])
	}
	return d && l
}

// plausibleAWSKeyID rejects all-letter words after ASIA ("ASIAPACIFICREGIONS..."),
// which temporary key ids, unlike long-term AKIA ids, reliably are not.
func plausibleAWSKeyID(s string, start, end int) bool {
	if strings.HasPrefix(s[start:], "AKIA") {
		return true
	}
	return hasDigitAndLetter(s, start, end)
}

func base64Byte(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '/' || c == '+' || c == '='
}

// notGluedBase64 requires an AWS secret key to be exactly 40 characters:
// a longer base64 run is something else. A slash after it is a path's
// separator (.../aws_secret_access_key=SECRET/run.py), not more base64.
func notGluedBase64(s string, start, end int) bool {
	return end >= len(s) || s[end] == '/' || !base64Byte(s[end])
}

// bearerValue rejects an English word after "bearer" or "basic": tokens
// have digits, symbols or mixed case.
func bearerValue(s string, start, end int) bool {
	for i := start; i < end; i++ {
		c := s[i]
		if !isLetter(c) || i > start && c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

// notConstant refuses a value that is a constant, a mask or code, not a
// password: None, True, False, null, a run of asterisks, a dotted name
// (settings.DB_PASSWORD), an expression indexed or called
// (os.environ['PW']).
func notConstant(s string, start, end int) bool {
	v := s[start:end]
	switch strings.ToLower(v) {
	case "none", "true", "false", "null", "nil", "undefined":
		return false
	}
	if end < len(s) && (s[end] == '[' || s[end] == '(') {
		return false
	}
	if strings.Contains(v, ".") && dottedName(v) {
		return false
	}
	return strings.Trim(v, "*x") != ""
}

// dottedName reports whether v is identifiers joined by dots.
func dottedName(v string) bool {
	for _, part := range strings.Split(v, ".") {
		if part == "" || isDigit(part[0]) {
			return false
		}
		for i := 0; i < len(part); i++ {
			if !isLetter(part[i]) && !isDigit(part[i]) && part[i] != '_' {
				return false
			}
		}
	}
	return true
}

// odbcContext accepts pwd=/password= only inside a "key=value;" list
// (a semicolon right after the value or before the key), so a shell
// listing's PWD=/home/me stays.
func odbcContext(s string, start, end int) bool {
	if end < len(s) && s[end] == ';' {
		return true
	}
	// Walk back over "pwd = " to the key, then over spaces.
	i := start - 1
	for i >= 0 && (s[i] == ' ' || s[i] == '=') {
		i--
	}
	for i >= 0 && isLetter(s[i]) {
		i--
	}
	for i >= 0 && s[i] == ' ' {
		i--
	}
	return i >= 0 && s[i] == ';'
}

// findURLPasswords finds the password of every scheme://user:password@host.
func findURLPasswords(s string, fs []finding) []finding {
	for off := 0; ; {
		i := strings.Index(s[off:], "://")
		if i < 0 {
			return fs
		}
		at := off + i
		off = at + 3
		if start, end, ok := urlPasswordAt(s, at); ok {
			fs = append(fs, finding{start: start, end: end, prec: precFormat, rank: len(formatRules()), kind: kindURLPassword})
		}
	}
}

// urlPasswordAt locates the password of the URL whose "://" is at s[at].
func urlPasswordAt(s string, at int) (int, int, bool) {
	if at == 0 || !isLetter(s[at-1]) {
		return 0, 0, false
	}
	auth := at + 3
	stop := strings.IndexAny(s[auth:], "/?#\"'<>\\` \t\r\n")
	if stop < 0 {
		stop = len(s) - auth
	}
	host := strings.LastIndexByte(s[auth:auth+stop], '@')
	if host < 0 {
		return 0, 0, false
	}
	colon := strings.IndexByte(s[auth:auth+host], ':')
	if colon < 0 {
		return 0, 0, false
	}
	start, end := auth+colon+1, auth+host
	if start == end || strings.Trim(s[start:end], "*") == "" {
		return 0, 0, false // empty or already masked by the tool ("***")
	}
	return start, end, true
}

// urlPassword returns the password of the first URL in v that has one.
func urlPassword(v string) string {
	for off := 0; ; {
		i := strings.Index(v[off:], "://")
		if i < 0 {
			return ""
		}
		if start, end, ok := urlPasswordAt(v, off+i); ok {
			return v[start:end]
		}
		off += i + 3
	}
}
