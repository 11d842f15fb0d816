//go:build cgo

package pybridge

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const isoHelper = `
import _posixsubprocess, faulthandler, os, sys, time, socket
import __main__

def echo(arg):
    return "echo:" + arg

def mutate(arg):
    __main__.iso_list.append(arg)
    __main__.iso_new = 1
    return str(len(__main__.iso_list))

def spin(arg):
    while True:
        pass

def csum(arg):
    return str(sum(range(10**12)))

def sleep(arg):
    time.sleep(10**6)
    return "woke"

def exit3(arg):
    os._exit(3)

def segv(arg):
    faulthandler._sigsegv()

def try_open(arg):
    try:
        open(arg, "w")
    except BaseException as e:
        return type(e).__name__ + ": " + str(e)
    return "opened"

def audited(arg):
    out = []
    for name, fn in [("fork", os.fork), ("socket", lambda: socket.socket())]:
        try:
            fn()
            out.append(name + ":ok")
        except BaseException as e:
            out.append(name + ":" + type(e).__name__)
    return ",".join(out)

def unaudited(arg):
    # Neither raises an audit event, so only the seccomp filter stands in
    # the way: fork_exec spawns a process, dup copies a descriptor.
    out = []
    touch = [b"/usr/bin/touch", os.fsencode(arg)]
    try:
        if sys.version_info < (3, 11):  # no pgid_to_set, no allow_vfork
            _posixsubprocess.fork_exec(touch, [touch[0]], True, (), None, None,
                -1, -1, -1, -1, -1, -1, 3, 3, True, False, None, None, None, -1, None)
        else:
            _posixsubprocess.fork_exec(touch, [touch[0]], True, (), None, None,
                -1, -1, -1, -1, -1, -1, 3, 3, True, False, -1, -1, None, -1, -1,
                None, False)
        out.append("fork_exec:ok")
    except BaseException as e:
        out.append("fork_exec:" + type(e).__name__)
    try:
        os.dup(0)
        out.append("dup:ok")
    except BaseException as e:
        out.append("dup:" + type(e).__name__)
    return ",".join(out)

def raises(arg):
    raise ValueError("bad " + arg)
`

func loadIsoHelper(t testing.TB) {
	t.Helper()
	if err := testInterp.LoadModule("_iso_test", isoHelper); err != nil {
		t.Fatal(err)
	}
	if _, err := testInterp.Push("iso_list = [1, 2]"); err != nil {
		t.Fatal(err)
	}
}

func TestCallIsolatedRoundTrip(t *testing.T) {
	loadIsoHelper(t)
	out, err := isolatedCall("_iso_test", "echo", "a\x00b\u00e9", 5*time.Second)
	if err != nil || out != "echo:a\x00b\u00e9" {
		t.Fatalf("got %q, %v", out, err)
	}
	if active, known := SeccompActive(); !known || !active {
		t.Errorf("seccomp active=%v known=%v; this Linux test machine supports filters", active, known)
	}
}

func TestCallIsolatedLeavesSessionAlone(t *testing.T) {
	loadIsoHelper(t)
	out, err := isolatedCall("_iso_test", "mutate", "x", 5*time.Second)
	if err != nil || out != "3" {
		t.Fatalf("in the copy: %q, %v", out, err)
	}
	chk := "import __main__\ndef state(_):\n    return repr((__main__.iso_list, hasattr(__main__, 'iso_new')))\n"
	if err := testInterp.LoadModule("_iso_chk", chk); err != nil {
		t.Fatal(err)
	}
	s, err := helperCall("_iso_chk", "state", "")
	if err != nil || s != "([1, 2], False)" {
		t.Fatalf("session changed: %s %v", s, err)
	}
}

func TestCallIsolatedDeadlines(t *testing.T) {
	loadIsoHelper(t)
	for _, fn := range []string{"spin", "csum", "sleep"} {
		_, err := isolatedCall("_iso_test", fn, "", 300*time.Millisecond)
		var pe *Error
		if !errors.As(err, &pe) || pe.Type != ErrTypeTimeout {
			t.Errorf("%s: want a Timeout error, got %v", fn, err)
		}
	}
	// The interpreter is still usable.
	out, err := helperCall("_iso_test", "echo", "ok")
	if err != nil || out != "echo:ok" {
		t.Fatal(out, err)
	}
}

func TestCallIsolatedCrashes(t *testing.T) {
	loadIsoHelper(t)
	for fn, want := range map[string]string{"exit3": "status 3", "segv": "signal 11"} {
		_, err := isolatedCall("_iso_test", fn, "", 5*time.Second)
		var pe *Error
		if !errors.As(err, &pe) || pe.Type != ErrTypeCrashed || !strings.Contains(pe.Message, want) {
			t.Errorf("%s: want Crashed with %q, got %v", fn, want, err)
		}
	}
}

func TestCallIsolatedGuards(t *testing.T) {
	loadIsoHelper(t)
	path := t.TempDir() + "/x"
	out, err := isolatedCall("_iso_test", "try_open", path, 5*time.Second)
	if err != nil || !strings.HasPrefix(out, "Refused: open(") {
		t.Fatalf("open for writing: %q, %v", out, err)
	}
	out, err = isolatedCall("_iso_test", "audited", "", 5*time.Second)
	if err != nil || out != "fork:Refused,socket:Refused" {
		t.Fatalf("got %q, %v", out, err)
	}
	out, err = isolatedCall("_iso_test", "unaudited", path, 5*time.Second)
	if err != nil || out != "fork_exec:PermissionError,dup:PermissionError" {
		t.Fatalf("got %q, %v", out, err)
	}
}
