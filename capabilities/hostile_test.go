package capabilities

// Hostile values: names, messages and exceptions built to flood the
// result, pass for pyaichat's own errors, take unbounded time or run user
// code in the session while get_last_exception reads them.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/capabilities/spec"
	"github.com/pyaichat/pyaichat/pybridge"
)

// setLast runs code in the session and records the exception it raises
// as the last one, as the REPL does.
func setLast(t testing.TB, code string) {
	t.Helper()
	setup(t, fmt.Sprintf(`
import sys
try:
    exec(compile(%q, "<test>", "exec"), globals())
except BaseException as _e:
    sys.last_type, sys.last_value, sys.last_traceback = type(_e), _e, _e.__traceback__
    del _e
else:
    raise AssertionError("no exception")
`, code))
}

// lastException is get_last_exception's "exception" object.
func lastException(t *testing.T) map[string]any {
	t.Helper()
	exc, ok := mustOK(t, "get_last_exception", "")["exception"].(map[string]any)
	if !ok {
		t.Fatal("no exception")
	}
	return exc
}

func clearLast(t *testing.T) {
	t.Helper()
	if _, err := interp.Call(context.Background(), pybridge.CallHelper, "_caps_test", "clear_last", ""); err != nil {
		t.Fatal(err)
	}
}

func TestErrorTypesCannotBeFaked(t *testing.T) {
	defer clearLast(t)
	setup(t, `
def et_raise(e):
    raise e
class Timeout(Exception): pass
class Refused(Exception): pass
class Crashed(Exception):
    def __str__(self):
        return "the isolated evaluation crashed"
et_fake_builtin = type("ValueError", (Exception,), {"__module__": "builtins"})
et_bidi = type("Bad\u202eName\x9b31m\x1b[2J", (Exception,), {})
et_long = type("L" * 10**7, (Exception,), {"__module__": "m" * 10**7})
`)
	for expr, want := range map[string]string{
		"et_raise(Timeout('no result within 1s'))": "__main__.Timeout",
		"et_raise(Refused('open refused'))":        "__main__.Refused",
		"et_raise(Crashed())":                      "__main__.Crashed",
		"et_raise(et_fake_builtin('x'))":           "builtins.ValueError",
		"1/0":                                      "ZeroDivisionError",
		"open('/etc/passwd')":                      spec.Refused,
	} {
		mustErr(t, "eval_expr", expr, want)
	}
	cerr := mustErr(t, "eval_expr", "et_raise(et_bidi())", `__main__.Bad\u202eName\x9b31m\x1b[2J`)
	if strings.ContainsAny(cerr.Type, "\u202e\u009b\x1b") {
		t.Errorf("raw control characters in the type: %q", cerr.Type)
	}
	m, cerr := call(t, "eval_expr", exprArgs("et_raise(et_long())"))
	if cerr == nil {
		t.Fatalf("no error: %v", m)
	}
	if len(cerr.Type) > 1000 || !strings.HasPrefix(cerr.Type, "mmm") || !strings.Contains(cerr.Type, ".LLL") {
		t.Errorf("a 10 MB class name: type of %d bytes: %.80q", len(cerr.Type), cerr.Type)
	}

	// Nor by putting a class of one's own where a helper might look for
	// pyaichat's Refused.
	setup(t, "import _pyaichat\n_pyaichat.Refused = Refused")
	mustErr(t, "eval_expr", "et_raise(Refused('open refused'))", "__main__.Refused")
	setup(t, "del _pyaichat.Refused")

	// The last exception's type too.
	setLast(t, "raise Timeout('x')")
	if got := lastException(t)["type"]; got != "__main__.Timeout" {
		t.Errorf("get_last_exception type %q", got)
	}
	setLast(t, "raise et_long()")
	if got := lastException(t)["type"].(string); len(got) > 1000 {
		t.Errorf("get_last_exception type of %d bytes", len(got))
	}
}

// rawCall is the JSON text of a capability's result.
func rawCall(t *testing.T, name, expr string) []byte {
	t.Helper()
	args := "{}"
	if expr != "" {
		args = exprArgs(expr)
	}
	res, cerr := reg.call(context.Background(), name, json.RawMessage(args))
	if cerr != nil {
		t.Fatalf("%s(%.60q): %v", name, expr, cerr)
	}
	return res
}

