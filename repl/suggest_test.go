package repl

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestNameAtEnd(t *testing.T) {
	for _, c := range []struct {
		line   string
		path   []string
		prefix string
		ok     bool
	}{
		{"collec", nil, "collec", true},
		{"x = os.pa", []string{"os"}, "pa", true},
		{"print(a.b.c", []string{"a", "b"}, "c", true},
		{"f(obj.", nil, "", false},    // nothing typed of the name
		{"x = 12", nil, "", false},    // a number
		{"x = 1.5e", nil, "", false},  // a number's exponent
		{"s = 'coll", nil, "", false}, // inside a string
		{"x  # coll", nil, "", false}, // inside a comment
		{`s = "a" + coll`, nil, "coll", true},
		{"if x:\n    y = col", nil, "col", true},
		{"é = ca", nil, "ca", true},
		{"", nil, "", false},
	} {
		path, prefix, ok := nameAtEnd(c.line)
		if ok != c.ok || prefix != c.prefix || !reflect.DeepEqual(path, c.path) && len(path)+len(c.path) > 0 {
			t.Errorf("nameAtEnd(%q) = %q, %q, %v; want %q, %q, %v", c.line, path, prefix, ok, c.path, c.prefix, c.ok)
		}
	}
}

func TestHistoryName(t *testing.T) {
	entries := []string{"total_sum = 1", "import itertools\nfor pair in itertools.pairwise(xs): pass", "tot"}
	for prefix, want := range map[string]string{
		"total": "_sum",  // from an older entry
		"pai":   "r",     // the shortest in the latest entry that has one
		"iter":  "tools", // a row of a block
		"tot":   "al_sum",
		"nope":  "",
		"um":    "", // inside a name
	} {
		if got := historyName(entries, prefix); got != want {
			t.Errorf("historyName(%q) = %q, want %q", prefix, got, want)
		}
	}
}

// The interpreter is asked first; history's names when it has none; and
// nothing at ai>.
func TestSuggestSources(t *testing.T) {
	s, _, _ := pipeSession(t, "", newFakeInterp())
	s.hist = &histories{}
	s.hist.py.entries = []string{"histvar = 1"}
	var asked []string
	s.opts.Complete = func(path []string, prefix string) string {
		asked = append(asked, strings.Join(append(path, prefix), "."))
		if prefix == "collec" {
			return "tions"
		}
		return ""
	}
	if got := s.suggest("x = collec"); got != "tions" {
		t.Errorf("from the interpreter: %q", got)
	}
	if got := s.suggest("hist"); got != "var" {
		t.Errorf("from history: %q", got)
	}
	if got := s.suggest("os.hist"); got != "" {
		t.Errorf("an attribute from history: %q", got)
	}
	s.state.set(ModeAI)
	if got := s.suggest("collec"); got != "" {
		t.Errorf("at ai>: %q", got)
	}
	if want := []string{"collec", "hist", "os.hist"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
}

// A line of several rows at py> runs as a block, with a final line feed,
// and is one history entry.
func TestLineOfRowsRunsAsBlock(t *testing.T) {
	in := newFakeInterp()
	s, _, _ := pipeSession(t, "", in)
	s.hist = &histories{}
	var pending string
	s.line(ModePy, false, "a = 1\nprint(a)", &pending)
	s.line(ModePy, false, "b = 2", &pending)
	if want := "block a = 1\nprint(a)\n|push b = 2"; in.log() != want {
		t.Errorf("interpreter calls %q, want %q", in.log(), want)
	}
	if want := []string{"a = 1\nprint(a)", "b = 2"}; !reflect.DeepEqual(s.hist.py.entries, want) {
		t.Errorf("history %q, want %q", s.hist.py.entries, want)
	}
}

// handoffAssistant hands "/code" back to py>.
type handoffAssistant struct{ fakeAssistant }

func (a *handoffAssistant) HandleToPy(ctx context.Context, line string, out io.Writer) (string, bool, error) {
	if line == "/code" {
		return "x = 1\ny = 2", true, nil
	}
	return "", false, a.Handle(ctx, line, out)
}

// An assistant's Handoff switches to py> with the code for the next
// prompt (without a line editor, the code is shown instead).
func TestHandoffSwitchesToPy(t *testing.T) {
	s, stdout, _ := pipeSession(t, "", newFakeInterp())
	a := &handoffAssistant{}
	s.SetAssistant(a)
	s.state.set(ModeAI)
	s.ask("a question")
	if mode, _ := s.state.get(); mode != ModeAI {
		t.Fatalf("a question left ai>")
	}
	s.ask("/code")
	if mode, _ := s.state.get(); mode != ModePy {
		t.Errorf("/code did not switch to py>")
	}
	if !strings.Contains(stdout.String(), "x = 1\ny = 2\n") {
		t.Errorf("stdout %q: want the code shown", stdout.String())
	}
	if a.asked[0] != "a question" || len(a.asked) != 1 {
		t.Errorf("asked %q", a.asked)
	}
}
