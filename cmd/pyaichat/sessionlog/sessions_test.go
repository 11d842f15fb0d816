package sessionlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func intp(n int) *int { return &n }

// sample is a short session: two inputs (one failing), a question with
// a tool call and its answer, and the end.
func sample() []Record {
	return []Record{
		{Ev: "start", ID: "x", Version: "0.1", Python: "3.11.2", Cwd: "/tmp", Model: "m"},
		{Ev: "py", Src: "x = [1, 2]\nfor i in x:\n    print(i)", Status: "ok"},
		{Ev: "py", Src: "1/0", Status: "error", Exc: "ZeroDivisionError"},
		{Ev: "question", Text: "what is x?", Model: "m"},
		{Ev: "tool_call", CallID: "c1", Tool: "get_repr", Args: `{"expr":"x"}`},
		{Ev: "tool_result", CallID: "c1", Tool: "get_repr", Result: `{"repr":"[1, 2]"}`, Size: 17},
		{Ev: "answer", Text: "x is `[1, 2]`."},
		{Ev: "usage", In: 100, Out: 7, Calls: 1},
		{Ev: "end", Code: intp(0)},
	}
}

func writeAll(t *testing.T, dir, id string, recs []Record, o Options) string {
	t.Helper()
	w, err := Create(dir, id, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		w.Write(r)
	}
	w.Close()
	return w.Path
}

// The log is one JSON object a line, 0600 in a 0700 directory, the key
// redacted from every text; a torn last line is skipped when read.
func TestWriteAndReadBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	recs := sample()
	recs[1].Src = "key = 'sk-SECRET-0123456789'"
	path := writeAll(t, dir, "20260101-000000-aaaa", recs, Options{Redact: func(s string) string {
		return strings.ReplaceAll(s, "sk-SECRET-0123456789", "[key]")
	}})
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v", st.Mode().Perm())
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", st.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte("SECRET")) {
		t.Errorf("the key was logged:\n%s", data)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d lines for %d records", len(lines), len(recs))
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["t"] == nil {
			t.Errorf("line %q: %v", l, err)
		}
	}
	// A session killed mid-line.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"t":"2026-01-01T00:00:00Z","ev":"py","src":"unfinish`)
	f.Close()
	got, err := Read(path)
	if err != nil || len(got) != len(recs) || got[1].Src != "key = '[key]'" {
		t.Errorf("Read: %v, %d records, %+v", err, len(got), got)
	}
}

// Past its size bound a log gets one "truncated" record and no more.
func TestSizeBound(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, "a", Options{MaxBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		w.Write(Record{Ev: "py", Src: strings.Repeat("x", 50), Status: "ok"})
	}
	w.Close()
	recs, _ := Read(w.Path)
	st, _ := os.Stat(w.Path)
	if st.Size() > 2048 || recs[len(recs)-1].Ev != "truncated" || len(recs) < 5 {
		t.Errorf("size %d, %d records, last %+v", st.Size(), len(recs), recs[len(recs)-1])
	}
}

