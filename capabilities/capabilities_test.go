package capabilities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/capabilities/spec"
	"github.com/pyaichat/pyaichat/pybridge"
)

func TestListDescribesSevenCapabilities(t *testing.T) {
	specs := reg.List()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		if s.Description == "" {
			t.Errorf("%s has no description", s.Name)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(s.Schema, &schema); err != nil || schema.Type != "object" {
			t.Fatalf("%s: schema %s: %v", s.Name, s.Schema, err)
		}
		takes, _ := TakesExpr(s.Name)
		if _, has := schema.Properties["expr"]; has != takes || (takes && !reflect.DeepEqual(schema.Required, []string{"expr"})) {
			t.Errorf("%s: schema %s does not match its params", s.Name, s.Schema)
		}
	}
	want := []string{"list_globals", "get_type", "get_repr", "get_dir", "get_doc", "eval_expr", "get_last_exception"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("got %v, want %v", names, want)
	}
}

func TestListGlobals(t *testing.T) {
	setup(t, `
lg_int = 42
lg_text = "hello"
lg_big = list(range(10000))
lg_small = [1, 2, 3]
import collections as lg_mod
class LgPoint:
    def __repr__(self):
        raise AssertionError("list_globals ran user code")
lg_obj = LgPoint()
def lg_func(a, b=2): pass
_pyaichat_internal = 1
__lg_dunder__ = 1
`)
	m := mustOK(t, "list_globals", "")
	got := map[string][2]string{}
	var order []string
	for _, g := range m["globals"].([]any) {
		e := g.(map[string]any)
		name := e["name"].(string)
		order = append(order, name)
		got[name] = [2]string{e["type"].(string), e["preview"].(string)}
	}
	want := map[string][2]string{
		"lg_int":   {"int", "42"},
		"lg_text":  {"str", "'hello'"},
		"lg_big":   {"list", "list, 10000 items"},
		"lg_small": {"list", "[1, 2, 3]"},
		"lg_mod":   {"module", "module collections"},
		"LgPoint":  {"type", "class __main__.LgPoint"},
		"lg_obj":   {"__main__.LgPoint", "__main__.LgPoint object"},
		"lg_func":  {"function", "function lg_func(a, b)"},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: got %v, want %v", name, got[name], w)
		}
	}
	for _, hidden := range []string{"__builtins__", "__name__", "__doc__", "_pyaichat_internal", "__lg_dunder__", "len", "print"} {
		if _, ok := got[hidden]; ok {
			t.Errorf("%s is listed", hidden)
		}
	}
	for i := 1; i < len(order); i++ {
		if order[i-1] >= order[i] {
			t.Fatalf("not sorted: %v", order)
		}
	}
}

