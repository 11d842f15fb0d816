package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// awsSecretName matches a JSON key that names an AWS secret key, whose
// value the AWS format rule cannot see once key and value are separate
// strings.
var awsSecretName = lazyRegexp(`(?i)^(?:aws[_-]?secret(?:[_-]?access)?(?:[_-]?key)?|secret[_-]?access[_-]?key)$`)

// awsSecretValue is the shape of an AWS secret access key.
var awsSecretValue = lazyRegexp(`^[A-Za-z0-9/+=]{40}$`)

// JSON redacts every string (keys and values) inside a JSON document and
// re-encodes it compactly, without HTML escaping and without a trailing
// newline. Object keys keep their order and numbers their spelling: the
// validated document is copied byte by byte, dropping insignificant
// whitespace, and only its strings are decoded, redacted and re-encoded.
// Invalid JSON is an error.
func (f *Filter) JSON(doc []byte) ([]byte, Report, error) {
	if !json.Valid(doc) {
		return nil, Report{}, errors.New("redact: invalid JSON")
	}
	w := jsonWriter{f: f}
	w.out.Grow(len(doc))
	w.enc = json.NewEncoder(&w.out)
	w.enc.SetEscapeHTML(false)
	for i := 0; i < len(doc); {
		switch c := doc[i]; c {
		case ' ', '\t', '\r', '\n':
			i++
		case '"':
			end := stringEnd(doc, i)
			if err := w.str(doc[i:end], isKey(doc, end)); err != nil {
				return nil, Report{}, err
			}
			i = end
		default:
			if c == '{' || c == '}' {
				w.name = "" // a new object, or the end of one
			}
			w.out.WriteByte(c)
			i++
		}
	}
	return w.out.Bytes(), w.rep, nil
}

// stringEnd returns the index just past the JSON string starting at
// doc[i], which json.Valid has vouched for.
func stringEnd(doc []byte, i int) int {
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(doc)
}

// isKey reports whether the string ending at doc[end] is an object key:
// a colon follows it.
func isKey(doc []byte, end int) bool {
	for ; end < len(doc); end++ {
		switch doc[end] {
		case ' ', '\t', '\r', '\n':
		case ':':
			return true
		default:
			return false
		}
	}
	return false
}

type jsonWriter struct {
	f   *Filter
	out bytes.Buffer
	enc *json.Encoder
	key string // the last object key, context for its value
	// name is the "name" field of the object being written: a value field
	// after it ("preview", "repr") is that variable's value.
	name string
	rep  Report
}

// str redacts one quoted JSON string and writes it re-encoded.
func (w *jsonWriter) str(quoted []byte, key bool) error {
	s, plain, err := unquote(quoted)
	if err != nil {
		return err
	}
	red, r := w.f.Text(s)
	if r.Count == 0 && !key {
		red = w.redactByKey(s, red, &r)
	}
	w.remember(s, key)
	w.rep.Add(r)
	if plain && r.Count == 0 {
		w.out.Write(quoted) // the encoder would write exactly these bytes
		return nil
	}
	if err := w.enc.Encode(red); err != nil {
		return err
	}
	w.out.Truncate(w.out.Len() - 1) // Encode ends with a newline
	return nil
}

// unquote decodes a quoted JSON string; plain says it needed no decoding
// (see plainString).
func unquote(quoted []byte) (s string, plain bool, err error) {
	if s, plain = plainString(quoted); plain {
		return s, true, nil
	}
	err = json.Unmarshal(quoted, &s)
	return s, false, err
}

// redactByKey redacts a value that no rule for text matched but that the
// key it stands under says is a secret, noting it in r and learning it;
// otherwise it returns red unchanged.
func (w *jsonWriter) redactByKey(s, red string, r *Report) string {
	kind := w.secretKindByKey(s)
	if kind == "" {
		return red
	}
	r.note(kind)
	w.f.learn(s, []finding{{start: 0, end: len(s), prec: precFormat, kind: kind}})
	return Marker(kind, utf8.RuneCountInString(s))
}

// secretKindByKey names the kind of secret the value s is by the key it
// stands under, or "" when the key says nothing.
func (w *jsonWriter) secretKindByKey(s string) string {
	switch {
	case awsSecretName().MatchString(w.key) && awsSecretValue().MatchString(s):
		return "AWS secret key" // ASCII only: its length is its count of characters
	case !trivialValue[s] && w.secretVariable() && !strings.HasPrefix(s, markerPrefix):
		return kindSecretVariable
	}
	return ""
}

// remember keeps the context of the values that follow: the last key,
// and the value of a "name" field.
func (w *jsonWriter) remember(s string, key bool) {
	if key {
		w.key = s
	} else if w.key == "name" {
		w.name = s
	}
}

// trivialValue are the previews of a secret-named variable that hold no
// secret.
var trivialValue = map[string]bool{"": true, "None": true, "''": true, `""`: true}

// kindSecretVariable names the value of a variable whose name says it is
// a secret.
const kindSecretVariable = "value of a variable named as a secret"

// valueFields are the fields that hold the value of the variable their
// object's "name" field names (list_globals' entries).
var valueFields = map[string]bool{"preview": true, "repr": true, "value": true}

// secretVariable reports whether the string being written is the value of
// a variable named as a secret: a frame's local {"password": "'...'"}, or
// a list_globals entry {"name": "api_key", ..., "preview": "'...'"}.
func (w *jsonWriter) secretVariable() bool {
	if SecretVariableName(w.key) {
		return true
	}
	return valueFields[w.key] && SecretVariableName(w.name)
}

// plainString returns the content of a quoted string made only of
// printable ASCII without escapes: decoding it is slicing it, and encoding
// gives it back unchanged.
func plainString(quoted []byte) (string, bool) {
	body := quoted[1 : len(quoted)-1]
	for _, c := range body {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return "", false
		}
	}
	return string(body), true
}

// lazyRegexp compiles expr on first use (see formatRules).
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