// An input's output is redacted before it is cut at MaxOutput on a
// character boundary, with a marker saying how much was written; past
// half the size bound no more output is kept, said once, while the
// inputs still are.
func TestOutputBounds(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, "a", Options{MaxBytes: 300 << 10, Redact: func(s string) string { return strings.ReplaceAll(s, "SECRET", "[key]") }})
	if err != nil {
		t.Fatal(err)
	}
	long := "a" + strings.Repeat("é", 40000) // 65536 bytes ends inside an é
	w.Write(Record{Ev: "py", Src: "p", Status: "ok", OutputBytes: 90000, Output: []Output{{Kind: "stdout", Text: "SECRET\n"}, {Kind: "stdout", Text: long}}})
	for i := 0; i < 4; i++ {
		w.Write(Record{Ev: "py", Src: fmt.Sprint(i), Status: "ok", OutputBytes: 60000, Output: []Output{{Kind: "stdout", Text: strings.Repeat("x", 60000)}}})
	}
	off := w.OutputOff()
	w.Close()
	recs, _ := Read(w.Path)
	var evs []string
	for _, r := range recs {
		evs = append(evs, fmt.Sprintf("%s:%d", r.Ev, len(r.Output)))
	}
	if got := strings.Join(evs, " "); got != "py:2 py:1 py:0 output_off:0 py:0 py:0" || !off {
		t.Fatalf("records %s (output off: %v)", got, off)
	}
	first := recs[0].Output
	body, marker, _ := strings.Cut(first[1].Text, "\n[output cut: ")
	if first[0].Text != "[key]\n" || len(first[0].Text)+len(body) != MaxOutput-1 || !strings.HasSuffix(body, "é") ||
		marker != fmt.Sprintf("%d bytes kept of 90000 written]", MaxOutput-1) {
		t.Errorf("the first output: %q, %d bytes then %q", first[0].Text, len(body), marker)
	}
	if !strings.Contains(recs[3].Text, "153600 bytes") {
		t.Errorf("output_off says %q", recs[3].Text)
	}
}

// Only the newest Keep logs are kept; ids sort by start time.
func TestKeepBound(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := 0; i < 5; i++ {
		id := NewID(start.Add(time.Duration(i) * time.Second))
		ids = append(ids, id)
		// A saved figure beside the log goes with it.
		files := FilesDir(filepath.Join(dir, id+Ext))
		if err := os.MkdirAll(files, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(files, "figure-1.png"), []byte("png"), 0o600); err != nil {
			t.Fatal(err)
		}
		writeAll(t, dir, id, sample(), Options{Keep: 3})
	}
	for i, id := range ids {
		_, err := os.Stat(filepath.Join(dir, id))
		if kept := i >= 2; kept != (err == nil) {
			t.Errorf("the files of session %d: kept %v, want %v (%v)", i, err == nil, kept, err)
		}
	}
	var left []string
	for _, s := range List(dir) {
		left = append(left, s.ID)
	}
	if want := []string{ids[4], ids[3], ids[2]}; fmt.Sprint(left) != fmt.Sprint(want) {
		t.Errorf("kept %v, want %v", left, want)
	}
	if p, err := Find(dir, ids[3][:len(ids[3])-3]); err != nil || IDOf(p) != ids[3] {
		t.Errorf("Find by prefix: %q, %v", p, err)
	}
	if _, err := Find(dir, "2026"); err == nil || !strings.Contains(err.Error(), "3 sessions") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if p, _ := Latest(dir, ""); IDOf(p) != ids[4] {
		t.Errorf("Latest %q", p)
	}
}

func TestListAndTranscript(t *testing.T) {
	dir := t.TempDir()
	writeAll(t, dir, "20260101-000000-aaaa", sample(), Options{})
	var b bytes.Buffer
	WriteList(&b, List(dir))
	if !strings.Contains(b.String(), "20260101-000000-aaaa") || !strings.Contains(b.String(), "what is x?") {
		t.Errorf("list:\n%s", b.String())
	}
	b.Reset()
	recs := append(sample(), Record{Ev: "question", Text: "evil\x1b]0;title\x07?"})
	Transcript(&b, recs)
	if strings.Contains(b.String(), "\x1b") || !strings.Contains(b.String(), `evil\x1b]0;title\x07?`) {
		t.Errorf("an escape sequence reached the transcript: %q", b.String())
	}
	b.Reset()
	Transcript(&b, sample())
	for _, want := range []string{"py> x = [1, 2]\n... for i in x:\n...     print(i)\n", "py> 1/0\n    [raised ZeroDivisionError]\n",
		"ai> what is x?\n    [call get_repr {\"expr\":\"x\"}]\n", "x is `[1, 2]`.\n", "[tokens: 100 in, 7 out]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("transcript lacks %q:\n%s", want, b.String())
		}
	}
}

