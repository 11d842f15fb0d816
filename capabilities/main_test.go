package capabilities

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/capabilities/spec"
	"github.com/pyaichat/pyaichat/pybridge"
)

// One interpreter per process: every test here shares it, and each test
// names its own globals.
var (
	interp *pybridge.Interp
	reg    *Registry
	// stdinReads counts lines that Python code read through pyaichat.
	stdinReads atomic.Int32
)

// testHelper lets tests set up and inspect the session without going
// through the capabilities under test.
const testHelper = `
import __main__, sys

def run(code):
    exec(compile(code, "<test>", "exec"), __main__.__dict__)
    return "ok"

def value(expr):
    return repr(eval(expr, __main__.__dict__))

def text(expr):
    return str(eval(expr, __main__.__dict__))

def clear_last(_):
    sys.last_type = sys.last_value = sys.last_traceback = None
    return "ok"
`

func TestMain(m *testing.M) {
	in, err := pybridge.Start(pybridge.Config{
		ReadLine: func(prompt string, show bool) (string, error) {
			stdinReads.Add(1)
			return "typed by the user\n", nil
		},
	})
	if err != nil {
		panic(err)
	}
	if err := in.RouteStdin(false); err != nil {
		panic(err)
	}
	if err := in.LoadModule("_caps_test", testHelper); err != nil {
		panic(err)
	}
	interp = in
	// The deadline bounds a hang, not a speed: tests that want a Timeout
	// make a registry of their own with a short one and code that never
	// ends. Under load, real work (pandas over 10^6 rows, a 64 MiB result)
	// takes seconds.
	reg = New(in, Options{Deadline: 30 * time.Second})
	code := m.Run()
	in.Close(5 * time.Second)
	os.Exit(code)
}

// setup runs Python in the session, failing the test on an exception.
func setup(t testing.TB, code string) {
	t.Helper()
	if _, err := interp.Call(context.Background(), pybridge.CallUserCode, "_caps_test", "run", code); err != nil {
		t.Fatalf("setup %q: %v", code, err)
	}
}

// value is repr(eval(expr)) in the session, computed directly.
func value(t testing.TB, expr string) string {
	t.Helper()
	return mustCall(t, "_caps_test", "value", expr, true)
}

// mustCall is module.fn(arg) in the session, failing the test on an
// exception.
func mustCall(t testing.TB, module, fn, arg string, userCode bool) string {
	t.Helper()
	kind := pybridge.CallHelper
	if userCode {
		kind = pybridge.CallUserCode
	}
	out, err := interp.Call(context.Background(), kind, module, fn, arg)
	if err != nil {
		t.Fatalf("%s.%s(%q): %v", module, fn, arg, err)
	}
	return out
}

func call(t testing.TB, name, args string) (map[string]any, *spec.Error) {
	t.Helper()
	res, cerr := reg.call(context.Background(), name, json.RawMessage(args))
	if cerr != nil {
		return nil, cerr
	}
	var m map[string]any
	if err := json.Unmarshal(res, &m); err != nil {
		t.Fatalf("%s(%s): result is not a JSON object: %v: %s", name, args, err, res)
	}
	return m, nil
}

func exprArgs(expr string) string {
	b, _ := json.Marshal(map[string]string{"expr": expr})
	return string(b)
}

func mustOK(t testing.TB, name, expr string) map[string]any {
	t.Helper()
	args := "{}"
	if expr != "" {
		args = exprArgs(expr)
	}
	m, cerr := call(t, name, args)
	if cerr != nil {
		t.Fatalf("%s(%q): %v", name, expr, cerr)
	}
	return m
}

func mustErr(t testing.TB, name, expr, wantType string) *spec.Error {
	t.Helper()
	m, cerr := call(t, name, exprArgs(expr))
	if cerr == nil {
		t.Fatalf("%s(%q): want a %s error, got %v", name, expr, wantType, m)
	}
	if cerr.Type != wantType {
		t.Fatalf("%s(%q): want a %s error, got %s: %s", name, expr, wantType, cerr.Type, cerr.Message)
	}
	return cerr
}

func str(t testing.TB, m map[string]any, key string) string {
	t.Helper()
	s, ok := m[key].(string)
	if !ok {
		t.Fatalf("%q is not a string in %v", key, m)
	}
	return s
}

func contains(t testing.TB, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("%q does not contain %q", got, want)
	}
}
