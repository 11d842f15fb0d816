//go:build cgo

package pybridge

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// Tests that a copy of the session cannot read what pyaichat holds.

const privateHelper = `
import __main__, _pyaichat, os, posix

def evaluate(expr):
    try:
        return repr(eval(expr, __main__.__dict__))
    except BaseException as e:
        return type(e).__name__ + ": " + str(e)

def forge(payload):
    data = payload.encode()
    os.write(3, bytes([0]) + len(data).to_bytes(8, "little") + data)
    os._exit(0)

def scrub(names):
    _pyaichat.scrub_environ(set(names.split(",")), (os.environ._data, posix.environ))
    return repr((os.environ.get("PYB_TEST_TOKEN"), os.getenv("PYB_TEST_TOKEN"),
                 posix.environ.get(b"PYB_TEST_TOKEN"), os.environ.get("PYB_TEST_PLAIN")))
`

// goSecret is on Go's heap, as the API key is.
var goSecret []byte

func loadPrivateHelper(t *testing.T) {
	t.Helper()
	if err := testInterp.LoadModule("_private_test", privateHelper); err != nil {
		t.Fatal(err)
	}
}

func TestCopyCannotReadGoHeap(t *testing.T) {
	loadPrivateHelper(t)
	goSecret = []byte("go-heap-secret-8c1f0e57a2d94b36\x00")
	addr := uintptr(unsafe.Pointer(&goSecret[0]))
	push(t, "import ctypes")
	read := fmt.Sprintf("ctypes.c_char_p(%d).value", addr)

	// In the session itself the bytes are there to read: the route works.
	out, err := helperCall("_private_test", "evaluate", read)
	if err != nil || !strings.Contains(out, "go-heap-secret") {
		t.Fatalf("in the session: %q, %v; the test's route to Go's heap does not work", out, err)
	}
	for _, ready := range []bool{false, true} {
		if ready {
			prepare(t)
		}
		out, err := isolatedCall("_private_test", "evaluate", read, 5*time.Second)
		var pe *Error
		if strings.Contains(out, "go-heap-secret") || !errors.As(err, &pe) || pe.Type != ErrTypeCrashed {
			t.Errorf("ready copy %v: got %q, %v; want the read to crash the copy", ready, out, err)
		}
	}
	runtime.KeepAlive(goSecret)
}

func TestCopyRefusesForeignCalls(t *testing.T) {
	loadPrivateHelper(t)
	push(t, "import ctypes")
	for _, expr := range []string{
		"ctypes.memmove(id(b'abcd') + 32, id(1), 4)",
		"ctypes.memset(id(b'abcd') + 32, 0, 4)",
		"ctypes.cast(id(1), ctypes.c_char_p)",
		"ctypes.string_at(id(1), 8)",
		"(lambda: 0).__code__.replace(co_consts=(1,))",
		"__import__('marshal').loads(b'')",
	} {
		out, err := isolatedCall("_private_test", "evaluate", expr, 5*time.Second)
		if err != nil || !strings.HasPrefix(out, "Refused: ") {
			t.Errorf("%s: got %q, %v; want Refused", expr, out, err)
		}
	}
	// Ordinary ctypes values still answer.
	out, err := isolatedCall("_private_test", "evaluate", "ctypes.c_int(5).value", 5*time.Second)
	if err != nil || out != "5" {
		t.Errorf("ctypes.c_int(5).value: %q, %v", out, err)
	}
}

func TestCopyScrubsEnviron(t *testing.T) {
	loadPrivateHelper(t)
	push(t, "import os; os.environ['PYB_TEST_TOKEN'] = 'tok-5b8e1d7c9a'; os.environ['PYB_TEST_PLAIN'] = 'plain'")
	defer push(t, "del os.environ['PYB_TEST_TOKEN'], os.environ['PYB_TEST_PLAIN']")
	out, err := isolatedCall("_private_test", "scrub", "PYB_TEST_TOKEN", 5*time.Second)
	marker := "'<redacted: secret environment value, 14 chars>'"
	want := "(" + marker + ", " + marker + ", b" + marker + ", 'plain')"
	if err != nil || out != want {
		t.Fatalf("got %s, %v\nwant %s", out, err, want)
	}
	// Never in the session itself.
	out, err = helperCall("_private_test", "scrub", "PYB_TEST_TOKEN")
	if err == nil || !strings.Contains(err.Error(), "only in an isolated copy") {
		t.Fatalf("in the session: %q, %v", out, err)
	}
}

// A copy runs user code, which can write its own result frame: the guard
// flags come from the kernel, not from the frame.
func TestForgedFrameDoesNotSetGuards(t *testing.T) {
	loadPrivateHelper(t)
	out, err := isolatedCall("_private_test", "forge", "forged", 5*time.Second)
	if err != nil || out != "forged" {
		t.Fatalf("got %q, %v", out, err)
	}
	if active, known := SeccompActive(); !known || !active {
		t.Errorf("a frame whose guard byte is 0 made seccomp active=%v known=%v", active, known)
	}
}
