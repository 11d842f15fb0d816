package capabilities

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// shape re-encodes a result (a JSON object) with every string cut to
// maxChars characters and every array and object to maxItems entries,
// keeping the order of keys. The helper already shapes what it returns;
// this is the check on the Go side, because user code runs in the copy
// and can write any result it likes. Anything but one JSON object is an
// error.
func shape(raw json.RawMessage, maxChars, maxItems int) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	s := shaper{dec: dec, maxChars: maxChars, maxItems: maxItems}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	if err := s.value(tok, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the result")
	}
	return s.out.Bytes(), nil
}

// maxDepth bounds nesting: the helper's results are a few levels deep.
const maxDepth = 32

type shaper struct {
	dec                *json.Decoder
	out                bytes.Buffer
	maxChars, maxItems int
}

func (s *shaper) value(tok json.Token, depth int) error {
	switch v := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return errors.New("nested too deeply")
		}
		return s.container(v, depth)
	case string:
		return s.str(v)
	case json.Number:
		s.out.WriteString(v.String())
	case bool:
		fmt.Fprint(&s.out, v)
	case nil:
		s.out.WriteString("null")
	}
	return nil
}

// container copies an object or array whose opening token was read,
// keeping its first maxItems entries.
func (s *shaper) container(open json.Delim, depth int) error {
	isObject := open == '{'
	s.out.WriteByte(byte(open))
	for n := 0; s.dec.More(); n++ {
		keep := n < s.maxItems
		if keep && n > 0 {
			s.out.WriteByte(',')
		}
		if isObject {
			key, err := s.dec.Token()
			if err != nil {
				return err
			}
			if keep {
				if err := s.str(key.(string)); err != nil {
					return err
				}
				s.out.WriteByte(':')
			}
		}
		if err := s.entry(keep, depth); err != nil {
			return err
		}
	}
	if _, err := s.dec.Token(); err != nil { // the closing delimiter
		return err
	}
	if isObject {
		s.out.WriteByte('}')
	} else {
		s.out.WriteByte(']')
	}
	return nil
}

// entry copies the next value, or skips it when it is over maxItems.
func (s *shaper) entry(keep bool, depth int) error {
	if !keep {
		var skip json.RawMessage
		return s.dec.Decode(&skip)
	}
	tok, err := s.dec.Token()
	if err != nil {
		return err
	}
	return s.value(tok, depth+1)
}

func (s *shaper) str(v string) error {
	if utf8.RuneCountInString(v) > s.maxChars {
		i, n := 0, 0
		for i = range v {
			if n == s.maxChars {
				break
			}
			n++
		}
		v = v[:i] + "..."
	}
	enc := json.NewEncoder(&s.out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	s.out.Truncate(s.out.Len() - 1) // Encode's newline
	return nil
}
