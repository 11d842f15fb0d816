package highlight

import (
	"strings"
	"testing"
)

// marked shows line with each span as [text|SGR].
func marked(line string) string {
	rs := []rune(line)
	var b strings.Builder
	at := 0
	for _, sp := range Python(rs) {
		b.WriteString(string(rs[at:sp.Start]))
		b.WriteString("[" + string(rs[sp.Start:sp.End]) + "|" + sp.SGR + "]")
		at = sp.End
	}
	b.WriteString(string(rs[at:]))
	return b.String()
}

func TestPython(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"x = 1", "x = [1|33]"},
		{"print(len(xs))", "[print|36]([len|36](xs))"},
		{"obj.print(1)", "obj.print([1|33])"},
		{"if x is None: pass", "[if|1;34] x [is|1;34] [None|1;34]: [pass|1;34]"},
		{"def f(a):", "[def|1;34] [f|1](a):"},
		{"class C(Base):", "[class|1;34] [C|1](Base):"},
		{"s = 'a # b' # c", "s = ['a # b'|32] [# c|31]"},
		{`f"{x!r} \" {y}" + rb'\d'`, `[f"{x!r} \" {y}"|32] + [rb'\d'|32]`},
		{"'''one\ntwo''' + x", "['''one\ntwo'''|32] + x"},
		{"'open\nx", "['open|32]\nx"},
		{"@functools.cache\ndef g(): ...", "[@functools.cache|35]\n[def|1;34] [g|1](): ..."},
		{"a @ b", "a @ b"},
		{"0x1e+5 + 1e+5 + 3.14j + .5", "[0x1e|33]+[5|33] + [1e+5|33] + [3.14j|33] + [.5|33]"},
		{"f(x]) + (y)", "f(x[]|1;41]) + (y)"},
		{"x)", "x[)|1;41]"},
		{"name1 = value_2", "name1 = value_2"},
		{"u'x' + bu", "[u'x'|32] + bu"},
		{"é = 'ü'", "é = ['ü'|32]"},
	} {
		if got := marked(c.in); got != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// BenchmarkPython2000 is one key's highlighting of a block of 2,000
// characters (the editor highlights the whole line at every key).
func BenchmarkPython2000(b *testing.B) {
	row := "    total += compute(item['value'], 3.5) # running sum\n"
	line := []rune(strings.Repeat(row, 2000/len(row)+1)[:2000])
	b.ReportAllocs()
	for b.Loop() {
		Python(line)
	}
}
