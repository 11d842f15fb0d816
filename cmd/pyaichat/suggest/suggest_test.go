//go:build cgo

package suggest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/pybridge"
)

// The suggester is tested over a real interpreter, shared by the tests
// and benchmarks here and started on first use.
var suggestPython = sync.OnceValues(func() (*pybridge.Interp, error) {
	pythonStarted.Store(true)
	in, err := pybridge.Start(pybridge.Config{})
	if err != nil {
		return nil, err
	}
	return in, in.LoadModule("_suggest_test", `
import __main__

def run(code):
    exec(compile(code, "<test>", "exec"), __main__.__dict__)
    return "ok"

def forget_sorted(_):
    import _pyaichat
    _pyaichat.helper("_pyaichat_suggest")._sorted.clear()
    return "ok"
`)
})

var pythonStarted atomic.Bool

func testSuggester(t testing.TB) (*Suggester, func(code string)) {
	t.Helper()
	in, err := suggestPython()
	if err != nil {
		t.Fatal(err)
	}
	gen := new(atomic.Uint64)
	s, err := newSuggester(in, gen)
	if err != nil {
		t.Fatal(err)
	}
	run := func(code string) {
		t.Helper()
		if _, err := in.Call(context.Background(), pybridge.CallUserCode, "_suggest_test", "run", code); err != nil {
			t.Fatalf("running %q: %v", code, err)
		}
		gen.Add(1) // as interpreter does after each input
	}
	return s, run
}

func TestSuggesterCompletes(t *testing.T) {
	s, run := testSuggester(t)
	run("import collections, os\nsuggest_value = 1\n_suggest_hidden = 2")
	for _, c := range []struct {
		path   []string
		prefix string
		want   string
	}{
		{nil, "collec", "tions"},     // a module in the namespace
		{nil, "suggest_v", "alue"},   // a global
		{nil, "isinst", "ance"},      // a builtin
		{nil, "whil", "e"},           // a keyword
		{nil, "_suggest_h", "idden"}, // private names when asked for
		{nil, "suggest", "_value"},   // but not otherwise
		{[]string{"collections"}, "Ord", "eredDict"},
		{[]string{"os", "path"}, "joi", "n"}, // through modules
		{nil, "no_such_name", ""},
		{[]string{"no_such_module"}, "x", ""},
	} {
		if got := s.Complete(c.path, c.prefix); got != c.want {
			t.Errorf("Complete(%q, %q) = %q, want %q", c.path, c.prefix, got, c.want)
		}
	}
	// A name defined after the sorted names were kept: the next run
	// changes the generation, and the name is found.
	run("suggest_defined_later = 3")
	if got := s.Complete(nil, "suggest_d"); got != "efined_later" {
		t.Errorf("a name defined later: %q, want %q", got, "efined_later")
	}
}

// A namespace too large to compare after each line is left out; builtins
// are still suggested.
func TestSuggesterLeavesOutHugeNamespace(t *testing.T) {
	s, run := testSuggester(t)
	run("for _i in range(100001): globals()['huge_%d' % _i] = 0")
	t.Cleanup(func() { run("for _i in range(100001): del globals()['huge_%d' % _i]") })
	if got := s.Complete(nil, "huge_1000"); got != "" {
		t.Errorf("a name of a namespace of 100,001 names: %q", got)
	}
	if got := s.Complete(nil, "isinst"); got != "ance" {
		t.Errorf("a builtin: %q", got)
	}
}