func TestEveryResultIsBounded(t *testing.T) {
	const bound = 64 << 10 // the default Options.MaxResultBytes
	defer clearLast(t)
	setup(t, `
eb_T = type("T" * 10**7, (), {"__doc__": "d" * 10**7})
globals()["g" * 10**7] = eb_T()
eb_obj = eb_T()
eb_obj.__dict__.update({("a%d" % i) * 10**4: i for i in range(300)})
eb_c = object
for _i in range(3000):
    eb_c = type("C%d" % _i + "x" * 1000, (eb_c,), {})
eb_deep = eb_c()
def eb_f(a="x" * 10**7, *, b=list(range(10**6))):
    "doc"
`)
	defer setup(t, `del globals()["g" * 10**7], eb_T, eb_obj, eb_c, eb_deep, eb_f`)
	for _, c := range [][2]string{
		{"list_globals", ""},
		{"get_type", "eb_deep"},
		{"get_type", "eb_f"},
		{"get_repr", "eb_obj"},
		{"get_dir", "eb_obj"},
		{"get_doc", "eb_f"},
		{"get_doc", "eb_T"},
		{"eval_expr", "eb_obj"},
	} {
		res := rawCall(t, c[0], c[1])
		if len(res) > bound {
			t.Errorf("%s(%s): %d bytes", c[0], c[1], len(res))
		}
	}

	// get_last_exception: a 10 MB message, a 5 MB source line, a 10 MB
	// file name, 30 locals with 200 KB names and 1 MB values.
	path := filepath.Join(t.TempDir(), "long.py")
	src := strings.Repeat("y = 1; ", 700000) + "raise ValueError('m' * 10**7)\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	setLast(t, fmt.Sprintf(`
_code = compile(open(%q).read(), %[1]q, "exec")
_outer = compile("exec(_code, {}, {('k%%d' %% i) * 10**5: 'v' * 10**6 for i in range(30)})", "f" * 10**7, "exec")
exec(_outer, {"_code": _code})
`, path))
	res := rawCall(t, "get_last_exception", "")
	if len(res) > bound {
		t.Errorf("get_last_exception: %d bytes", len(res))
	}
	if !strings.Contains(string(res), "y = 1; y = 1") || !strings.Contains(string(res), "ValueError: mmmm") {
		t.Errorf("get_last_exception lost the source or the message: %.300s", res)
	}
}

// Exceptions whose message would take seconds and megabytes to build in
// full: the message is cut at a bounded size (BenchmarkHugeLastException
// times the call).
func TestGetLastExceptionIsBounded(t *testing.T) {
	defer clearLast(t)
	defer setup(t, "sys.set_int_max_str_digits(4300)")
	for _, c := range []struct{ code, message string }{
		{"sys.set_int_max_str_digits(0); raise ValueError(10**(10**6))", "<int with about 10000"},
		{"raise ValueError(*range(5*10**6))", "(0, 1, 2, 3, "},
		{"raise KeyError(*range(5*10**6))", "(0, 1, 2, 3, "},
		{"raise ValueError([list(range(10**6))] * 10**3)", "[[0, 1, 2, "},
	} {
		setLast(t, c.code)
		res := rawCall(t, "get_last_exception", "")
		var m struct{ Exception struct{ Message string } }
		if err := json.Unmarshal(res, &m); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(m.Exception.Message, c.message) || len(m.Exception.Message) > 2100 {
			t.Errorf("%s: message %.100q (%d bytes)", c.code, m.Exception.Message, len(m.Exception.Message))
		}
		setup(t, "sys.last_value = sys.last_traceback = None")
	}
}

// As CPython prints it: when str() of the exception fails, the message is
// "<exception str() failed>" and the traceback is still there.
func TestGetLastExceptionWhenStrFails(t *testing.T) {
	defer clearLast(t)
	setup(t, `
class SfRaises(Exception):
    def __str__(self):
        raise RuntimeError("no")
class SfInt(Exception):
    def __str__(self):
        return 5
class SfArg:
    def __str__(self):
        raise RuntimeError("no")
def sf_fail(e):
    raise e
`)
	for code, typ := range map[string]string{
		"sf_fail(ValueError(10**5000))": "ValueError",
		"sf_fail(SfRaises())":           "__main__.SfRaises",
		"sf_fail(SfInt())":              "__main__.SfInt",
		"sf_fail(ValueError(SfArg()))":  "ValueError",
	} {
		setLast(t, code)
		exc := lastException(t)
		if exc["type"] != typ || exc["message"] != "<exception str() failed>" {
			t.Errorf("%s: %v: %v", code, exc["type"], exc["message"])
		}
		tb := str(t, exc, "traceback")
		if !strings.Contains(tb, "in sf_fail") || !strings.HasSuffix(tb, typ+": <exception str() failed>") {
			t.Errorf("%s: traceback %q", code, tb)
		}
	}
}

// Nothing get_last_exception reads in the session may call user code:
// each hostile object records the call in ru_calls.
func TestGetLastExceptionRunsNoUserCode(t *testing.T) {
	defer clearLast(t)
	setup(t, `
import _pyaichat
ru_calls = []
class RuMapping(dict):
    def items(self):
        ru_calls.append("items")
        return dict.items(self)
    def __iter__(self):
        ru_calls.append("iter")
        return dict.__iter__(self)
class RuText:
    def __str__(self):
        ru_calls.append("reason")
        return "reason from user code"
class RuBuiltin(Exception):
    __module__ = "builtins"
    def __str__(self):
        ru_calls.append("str")
        return "from user code"
class RuKey:
    def __repr__(self):
        ru_calls.append("key")
        return "k"
class RuNamespace(dict):
    def __setitem__(self, k, v):
        ru_calls.append("setitem")
        dict.__setitem__(self, k, v)
    def __delitem__(self, k):
        ru_calls.append("delitem")
        dict.__delitem__(self, k)
class RuMeta(type):
    @classmethod
    def __prepare__(mcs, name, bases):
        return RuNamespace()
def ru_class_body():
    z = 1
    class K(metaclass=RuMeta):
        y = z
        def m(self):
            return super().m()  # a __class__ cell in the body
        1/0
def ru_lazy():
    ru_calls.append("get_source")
    return "raise ValueError('lazy')\n"
`)
	cases := []struct{ code, message string }{
		{"exec('x = 1; 1/0', {}, RuMapping(a=1))", "division by zero"},
		{"e = UnicodeDecodeError('utf-8', b'\\xff', 0, 1, 'bad'); e.reason = RuText(); raise e",
			"'utf-8' codec can't decode byte 0xff in position 0: reason from user code"},
		{"raise RuBuiltin()", "from user code"},
		{"exec('1/0', {}, {RuKey(): 1})", "division by zero"},
		{"ru_class_body()", "division by zero"},
		// A lazy linecache entry in the helper's own linecache (which
		// user code can reach through _pyaichat.helper).
		{"_pyaichat.helper('_pyaichat_caps').linecache.cache['/nonexistent/ru.py'] = (ru_lazy,); " +
			"exec(compile('raise ValueError(1)', '/nonexistent/ru.py', 'exec'))", "1"},
	}
	for _, c := range cases {
		setLast(t, c.code)
		setup(t, "ru_calls.clear()") // what raising it called
		exc := lastException(t)
		if got := value(t, "ru_calls"); got != "[]" {
			t.Errorf("%s: user code ran in the session: %s", c.code, got)
		}
		if exc["message"] != c.message {
			t.Errorf("%s: message %q, want %q", c.code, exc["message"], c.message)
		}
	}
	setup(t, "_pyaichat.helper('_pyaichat_caps').linecache.cache.pop('/nonexistent/ru.py', None)")
}

// The bounded message is str() of the exception for ordinary builtin
// exceptions, answered in the session without a copy.
func TestGetLastExceptionMessagesAsPython(t *testing.T) {
	defer clearLast(t)
	for _, code := range []string{
		"raise ValueError('plain')",
		"raise ValueError()",
		"raise ValueError(1, 'two', [3], None)",
		"raise ValueError(b'x')",
		"raise KeyError('k')",
		"raise KeyError('a', 'b')",
		"raise OSError(2, 'No such file or directory', 'a.txt')",
		"raise OSError(2, 'No such file or directory', 'a.txt', None, 'b.txt')",
		"raise OSError('only a message')",
		"raise FileNotFoundError(2, 'gone')",
		"raise SyntaxError('invalid syntax', ('f.py', 3, 4, 'x y', 3, 5))",
		"raise ImportError('no module', name='m')",
		"raise ImportError()",
		"b'\\xff'.decode('utf-8')",
		"'\\u20ac'.encode('ascii')",
		"raise ExceptionGroup('several', [ValueError(1), TypeError(2)])",
		"raise AttributeError('no attr', name='a', obj=5)",
		"raise NameError('no name', name='n')",
		"raise SystemExit(3)",
		"raise StopIteration(7)",
	} {
		setLast(t, code)
		want := mustCall(t, "_caps_test", "text", "str(sys.last_value)", true)
		before := interp.IsolationStats()
		if got := lastException(t)["message"]; got != want {
			t.Errorf("%s: message %q, str() %q", code, got, want)
		}
		if after := interp.IsolationStats(); after.Forked+after.Used != before.Forked+before.Used {
			t.Errorf("%s: answered in a copy", code)
		}
	}
}

// list_globals reads pandas' internals only through pandas' own classes:
// a class that claims a pandas __module__ is a user class.
func TestPandasLookalikesRunNoUserCode(t *testing.T) {
	needScientific(t)
	setup(t, `
pl_calls = []
class PlArray:
    __module__ = "pandas.core.arrays.base"
    def __len__(self):
        pl_calls.append("len")
        return 3
class PlIndex(pd.Index):
    __module__ = "pandas.core.indexes.base"
pl_index = PlIndex._simple_new(np.array([1, 2, 3]))
pl_index.__dict__["_data"] = PlArray()
`)
	defer setup(t, "del pl_index")
	previews(t)
	if got := value(t, "pl_calls"); got != "[]" {
		t.Errorf("user code ran in the session: %s", got)
	}
}

// User code in the copy can replace the helper's functions there; what
// comes back is still bounded: by Go (MaxResultBytes) and, for what the
// copy writes into the pipe, by pybridge (64 MiB, not read).
func TestTamperedCopyResultIsBounded(t *testing.T) {
	setup(t, "import sys")
	tamper := func(n string) string {
		return "setattr(sys.modules['_pyaichat'].helper('_pyaichat_caps'), '_finish', " +
			"lambda res, a: '{\"ok\": \"' + 'x' * " + n + " + '\"}')"
	}
	cerr := mustErr(t, "eval_expr", tamper("(100 << 10)"), spec.Internal)
	contains(t, cerr.Message, "over the 65536-byte bound")
	cerr = mustErr(t, "eval_expr", tamper("(65 << 20)"), pybridge.ErrTypeIsolation)
	contains(t, cerr.Message, "over 64 MiB")
}

// The steps answered in the session itself run no user code, even when
// the user's objects sit where the helper looks: a sys.modules key whose
// hash collides with a library's name, a module __getattr__ on sys, a
// class __dict__ key that collides with a dunder name, an audit hook.
func TestInSessionStepsRunNoUserCode(t *testing.T) {
	defer clearLast(t)
	setup(t, `
import sys
ic_calls = []
class IcCollide:
    def __init__(self, name):
        self.name = name
    def __hash__(self):
        return hash(self.name)
    def __eq__(self, other):
        ic_calls.append("eq " + self.name)
        return False
for _n in ("numpy", "pandas", "pandas.io.formats.format", "__main__", "builtins", "last_value"):
    sys.modules[IcCollide(_n)] = None
def _ic_getattr(name):
    ic_calls.append("sys.__getattr__ " + name)
    raise AttributeError(name)
sys.__getattr__ = _ic_getattr
class IcError(Exception):
    pass
for _n in ("__str__", "__repr__", "__module__", "__qualname__", "__doc__"):
    setattr(IcError, "ic_" + _n, 1)
    IcError.__dict__  # a mappingproxy over the real dict
import gc
for _d in gc.get_referents(IcError.__dict__):
    if type(_d) is dict:
        for _n in ("__str__", "__repr__", "__init__", "__doc__"):
            _d[IcCollide(_n)] = 1
ic_value = IcError("boom")
ic_x = [1, 2, 3]
# Records the events between ic_arm() and the next compile (the test
# reading ic_calls).
ic_armed = False
def ic_arm():
    global ic_armed
    ic_calls.clear()
    ic_armed = True
def ic_hook(event, args):
    global ic_armed
    if event == "compile":
        ic_armed = False
    elif ic_armed:
        ic_calls.append("audit " + event)
sys.addaudithook(ic_hook)
`)
	defer setup(t, `
for _k in [k for k in sys.modules if type(k) is IcCollide]:
    del sys.modules[_k]
del sys.__getattr__
`)
	setLast(t, "raise IcError('boom')")
	if _, cerr := call(t, "get_type", exprArgs("ic_x")); cerr != nil { // loads the helper
		t.Fatal(cerr)
	}
	for _, c := range []struct{ name, expr string }{
		{"list_globals", ""}, {"get_type", "ic_x"}, {"get_repr", "ic_x"},
		{"get_dir", "ic_x"}, {"get_doc", "ic_x"}, {"get_type", "ic_value"},
		{"get_last_exception", ""},
	} {
		args := "{}"
		if c.expr != "" {
			args = exprArgs(c.expr)
		}
		setup(t, "ic_arm()")
		if _, cerr := call(t, c.name, args); cerr != nil {
			t.Errorf("%s(%s): %v", c.name, c.expr, cerr)
		}
		if got := value(t, "ic_calls"); got != "[]" {
			t.Errorf("%s(%s): user code ran in the session: %s", c.name, c.expr, got)
		}
	}
}

// A result written by user code in the copy (a frame of its own on the
// result descriptor) is shaped on the Go side: strings and lists cut to
// the bounds, and anything but one JSON object rejected.
func TestForgedResultIsShaped(t *testing.T) {
	setup(t, "import os, sys")
	forge := func(payload string) string {
		return "(lambda d: (os.write(3, bytes([1]) + len(d).to_bytes(8, 'little') + d), os._exit(0)))(" + payload + ")"
	}
	m := mustOK(t, "eval_expr", forge(`b'{"ok": {"repr": "' + b'y' * 9000 + b'", "list": [' + b','.join([b'1'] * 500) + b']}}'`))
	if got := len(str(t, m, "repr")); got > 4096+64+3 {
		t.Errorf("a forged repr of %d characters passed", got)
	}
	if got := len(m["list"].([]any)); got != 200 {
		t.Errorf("a forged list of %d entries passed", got)
	}
	for _, payload := range []string{`b'{"ok": [1, 2]}'`, `b'{"ok": {"a": 1} } {"b": 2}'`, `b'{"ok": "text"}'`} {
		cerr := mustErr(t, "eval_expr", forge(payload), spec.Internal)
		contains(t, cerr.Message, "result")
	}
}

// In the copy, the environment variables judged secret have their values
// wiped before the expression runs: a transformed secret is a transformed
// marker, and the session's own environment is untouched.
func TestSecretEnvironmentWipedInCopy(t *testing.T) {
	setup(t, "import os, base64; os.environ['PYAI_TEST_TOKEN'] = 'tok-9f8e7d6c5b4a'; os.environ['PYAI_TEST_PLAIN'] = 'plain-value'")
	defer setup(t, "del os.environ['PYAI_TEST_TOKEN'], os.environ['PYAI_TEST_PLAIN']")
	r := New(interp, Options{SecretEnv: func(name string) bool { return strings.HasSuffix(name, "_TOKEN") }})
	for expr, want := range map[string]string{
		"os.environ['PYAI_TEST_TOKEN'][::-1]":                     "'>srahc 61 ,eulav tnemnorivne terces :detcader<'",
		"os.getenv('PYAI_TEST_TOKEN')":                            "'<redacted: secret environment value, 16 chars>'",
		"base64.b64encode(os.environb[b'PYAI_TEST_TOKEN'])[:12]":  "b'PHJlZGFjdGVk'",
		"os.environ['PYAI_TEST_PLAIN']":                           "'plain-value'",
		"'tok-9f8e7d6c5b4a' in repr(os.environ)":                  "False",
		"__import__('posix').environ.get(b'PYAI_TEST_TOKEN')[:9]": "b'<redacted'",
	} {
		res, cerr := r.callText(context.Background(), "eval_expr", expr)
		var m map[string]any
		if cerr != nil || json.Unmarshal(res, &m) != nil || m["repr"] != want {
			t.Errorf("%s: got %s %v, want %s", expr, res, cerr, want)
		}
	}
	if got := value(t, "os.environ['PYAI_TEST_TOKEN']"); got != "'tok-9f8e7d6c5b4a'" {
		t.Errorf("the session's environment changed: %s", got)
	}
}
