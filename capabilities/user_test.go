package capabilities

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/pybridge"
)

const typedModule = `from typing import Optional, List
import pyaichat


@pyaichat.capability
def uc_typed(s: str, i: int, f: float, flag: bool, xs: list[int], d: dict,
             o: Optional[int] = None, ys: List[str] = ["a"], anything=3):
    """Takes one of each.

    Not in the description."""
    return [s, i, f, flag, xs, d, o, ys, anything]


@pyaichat.capability(name="uc_renamed")
def _hidden():
    return object()


@pyaichat.capability
def uc_long():
    return float("inf")


uc_long.__doc__ = "x" * 5000


@pyaichat.capability
def uc_star(*args):
    """Takes anything."""


@pyaichat.capability
def uc_date(when: complex):
    """Takes a complex."""


@pyaichat.capability(name="get_repr")
def uc_clash():
    """Clashes."""
`

// writeModules writes Python modules (name to source) in a directory put
// first on the session's sys.path.
func writeModules(t *testing.T, modules map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, src := range modules {
		if err := os.WriteFile(filepath.Join(dir, name+".py"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setup(t, "import sys; sys.path.insert(0, "+pyString(dir)+")")
}

func pyString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The schema comes from the signature, the description from the
// docstring's first paragraph, bounded; what cannot be a tool is one line
// each, and a module that fails to import (a decorator misused, a syntax
// error) is one line, the rest loading.
func TestLoadUserSchemasAndProblems(t *testing.T) {
	writeModules(t, map[string]string{
		"uc_types":  typedModule,
		"uc_misuse": "import pyaichat\n\n@pyaichat.capability('oops')\ndef f():\n    pass\n",
		"uc_syntax": "import pyaichat\n\ndef f(:\n",
	})
	r := New(interp, Options{Deadline: 30 * time.Second})
	problems := r.LoadUser(context.Background(), []string{"uc_misuse", "uc_types", "uc_syntax"}, "")
	wantProblems := []string{
		"capability module uc_misuse (capability_modules): TypeError: @pyaichat.capability decorates a function defined with def, not a str",
		"capability uc_star in uc_types: parameter args: *args, **kwargs and positional-only parameters cannot come from JSON",
		"capability uc_date in uc_types: parameter when: complex cannot come from JSON",
		"capability get_repr in uc_types: the name is a built-in capability's",
		"capability module uc_syntax (capability_modules): SyntaxError: invalid syntax (uc_syntax.py:3)",
	}
	if len(problems) != len(wantProblems) {
		t.Fatalf("problems:\n%s\nwant %d", strings.Join(problems, "\n"), len(wantProblems))
	}
	for i, want := range wantProblems {
		if !strings.HasPrefix(problems[i], want) {
			t.Errorf("problem %d is %q, want %q...", i, problems[i], want)
		}
	}

	user := r.User()
	if len(user) != 3 || user[0].Name != "uc_typed" || user[1].Name != "uc_renamed" || user[2].Name != "uc_long" {
		t.Fatalf("user capabilities %+v", user)
	}
	if user[0].Description != "Takes one of each." || user[0].Module != "uc_types" {
		t.Errorf("uc_typed: %+v", user[0])
	}
	if d := user[2].Description; len(d) != 1024+3 || !strings.HasSuffix(d, "...") {
		t.Errorf("a 5000-character docstring gave a description of %d characters", len(d))
	}
	if !strings.Contains(user[1].Description, "no docstring") {
		t.Errorf("no docstring gave %q", user[1].Description)
	}
	want := `{"type":"object","properties":{"s":{"type":"string"},"i":{"type":"integer"},` +
		`"f":{"type":"number"},"flag":{"type":"boolean"},"xs":{"type":"array","items":{"type":"integer"}},` +
		`"d":{"type":"object"},"o":{"default":null,"type":["integer","null"]},` +
		`"ys":{"default":["a"],"type":"array","items":{"type":"string"}},"anything":{"default":3}},` +
		`"additionalProperties":false,"required":["s","i","f","flag","xs","d"]}`
	if got := compactJSON(t, user[0].Schema); got != want {
		t.Errorf("uc_typed's schema\n got %s\nwant %s", got, want)
	}
	if names := len(r.List()); names != len(Names())+3 {
		t.Errorf("List has %d capabilities, want the seven and three", names)
	}
	if got := value(t, "'pyaichat' in sys.modules and 'uc_types' in sys.modules"); got != "True" {
		t.Errorf("the modules are not in sys.modules: %s", got)
	}

	ctx := context.Background()
	calls := []struct{ name, args, want string }{
		{"uc_typed", `{"s":"x\u001b","i":1,"f":2,"flag":true,"xs":[1],"d":{"k":[1]}}`,
			`{"result":["x\\x1b",1,2,true,[1],{"k":[1]},null,["a"],3]}`},
		{"uc_renamed", ``, `{"repr":"<object object at `},
		{"uc_long", `{}`, `{"result":"inf"}`},
	}
	for _, c := range calls {
		res, cerr := r.call(ctx, c.name, json.RawMessage(c.args))
		if cerr != nil || !strings.HasPrefix(string(res), c.want) {
			t.Errorf("%s(%s) = %s, %v; want %s", c.name, c.args, res, cerr, c.want)
		}
	}
	bad := []struct{ args, want string }{
		{`{"s":"x","i":true,"f":2,"flag":true,"xs":[],"d":{}}`, `'i' must be integer`},
		{`{"s":"x","i":1,"f":2,"flag":true,"xs":[]}`, `argument 'd' is missing`},
		{`{"s":"x","i":1,"f":2,"flag":true,"xs":[],"d":{},"z":1}`, `unexpected argument 'z'`},
		{`[1]`, `arguments must be a JSON object`},
	}
	for _, c := range bad {
		_, cerr := r.call(ctx, "uc_typed", json.RawMessage(c.args))
		if cerr == nil || cerr.Type != "InvalidArguments" || !strings.Contains(cerr.Message, c.want) {
			t.Errorf("uc_typed(%s): %v, want InvalidArguments: ...%s", c.args, cerr, c.want)
		}
	}
	if _, cerr := r.call(ctx, "uc_nosuch", nil); cerr == nil || !strings.Contains(cerr.Message, "uc_typed") {
		t.Errorf("an unknown name: %v, want the list with the user's", cerr)
	}
}

// compactJSON is raw without spaces, its keys in the order Python
// wrote them.
func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return b.String()
}

// BenchmarkLoadUserNone is what every start with the assistant pays when
// there are no user capabilities: the helper loaded and sys.path looked
// at, with the entry points' cache warm (cold: the first run). The tests'
// interpreter keeps no compiled code, so the helper is compiled at each
// load here (about 2 ms); pyaichat keeps it compiled between runs
// (pybridge.Config.CacheDir), and the look at sys.path takes 0.1 ms.
func BenchmarkLoadUserNone(b *testing.B) {
	cache := filepath.Join(b.TempDir(), "entry-points.json")
	r := New(interp, Options{})
	for i := 0; i < b.N; i++ {
		if problems := r.LoadUser(context.Background(), nil, cache); len(problems) != 0 {
			b.Fatal(problems)
		}
	}
}

// countingSession counts what a registry asks of the session.
type countingSession struct {
	Session
	asked int
}

func (c *countingSession) LoadModule(name, source string) error {
	c.asked++
	return c.Session.LoadModule(name, source)
}

func (c *countingSession) Call(ctx context.Context, kind pybridge.CallKind, module, fn, arg string) (string, error) {
	c.asked++
	return c.Session.Call(ctx, kind, module, fn, arg)
}

// With a sys.path key and no modules, a start after one that found no
// package registering the entry point asks nothing of Python; once a
// directory on sys.path changes (a package that registers a module is
// installed there) discovery runs again, and the broken module it
// registers is reported at every start from then on.
func TestLoadUserSkipsPythonUntilSysPathChanges(t *testing.T) {
	dir := t.TempDir()
	setup(t, "import sys; sys.path.insert(0, "+pyString(dir)+")")
	t.Cleanup(func() { setup(t, "import sys; sys.path.remove("+pyString(dir)+")") })
	cache := filepath.Join(t.TempDir(), "entry-points.json")
	start := func(key string) (problems []string, asked int) {
		in := &countingSession{Session: interp}
		problems = New(in, Options{Deadline: 30 * time.Second, SysPathKey: key}).LoadUser(context.Background(), nil, cache)
		return problems, in.asked
	}
	if problems, asked := start("k1"); len(problems) != 0 || asked == 0 {
		t.Fatalf("the first start: problems %q, %d requests to Python; want none, some", problems, asked)
	}
	if problems, asked := start("k1"); len(problems) != 0 || asked != 0 {
		t.Fatalf("the second start: problems %q, %d requests to Python; want none, none", problems, asked)
	}
	if _, asked := start("k2"); asked == 0 {
		t.Fatal("a start with another sys.path key asked nothing of Python")
	}
	start("k1")
	dist := filepath.Join(dir, "brokencaps-1.0.dist-info")
	if err := os.Mkdir(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"METADATA":         "Metadata-Version: 2.1\nName: brokencaps\nVersion: 1.0\n",
		"entry_points.txt": "[pyaichat.capabilities]\nbroken = uc_no_such_module\n",
	} {
		if err := os.WriteFile(filepath.Join(dist, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		problems, _ := start("k1")
		if len(problems) != 1 || !strings.Contains(problems[0], "uc_no_such_module") {
			t.Fatalf("start %d after the package was installed: problems %q, want the broken module's", i+1, problems)
		}
	}
}