// Attributes of classes and instances come from the dicts of the class's
// __mro__ and the instance's own __dict__: no property, __getattr__,
// __getattribute__, __dir__ or metaclass code runs.
func TestSuggesterRunsNoUserCode(t *testing.T) {
	s, run := testSuggester(t)
	mark := filepath.Join(t.TempDir(), "ran")
	run(`
MARK = ` + pyStr(mark) + `
def _ran(what):
    open(MARK + "-" + what, "w").close()

class Meta(type):
    def __getattribute__(cls, name):
        _ran("meta")
        return type.__getattribute__(cls, name)

class Base:
    base_method = None

class Hostile(Base, metaclass=Meta):
    @property
    def property_writes(self):
        _ran("property")
    def __getattr__(self, name):
        _ran("getattr")
    def __getattribute__(self, name):
        _ran("getattribute")
        return object.__getattribute__(self, name)
    def __dir__(self):
        _ran("dir")
        return []

class Plain(Base):
    @property
    def property_writes(self):
        _ran("property")
    def __getattr__(self, name):
        _ran("getattr")
    def __dir__(self):
        _ran("dir")
        return []

plain = Plain()
plain.own_value = 1
hostile = object.__new__(Hostile)
`)
	for _, c := range []struct {
		path   []string
		prefix string
		want   string
	}{
		{[]string{"plain"}, "prop", "erty_writes"},
		{[]string{"plain"}, "own", "_value"},
		{[]string{"plain"}, "base_m", "ethod"},
		{[]string{"Plain"}, "prop", "erty_writes"},
		// An instance of a class with a metaclass of its own: its class's
		// names are still read from dicts (Meta's code never runs).
		{[]string{"hostile"}, "prop", "erty_writes"},
		{[]string{"plain", "own_value"}, "x", ""}, // not through non-modules
	} {
		if got := s.Complete(c.path, c.prefix); got != c.want {
			t.Errorf("Complete(%q, %q) = %q, want %q", c.path, c.prefix, got, c.want)
		}
	}
	if got := s.Complete([]string{"Hostile"}, "prop"); got != "erty_writes" {
		t.Errorf("a class with a metaclass of its own: %q", got)
	}
	matches, _ := filepath.Glob(mark + "-*")
	if len(matches) > 0 {
		t.Errorf("user code ran: %q", matches)
	}
}

func pyStr(s string) string { return "r'" + s + "'" }

// tenThousandGlobals defines 10,000 globals, in no order (as a session
// defines them), one of them bench_name_09999.
const tenThousandGlobals = `
import random as _random
_names = ['bench_name_%05d' % _i for _i in range(10000)]
_random.Random(1).shuffle(_names)
for _n in _names:
    globals()[_n] = 0
del _n, _names, _random
`

// The cost of a key at py> in a session of 10,000 globals, while nothing
// ran since the last key (the sorted names kept).
func BenchmarkSuggest10kGlobals(b *testing.B) {
	s, run := testSuggester(b)
	run(tenThousandGlobals)
	s.Complete(nil, "bench_name_0999")
	for b.Loop() {
		if got := s.Complete(nil, "bench_name_0999"); got != "0" {
			b.Fatalf("got %q", got)
		}
	}
}

// The first key after a line that defined no name: the names compared
// with those kept.
func BenchmarkSuggest10kGlobalsAfterRun(b *testing.B) {
	s, run := testSuggester(b)
	run(tenThousandGlobals)
	for b.Loop() {
		s.gen.Add(1)
		if got := s.Complete(nil, "bench_name_0999"); got != "0" {
			b.Fatalf("got %q", got)
		}
	}
}

// The first key after a line that defined a name: it is put in place in
// the kept sorted names.
func BenchmarkSuggest10kGlobalsAfterNewName(b *testing.B) {
	s, run := testSuggester(b)
	run(tenThousandGlobals)
	in, _ := suggestPython()
	i := 0
	for b.Loop() {
		i++
		if _, err := in.Call(context.Background(), pybridge.CallUserCode, "_suggest_test", "run", fmt.Sprintf("bench_new_%d = 1", i)); err != nil {
			b.Fatal(err)
		}
		s.gen.Add(1)
		if got := s.Complete(nil, "bench_name_0999"); got != "0" {
			b.Fatalf("got %q", got)
		}
	}
}

// The first key after a line when the names are sorted anew (the first
// suggestion of a session, or after many names were defined at once).
func BenchmarkSuggest10kGlobalsSorted(b *testing.B) {
	s, run := testSuggester(b)
	run(tenThousandGlobals)
	in, _ := suggestPython()
	for b.Loop() {
		if _, err := in.Call(context.Background(), pybridge.CallHelper, "_suggest_test", "forget_sorted", ""); err != nil {
			b.Fatal(err)
		}
		if got := s.Complete(nil, "bench_name_0999"); got != "0" {
			b.Fatalf("got %q", got)
		}
	}
}

// An attribute of a module (its dict scanned, not kept).
func BenchmarkSuggestModuleAttribute(b *testing.B) {
	s, run := testSuggester(b)
	run("import os")
	for b.Loop() {
		if got := s.Complete([]string{"os"}, "getc"); got != "wd" {
			b.Fatalf("got %q", got)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if !pythonStarted.Load() {
		os.Exit(code)
	}
	if in, err := suggestPython(); err == nil && in != nil {
		in.Close(3 * time.Second)
	}
	os.Exit(code)
}