// Resuming keeps the answered exchanges and the inputs that ran.
func TestRestore(t *testing.T) {
	recs := append(sample()[:8], Record{Ev: "question", Text: "never answered"})
	r := Restore("x", recs)
	if len(r.Conversation) != 1 || r.Conversation[0].Answer != "x is `[1, 2]`." {
		t.Errorf("conversation %+v", r.Conversation)
	}
	if len(r.Inputs) != 1 || !strings.HasPrefix(r.Inputs[0], "x = [1, 2]") {
		t.Errorf("inputs %q", r.Inputs)
	}
}

// Tool calls come back grouped by the response that made them, each with
// its result (or a "not run" one when the log lacks it); calls of a log
// without step numbers each stand alone.
func TestRestoreToolCalls(t *testing.T) {
	recs := []Record{
		{Ev: "question", Text: "q1"},
		{Ev: "tool_call", CallID: "a", Tool: "get_type", Args: "{}", Step: 1, Extra: json.RawMessage(`{"sig":1}`)},
		{Ev: "tool_result", CallID: "a", Result: "ra"},
		{Ev: "tool_call", CallID: "b", Tool: "get_repr", Args: "{}", Step: 1},
		{Ev: "tool_result", CallID: "b", Result: "rb"},
		{Ev: "tool_call", CallID: "c", Tool: "get_repr", Args: "{}", Step: 2},
		{Ev: "answer", Text: "A1"},
		{Ev: "question", Text: "q2"},
		{Ev: "tool_call", CallID: "d", Tool: "get_type", Args: "{}"},
		{Ev: "tool_result", CallID: "d", Result: "rd"},
		{Ev: "tool_call", CallID: "e", Tool: "get_type", Args: "{}"},
		{Ev: "tool_result", CallID: "e", Result: "re"},
		{Ev: "error", Text: "boom"},
	}
	var got []string
	for _, e := range Restore("x", recs).Conversation {
		line := e.Question
		for _, s := range e.Steps {
			line += " ["
			for _, c := range s.Calls {
				line += fmt.Sprintf(" %s=%s%s", c.ID, c.Result, c.Extra)
			}
			line += " ]"
		}
		got = append(got, line+" "+e.Answer)
	}
	want := []string{
		`q1 [ a=ra{"sig":1} b=rb ] [ c=` + notLogged + ` ] A1`,
		"q2 [ d=rd ] [ e=re ] (no answer: boom)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("restored:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A session that resumed another carries its conversation first, back
// through every resumed session whose log is kept.
func TestLoadFollowsResumed(t *testing.T) {
	dir := t.TempDir()
	writeAll(t, dir, "1", sample(), Options{})
	writeAll(t, dir, "2", []Record{{Ev: "start"}, {Ev: "resumed", Text: "1"}, {Ev: "question", Text: "second"}, {Ev: "answer", Text: "two"}}, Options{})
	writeAll(t, dir, "3", []Record{{Ev: "start"}, {Ev: "resumed", Text: "2"}, {Ev: "py", Src: "y = 1", Status: "ok"}}, Options{})
	r, err := Load(filepath.Join(dir, "3"+Ext))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Conversation) != 2 || r.Conversation[0].Question != "what is x?" || r.Conversation[1].Answer != "two" {
		t.Errorf("conversation %+v", r.Conversation)
	}
	if len(r.Inputs) != 1 || r.Inputs[0] != "y = 1" {
		t.Errorf("inputs %q: want the session's own", r.Inputs)
	}
}

// The notebook validates with nbformat (CI installs python3-nbformat; a
// missing module fails the test), the script compiles, the Markdown
// holds the inputs and the exchange.
func TestExport(t *testing.T) {
	dir := t.TempDir()
	nb := filepath.Join(dir, "s.ipynb")
	if err := Export(sample(), nb); err != nil {
		t.Fatal(err)
	}
	check := "import nbformat, sys; nb = nbformat.read(sys.argv[1], as_version=4); nbformat.validate(nb); " +
		"print(len(nb.cells), [c.cell_type for c in nb.cells])"
	out, err := exec.Command(nbPython, "-c", check, nb).CombinedOutput()
	if err != nil {
		t.Fatalf("nbformat: %v\n%s", err, out)
	}
	if want := "4 ['code', 'code', 'markdown', 'markdown']"; strings.TrimSpace(string(out)) != want {
		t.Errorf("notebook cells %s, want %s", out, want)
	}
	py := filepath.Join(dir, "s.py")
	if err := Export(sample(), py); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(nbPython, py).CombinedOutput(); err != nil || string(out) != "1\n2\n" {
		t.Errorf("script ran with %v: %q\n%s", err, out, readFile(t, py))
	}
	if s := readFile(t, py); !strings.Contains(s, "# 1/0\n# (raised ZeroDivisionError)") || !strings.Contains(s, "# ai> what is x?") {
		t.Errorf("script:\n%s", s)
	}
	md := filepath.Join(dir, "s.md")
	if err := Export(sample(), md); err != nil {
		t.Fatal(err)
	}
	if s := readFile(t, md); !strings.Contains(s, "```python\n1/0\n```") || !strings.Contains(s, "> **ai>** what is x?") {
		t.Errorf("markdown:\n%s", s)
	}
	if err := Export(sample(), filepath.Join(dir, "s.txt")); err == nil {
		t.Error("exported to .txt")
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// BenchmarkLogWrite is the work of logging one py> line: one record
// marshalled, redacted and written with one write(2).
func BenchmarkLogWrite(b *testing.B) {
	w, err := Create(b.TempDir(), "bench", Options{MaxBytes: 1 << 40, Redact: func(s string) string {
		return strings.ReplaceAll(s, "sk-0123456789abcdef", "[key]")
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	rec := Record{Ev: "py", Src: "df = pd.DataFrame({'a': range(10)})", Status: "ok"}
	rec.T = time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.Write(rec)
	}
}

// nbPython is Debian's python3, where python3-nbformat is installed
// (scripts/deps.sh); the python3 first on PATH may be a pyenv one.
const nbPython = "/usr/bin/python3"

// A compacted record replaces the exchanges before the ones it kept by
// its summary: the question it came in is still answered after it; a
// session resumed from one whose log compacted does not carry the
// exchanges the summary stands for.
func TestRestoreCompacted(t *testing.T) {
	recs := []Record{
		{Ev: "question", Text: "q1"}, {Ev: "answer", Text: "A1"},
		{Ev: "question", Text: "q2"}, {Ev: "answer", Text: "A2"},
		{Ev: "question", Text: "q3"},
		{Ev: "compacted", Text: "SUMMARY of q1, q2", Calls: 1},
		{Ev: "answer", Text: "A3"},
		{Ev: "question", Text: "q4"}, {Ev: "answer", Text: "A4"},
	}
	r := Restore("x", recs)
	var got []string
	for _, e := range r.Conversation {
		got = append(got, e.Question+" "+e.Answer)
	}
	if r.Summary != "SUMMARY of q1, q2" || strings.Join(got, ", ") != "q3 A3, q4 A4" {
		t.Errorf("restored summary %q and %q", r.Summary, got)
	}
	var b strings.Builder
	Transcript(&b, recs)
	if !strings.Contains(b.String(), "    [earlier exchanges compacted; 1 kept; summary:]\n    SUMMARY of q1, q2\nA3") {
		t.Errorf("transcript:\n%s", b.String())
	}

	dir := t.TempDir()
	write := func(id string, recs ...Record) {
		var b strings.Builder
		for _, r := range recs {
			line, _ := json.Marshal(r)
			b.Write(append(line, '\n'))
		}
		if err := os.WriteFile(filepath.Join(dir, id+Ext), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("old", Record{Ev: "question", Text: "q0"}, Record{Ev: "answer", Text: "A0"})
	write("new", append([]Record{{Ev: "resumed", Text: "old"}}, recs...)...)
	loaded, err := Load(filepath.Join(dir, "new"+Ext))
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Summary != r.Summary || len(loaded.Conversation) != 2 {
		t.Errorf("loaded summary %q, %d exchanges; want the compacted session's alone", loaded.Summary, len(loaded.Conversation))
	}
}
