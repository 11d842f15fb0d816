package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
)

// awsSecretName matches a JSON key that names an AWS secret key, whose
// value the AWS format rule cannot see once key and value are separate
// strings.
var awsSecretName = regexp.MustCompile(`(?i)^(?:aws[_-]?secret(?:[_-]?access)?(?:[_-]?key)?|secret[_-]?access[_-]?key)$`)

// awsSecretValue is the shape of an AWS secret access key.
var awsSecretValue = regexp.MustCompile(`^[A-Za-z0-9/+=]{40}$`)

// JSON redacts every string (keys and values) inside a JSON document and
// re-encodes it compactly, without HTML escaping and without a trailing
// newline. Object keys keep their order and numbers their spelling, since
// the document is streamed token by token rather than decoded into maps.
// Invalid JSON is an error.
func (f *Filter) JSON(doc []byte) ([]byte, Report, error) {
	if !json.Valid(doc) {
		return nil, Report{}, errors.New("redact: invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	w := jsonWriter{f: f}
	w.enc = json.NewEncoder(&w.out)
	w.enc.SetEscapeHTML(false)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, Report{}, err
		}
		if err := w.token(tok); err != nil {
			return nil, Report{}, err
		}
	}
	return w.out.Bytes(), w.rep, nil
}

// jsonFrame is one open object or array: how many tokens it holds so far,
// which decides the separator before the next one.
type jsonFrame struct {
	object bool
	n      int
}

type jsonWriter struct {
	f     *Filter
	out   bytes.Buffer
	enc   *json.Encoder
	stack []jsonFrame
	key   string // the last object key, context for its value
	rep   Report
}

func (w *jsonWriter) token(tok json.Token) error {
	if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
		w.stack = w.stack[:len(w.stack)-1]
		w.out.WriteByte(byte(d))
		return nil
	}
	isKey := w.separate()
	switch v := tok.(type) {
	case json.Delim:
		w.out.WriteByte(byte(v))
		w.stack = append(w.stack, jsonFrame{object: v == '{'})
		return nil
	case string:
		return w.str(v, isKey)
	case json.Number:
		w.out.WriteString(string(v))
		return nil
	default: // bool or nil
		return w.value(v)
	}
}

// separate writes the ',' or ':' due before the next token of the
// enclosing container, and reports whether that token is an object key.
func (w *jsonWriter) separate() bool {
	if len(w.stack) == 0 {
		return false
	}
	top := &w.stack[len(w.stack)-1]
	defer func() { top.n++ }()
	switch {
	case top.object && top.n%2 == 1:
		w.out.WriteByte(':')
		return false
	case top.n > 0:
		w.out.WriteByte(',')
	}
	return top.object
}

func (w *jsonWriter) str(s string, isKey bool) error {
	red, r := w.f.Text(s)
	if r.Count == 0 && !isKey && awsSecretName.MatchString(w.key) && awsSecretValue.MatchString(s) {
		red, r = Marker("AWS secret key", len(s)), Report{}
		r.note("AWS secret key")
	}
	w.rep.Add(r)
	if isKey {
		w.key = s
	}
	return w.value(red)
}

// value writes v as JSON; the Encoder always ends with a newline, which a
// compact document must not contain.
func (w *jsonWriter) value(v any) error {
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	w.out.Truncate(w.out.Len() - 1)
	return nil
}
