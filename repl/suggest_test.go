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

// submitAI enters line at ai> and says whether it left pyaichat.
func submitAI(s *Loop, line string) bool {
	_, exit := s.submit(ModeAI, false, line, false)
	return exit
}

// A command's Action switches to py> with the code for the next prompt
// (without a line editor, the code is shown instead); /help lists the
// table, and the REPL's own commands leave.
func TestCommandsTable(t *testing.T) {
	s, stdout, _ := pipeSession(t, "", newFakeInterp())
	a := &fakeAssistant{}
	s.SetAssistant(a)
	var args []string
	s.AddCommands(Command{Name: "/code", Args: "[N]", Help: "put a block in the py> line",
		Run: func(_ context.Context, arg string, _ io.Writer) (Action, error) {
			args = append(args, arg)
			return Action{ToPy: true, Code: "x = 1\ny = 2"}, nil
		}})
	s.state.set(ModeAI)
	if exit := submitAI(s, "a question"); exit {
		t.Fatal("a question left")
	}
	if mode, _ := s.state.get(); mode != ModeAI {
		t.Fatalf("a question left ai>")
	}
	submitAI(s, "/code 2")
	if mode, _ := s.state.get(); mode != ModePy {
		t.Errorf("/code did not switch to py>")
	}
	if !strings.Contains(stdout.String(), "x = 1\ny = 2\n") || len(args) != 1 || args[0] != "2" {
		t.Errorf("stdout %q, args %q: want the code shown, arg 2", stdout.String(), args)
	}
	if len(a.asked) != 1 || a.asked[0] != "a question" {
		t.Errorf("asked %q", a.asked)
	}
	s.state.set(ModeAI)
	stdout.Reset()
	submitAI(s, "/help")
	if got := stdout.String(); !strings.Contains(got, "\n  /code [N]         put a block in the py> line\n") || !strings.Contains(got, "\n  /help ") || strings.Contains(got, "\n  /quit") {
		t.Errorf("/help: %q", got)
	}
	for _, word := range []string{"exit", "quit", "/exit", "/quit"} {
		if !submitAI(s, word) {
			t.Errorf("%s at ai> did not leave", word)
		}
	}
}

// Auto-indent follows the row before, one level more after a colon; a
// colon in a comment or a string does not count.
func TestIndent(t *testing.T) {
	for before, want := range map[string]string{
		"def f(x):":                    "    ",
		"def f(x):\n    if x:  # test": "        ",
		"    return 1":                 "    ",
		"x = 1  # note:":               "",
		"d = {'a:'":                    "",
		"\tfor i in y:":                "\t    ",
		"":                             "",
	} {
		if got := indent(before); got != want {
			t.Errorf("after %q: %q, want %q", before, got, want)
		}
	}
}
