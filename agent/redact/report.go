package redact

import (
	"sort"
	"strconv"
	"strings"
)

// Report counts what a Filter replaced, by kind.
type Report struct {
	Count int
	Kinds map[string]int
}

// Add merges o into r, so the reports of several texts (the strings of one
// JSON document, the results of one tool round) can be summed.
func (r *Report) Add(o Report) {
	if o.Count == 0 {
		return
	}
	if r.Kinds == nil {
		r.Kinds = make(map[string]int, len(o.Kinds))
	}
	r.Count += o.Count
	for k, n := range o.Kinds {
		r.Kinds[k] += n
	}
}

func (r *Report) note(kind string) {
	if r.Kinds == nil {
		r.Kinds = make(map[string]int)
	}
	r.Count++
	r.Kinds[kind]++
}

// String summarises the report as "2 values (1 AWS access key, 1 API key)",
// most frequent kind first; the zero Report gives "".
func (r Report) String() string {
	if r.Count == 0 {
		return ""
	}
	kinds := make([]string, 0, len(r.Kinds))
	for k := range r.Kinds {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		a, b := r.Kinds[kinds[i]], r.Kinds[kinds[j]]
		if a != b {
			return a > b
		}
		return kinds[i] < kinds[j]
	})
	var b strings.Builder
	b.WriteString(strconv.Itoa(r.Count))
	if r.Count == 1 {
		b.WriteString(" value (")
	} else {
		b.WriteString(" values (")
	}
	for i, k := range kinds {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(r.Kinds[k]))
		b.WriteByte(' ')
		b.WriteString(k)
	}
	b.WriteByte(')')
	return b.String()
}

// Marker is the text that replaces a secret of the given kind: it keeps the
// kind and the length (in runes) so the model can still reason about the
// value's presence and shape, never its content.
func Marker(kind string, n int) string {
	return "<redacted: " + kind + ", " + strconv.Itoa(n) + " chars>"
}

// markerPrefix starts every marker; finding it marks text already redacted.
const markerPrefix = "<redacted: "