func TestListGlobalsCapsEntries(t *testing.T) {
	setup(t, "for _i in range(300): globals()['cap_%03d' % _i] = _i")
	defer setup(t, "for _i in range(300): del globals()['cap_%03d' % _i]")
	small := New(interp, Options{MaxItems: 10})
	res, cerr := small.call(context.Background(), "list_globals", nil)
	if cerr != nil {
		t.Fatal(cerr)
	}
	var r struct {
		Globals []struct{ Name string }
		Omitted int
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	total := len(r.Globals) + r.Omitted
	if len(r.Globals) != 10 || total < 300 {
		t.Errorf("got %d entries and %d omitted", len(r.Globals), r.Omitted)
	}
}

func TestGetType(t *testing.T) {
	setup(t, `
import collections
gt_od = collections.OrderedDict()
def gt_f(a, *, b=1) -> int: pass
`)
	m := mustOK(t, "get_type", "1")
	if m["type"] != "int" || m["module"] != "builtins" || !reflect.DeepEqual(m["mro"], []any{"int", "object"}) {
		t.Errorf("int: %v", m)
	}
	m = mustOK(t, "get_type", "gt_od")
	if m["type"] != "collections.OrderedDict" || m["module"] != "collections" {
		t.Errorf("OrderedDict: %v", m)
	}
	m = mustOK(t, "get_type", "gt_f")
	if m["type"] != "function" || m["signature"] != "(a, *, b=1) -> int" {
		t.Errorf("function: %v", m)
	}
	mustErr(t, "get_type", "gt_missing", "NameError")
	mustErr(t, "get_type", "gt_od.missing", "AttributeError")
	mustErr(t, "get_type", "x = 1", "SyntaxError")
}

func TestGetReprIsBounded(t *testing.T) {
	setup(t, `
gr_big = list(range(10**6))
gr_text = "x" * 10**6
gr_nested = {"a": [1, (2, 3)], "b": {4}, "c": frozenset()}
gr_self = []
gr_self.append(gr_self)
gr_huge_int = 10**100000
gr_deep = []
for _ in range(10**5):
    gr_deep = [gr_deep]
`)
	defer setup(t, "del gr_big, gr_text, gr_deep")
	for _, expr := range []string{"gr_big", "gr_text", "gr_deep", "gr_big + [1]"} {
		m := mustOK(t, "get_repr", expr)
		r := str(t, m, "repr")
		if len(r) > 4096+16 || m["truncated"] != true {
			t.Errorf("%s: %d chars, truncated=%v", expr, len(r), m["truncated"])
		}
	}
	m := mustOK(t, "get_repr", "gr_nested")
	if r := str(t, m, "repr"); r != "{'a': [1, (2, 3)], 'b': {4}, 'c': frozenset()}" || m["truncated"] != false {
		t.Errorf("nested: %v", m)
	}
	if r := str(t, mustOK(t, "get_repr", "gr_self"), "repr"); r != "[[...]]" {
		t.Errorf("self-referencing list: %q", r)
	}
	contains(t, str(t, mustOK(t, "get_repr", "gr_huge_int"), "repr"), "<int with about 100001 digits>")
	if r := str(t, mustOK(t, "get_repr", "gr_big"), "repr"); !strings.HasPrefix(r, "[0, 1, 2, 3") || !strings.HasSuffix(r, "...]") {
		t.Errorf("big list: %q...", r[:40])
	}
}

func TestReprLimitIsConfigurable(t *testing.T) {
	setup(t, "rl_list = list(range(1000))")
	small := New(interp, Options{ReprLimit: 100})
	res, cerr := small.call(context.Background(), "get_repr", json.RawMessage(exprArgs("rl_list")))
	if cerr != nil {
		t.Fatal(cerr)
	}
	var r struct {
		Repr      string
		Truncated bool
	}
	if err := json.Unmarshal(res, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Repr) > 110 || len(r.Repr) < 90 || !r.Truncated {
		t.Errorf("%d chars: %q", len(r.Repr), r.Repr)
	}
}

func TestEvalExpr(t *testing.T) {
	setup(t, "ev_x = [3, 1, 2]")
	m := mustOK(t, "eval_expr", "sorted(ev_x) + [len(ev_x)]")
	if m["repr"] != "[1, 2, 3, 3]" || m["type"] != "list" || m["truncated"] != false {
		t.Errorf("%v", m)
	}
	mustErr(t, "eval_expr", "ev_x = 1", "SyntaxError")
	mustErr(t, "eval_expr", "ev_x[10]", "IndexError")
	mustErr(t, "eval_expr", "import os", "SyntaxError")
	// No capability imports a module.
	e := mustErr(t, "eval_expr", "__import__('wave')", "Refused")
	contains(t, e.Message, "import")
	if v := value(t, "'wave' in __import__('sys').modules"); v != "False" {
		t.Errorf("wave was imported into the session: %s", v)
	}
}

func TestGetDirKinds(t *testing.T) {
	setup(t, `
class GdThing:
    calls = 0
    class Inner: pass
    def method(self): pass
    @property
    def prop(self):
        GdThing.calls += 1
        return 1
    @staticmethod
    def smethod(): pass
gd = GdThing()
gd.attr = 5
`)
	m := mustOK(t, "get_dir", "gd")
	kinds := map[string]string{}
	var order []string
	for _, n := range m["names"].([]any) {
		e := n.(map[string]any)
		kinds[e["name"].(string)] = e["kind"].(string)
		order = append(order, e["name"].(string))
	}
	want := map[string]string{"Inner": "class", "method": "method", "prop": "property", "smethod": "method", "attr": "attribute", "calls": "attribute", "__init__": "method"}
	for k, v := range want {
		if kinds[k] != v {
			t.Errorf("%s: got %q, want %q", k, kinds[k], v)
		}
	}
	if strings.HasPrefix(order[0], "_") {
		t.Errorf("dunders first: %v", order[:5])
	}
	if v := value(t, "GdThing.calls"); v != "0" {
		t.Errorf("a property ran in the session: calls=%s", v)
	}
}

func TestGetDoc(t *testing.T) {
	setup(t, `
def gdoc_f(x, y=2):
    """Add things.

    More text."""
`)
	m := mustOK(t, "get_doc", "gdoc_f")
	if m["doc"] != "Add things.\n\nMore text." || m["signature"] != "(x, y=2)" {
		t.Errorf("%v", m)
	}
	m = mustOK(t, "get_doc", "1")
	if m["signature"] != nil || !strings.Contains(str(t, m, "doc"), "int") {
		t.Errorf("int: %v", m)
	}
}

func TestGetLastException(t *testing.T) {
	if _, err := interp.Call(context.Background(), pybridge.CallHelper, "_caps_test", "clear_last", ""); err != nil {
		t.Fatal(err)
	}
	m := mustOK(t, "get_last_exception", "")
	if v, ok := m["exception"]; !ok || v != nil {
		t.Fatalf("no exception yet: %v", m)
	}

	path := filepath.Join(t.TempDir(), "script.py")
	script := "class Pt:\n    def __repr__(self):\n        return 'Pt()'\n\ndef f(a):\n    items = [a] * 2\n    p = Pt()\n    return a / 0\n\nf(7)\n"
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := interp.RunFile(path); err != nil {
		t.Fatal(err)
	}
	m = mustOK(t, "get_last_exception", "")
	exc := m["exception"].(map[string]any)
	if exc["type"] != "ZeroDivisionError" || exc["message"] != "division by zero" {
		t.Fatalf("%v", exc)
	}
	frames := exc["frames"].([]any)
	last := frames[len(frames)-1].(map[string]any)
	if last["function"] != "f" || last["source"] != "return a / 0" || last["line"] != 8.0 || last["file"] != path {
		t.Errorf("frame: %v", last)
	}
	locals := last["locals"].(map[string]any)
	if locals["a"] != "7" || locals["items"] != "[7, 7]" || !strings.Contains(locals["p"].(string), "Pt") {
		t.Errorf("locals: %v", locals)
	}
	for _, f := range frames {
		if strings.HasPrefix(f.(map[string]any)["file"].(string), "<pyaichat") {
			t.Errorf("pyaichat's own frame shown: %v", f)
		}
	}
	contains(t, str(t, exc, "traceback"), "ZeroDivisionError: division by zero")

	// An exception with its own __str__ is rendered in the isolated copy.
	if _, err := interp.RunCommand("class GleErr(Exception):\n    def __str__(self):\n        return 'custom ' + str(self.args[0])\nraise GleErr(5)"); err != nil {
		t.Fatal(err)
	}
	exc = mustOK(t, "get_last_exception", "")["exception"].(map[string]any)
	if exc["type"] != "__main__.GleErr" || exc["message"] != "custom 5" {
		t.Errorf("%v", exc)
	}
}

func TestCallText(t *testing.T) {
	setup(t, "ct_v = 5")
	res, cerr := reg.callText(context.Background(), "get_repr", "ct_v")
	if cerr != nil || string(res) != `{"repr":"5","truncated":false}` {
		t.Errorf("%s %v", res, cerr)
	}
	if _, cerr := reg.callText(context.Background(), "list_globals", ""); cerr != nil {
		t.Error(cerr)
	}
	for _, c := range [][2]string{{"get_repr", ""}, {"list_globals", "x"}, {"nope", ""}} {
		if _, cerr := reg.callText(context.Background(), c[0], c[1]); cerr == nil || cerr.Type != spec.InvalidArguments {
			t.Errorf("%v: %v", c, cerr)
		}
	}
}

// Prepare (the user entered ai>) loads the helper and leaves a ready copy,
// so that even the first call of a fresh registry does not fork.
func TestPrepareReadiesTheFirstCall(t *testing.T) {
	fresh := New(interp, Options{Deadline: time.Second})
	if err := fresh.Prepare(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !interp.IsolationStats().Ready; {
		if time.Now().After(deadline) {
			t.Fatal("no ready copy within 10s of Prepare")
		}
		time.Sleep(time.Millisecond)
	}
	before := interp.IsolationStats()
	res, cerr := fresh.call(context.Background(), "eval_expr", json.RawMessage(exprArgs("6 * 7")))
	if cerr != nil {
		t.Fatal(cerr)
	}
	if !strings.Contains(string(res), `"42"`) {
		t.Errorf("eval_expr(6 * 7) = %s", res)
	}
	after := interp.IsolationStats()
	if after.Used != before.Used+1 || after.Forked != before.Forked {
		t.Errorf("the first call after Prepare: used %d ready copies and forked %d times, want 1 and 0",
			after.Used-before.Used, after.Forked-before.Forked)
	}
}

// pybridge names the fate of an isolated call in the words the model
// reads: capabilities passes its error types through.
func TestBridgeErrorTypesAreTheVocabulary(t *testing.T) {
	for bridge, kind := range map[string]spec.Kind{
		pybridge.ErrTypeTimeout:  spec.Timeout,
		pybridge.ErrTypeCanceled: spec.Canceled,
		pybridge.ErrTypeCrashed:  spec.Crashed,
	} {
		if bridge != kind {
			t.Errorf("pybridge reports %q where the vocabulary says %q", bridge, kind)
		}
	}
}

// Call and CallText return a nil error when the call worked, and a
// *spec.Error when it did not: never a typed nil.
func TestCallReturnsError(t *testing.T) {
	ctx := context.Background()
	if _, err := reg.Call(ctx, "list_globals", nil); err != nil {
		t.Fatalf("list_globals: %v", err)
	}
	if _, err := reg.CallText(ctx, "list_globals", ""); err != nil {
		t.Fatalf("list_globals as text: %v", err)
	}
	var cerr *spec.Error
	if _, err := reg.Call(ctx, "no_such_capability", nil); !errors.As(err, &cerr) || cerr.Type != spec.InvalidArguments {
		t.Errorf("an unknown capability: %v, want a *spec.Error of type %s", err, spec.InvalidArguments)
	}
	if _, err := reg.CallText(ctx, "list_globals", "x"); !errors.As(err, &cerr) || cerr.Type != spec.InvalidArguments {
		t.Errorf("an expression where none is taken: %v", err)
	}
}
