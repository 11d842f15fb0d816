package capabilities

// Issue 3's "Read-only, bounded, safe" list, one test (or more) per point.
// Where a check could pass for the wrong reason (a capture that captures
// nothing, a listener nobody could reach), the test first shows that the
// same action done in the session itself is detected.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pyaichat/pyaichat/capabilities/spec"
)

func TestSessionUnchanged(t *testing.T) {
	setup(t, `
import collections
su_G = [1, 2]
class SuMut:
    def __init__(self):
        self.n = 0
    def __repr__(self):
        self.n += 1
        su_G.append("repr")
        globals()["su_from_repr"] = 1
        return "SuMut()"
    @property
    def p(self):
        self.n += 100
        su_G.append("property")
        return 1
    def __getattr__(self, name):
        su_G.append("getattr")
        return name
su_m = SuMut()
su_dd = collections.defaultdict(list)
su_gen = (i for i in range(3))
su_it = iter([1, 2, 3])
import sys
su_modules = sorted(sys.modules)
`)
	calls := [][2]string{
		{"eval_expr", "(su_x := 1)"},
		{"eval_expr", "globals().__setitem__('su_y', 2)"},
		{"eval_expr", "globals().pop('su_G')"},
		{"eval_expr", "vars().update(su_z=1)"},
		{"eval_expr", "exec('su_w = 1')"},
		{"eval_expr", "setattr(su_m, 'n', 99)"},
		{"eval_expr", "su_G.append(3)"},
		{"eval_expr", "su_G.clear()"},
		{"eval_expr", "su_dd['k']"},
		{"eval_expr", "list(su_gen)"},
		{"eval_expr", "next(su_it)"},
		{"eval_expr", "su_m.p"},
		{"eval_expr", "su_m.anything"},
		{"get_repr", "su_m"},
		{"get_repr", "[su_m, su_m]"},
		{"get_type", "su_m.p"},
		{"get_dir", "su_m"},
		{"get_doc", "su_m"},
		{"get_repr", "su_gen"},
		{"get_repr", "su_dd['other']"},
	}
	for _, c := range calls {
		if _, cerr := call(t, c[0], exprArgs(c[1])); cerr != nil {
			t.Errorf("%s(%q): %v", c[0], c[1], cerr)
		}
	}
	_ = mustOK(t, "list_globals", "")
	_ = mustOK(t, "get_last_exception", "")

	got := value(t, "(su_G, su_m.n, dict(su_dd), [k for k in ('su_x', 'su_y', 'su_z', 'su_w', 'su_from_repr') if k in globals()])")
	if want := "([1, 2], 0, {}, [])"; got != want {
		t.Errorf("session changed: %s, want %s", got, want)
	}
	// Nor did loading the capabilities' helper, nor running them, import
	// anything the user can see.
	if got := value(t, "sorted(set(sys.modules) ^ set(su_modules))"); got != "[]" {
		t.Errorf("sys.modules changed: %s", got)
	}
	// Checked last: these consume the iterators.
	if got := value(t, "(list(su_gen), list(su_it))"); got != "([0, 1, 2], [1, 2, 3])" {
		t.Errorf("iterators advanced: %s", got)
	}
}

func TestNothingWrittenToDisk(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "keep")
	if err := os.WriteFile(keep, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	setup(t, fmt.Sprintf(`
import os, pathlib
nd_dir = %q
class NdWriter:
    def __repr__(self):
        with open(os.path.join(nd_dir, "from_repr"), "w") as f:
            f.write("x")
        return "NdWriter()"
nd_w = NdWriter()
`, dir))
	refused := []string{
		"open(nd_dir + '/new', 'w').write('x')",
		"open(nd_dir + '/keep', 'a')",
		"pathlib.Path(nd_dir, 'p').write_text('x')",
		"os.mkdir(nd_dir + '/d')",
		"os.remove(nd_dir + '/keep')",
		"os.rename(nd_dir + '/keep', nd_dir + '/moved')",
		"os.truncate(nd_dir + '/keep', 0)",
		"os.open(nd_dir + '/raw', os.O_CREAT | os.O_WRONLY)",
		"nd_w",
	}
	for _, expr := range refused {
		mustErr(t, "eval_expr", expr, spec.Refused)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "keep" {
		t.Errorf("directory now holds %v", entries)
	}
	if b, _ := os.ReadFile(keep); string(b) != "data" {
		t.Errorf("keep now holds %q", b)
	}
}

func TestNoProcessSpawned(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "spawned")
	setup(t, fmt.Sprintf(`
import os, subprocess
np_marker = %q
class NpSpawner:
    def __repr__(self):
        os.system("touch " + np_marker)
        return "NpSpawner()"
np_s = NpSpawner()
`, marker))
	// Control: the same command run in the session does create the marker.
	setup(t, "os.system('touch ' + np_marker)")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: the marker was not created: %v", err)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{
		"os.system('touch ' + np_marker)",
		"subprocess.run(['touch', np_marker])",
		"os.posix_spawn('/usr/bin/touch', ['touch', np_marker], {})",
		"os.fork()",
		"os.execv('/usr/bin/touch', ['touch', np_marker])",
		"np_s",
	} {
		mustErr(t, "eval_expr", expr, spec.Refused)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a capability spawned a process")
	}
}

func TestNoNetworkConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	setup(t, fmt.Sprintf(`
import socket
nn_addr = ("127.0.0.1", %d)
class NnCaller:
    def __repr__(self):
        socket.create_connection(nn_addr).sendall(b"R")
        return "NnCaller()"
nn_c = NnCaller()
`, port))

	// accepted returns the first byte of the next connection in the queue.
	accepted := func() string {
		conn, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		b, _ := bufio.NewReader(conn).ReadByte()
		return string(b)
	}
	// Control: a connection made in the session is seen.
	setup(t, "_s = socket.create_connection(nn_addr); _s.sendall(b'C'); _s.close(); del _s")
	if got := accepted(); got != "C" {
		t.Fatalf("control connection: got %q", got)
	}

	for _, expr := range []string{
		"socket.create_connection(nn_addr)",
		"socket.socket().connect(nn_addr)",
		"socket.getaddrinfo('localhost', 80)",
		"nn_c",
	} {
		mustErr(t, "eval_expr", expr, spec.Refused)
	}
	// Connections are accepted in the order they were made: if a
	// capability had connected, its connection would come before this one.
	marker, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := marker.Write([]byte("M")); err != nil {
		t.Fatal(err)
	}
	defer marker.Close()
	if got := accepted(); got != "M" {
		t.Errorf("a capability connected to the listener (first byte %q)", got)
	}
}

func TestNoThreadLeft(t *testing.T) {
	setup(t, `
import threading, time
nt_before = threading.active_count()
class NtStarter:
    def __repr__(self):
        threading.Thread(target=time.sleep, args=(1000,), daemon=True).start()
        return "NtStarter()"
nt_s = NtStarter()
`)
	for _, expr := range []string{
		"threading.Thread(target=time.sleep, args=(1000,)).start()",
		"nt_s",
	} {
		if _, cerr := call(t, "eval_expr", exprArgs(expr)); cerr == nil {
			t.Errorf("%s: a thread was started", expr)
		}
	}
	if got := value(t, "threading.active_count() - nt_before"); got != "0" {
		t.Errorf("%s threads left in the session", got)
	}
}

// captureFDs points stdout and stderr at a file while fn runs and returns
// what was written.
func captureFDs(t *testing.T, fn func()) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var saved [2]int
	for i, fd := range []int{1, 2} {
		if saved[i], err = unix.Dup(fd); err != nil {
			t.Fatal(err)
		}
		if err := unix.Dup2(int(f.Fd()), fd); err != nil {
			t.Fatal(err)
		}
	}
	func() {
		defer func() {
			for i, fd := range []int{1, 2} {
				unix.Dup2(saved[i], fd)
				unix.Close(saved[i])
			}
		}()
		fn()
	}()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNothingReachesTheTerminal(t *testing.T) {
	setup(t, `
import os, sys
class NtPrinter:
    def __repr__(self):
        print("LEAK-repr")
        sys.stderr.write("LEAK-repr-err\n")
        os.write(1, b"LEAK-repr-fd\n")
        return "NtPrinter()"
nt_p = NtPrinter()
`)
	control := captureFDs(t, func() { setup(t, "print('CONTROL', flush=True)") })
	if !strings.Contains(control, "CONTROL") {
		t.Fatalf("control: the capture saw %q", control)
	}
	out := captureFDs(t, func() {
		for _, expr := range []string{
			"print('LEAK-print', flush=True)",
			"sys.stdout.write('LEAK-write') and sys.stdout.flush()",
			"sys.__stderr__.write('LEAK-stderr') and sys.__stderr__.flush()",
			"os.write(1, b'LEAK-fd1')",
			"os.write(2, b'LEAK-fd2')",
			"nt_p",
			"help(len)",
			"breakpoint()",
		} {
			_, _ = call(t, "eval_expr", exprArgs(expr))
		}
		// A terminal opened by name is refused.
		mustErr(t, "eval_expr", "open('/dev/tty', 'w')", spec.Refused)
	})
	if strings.Contains(out, "LEAK") {
		t.Errorf("output reached the terminal: %q", out)
	}
}

func TestStdinNotRead(t *testing.T) {
	// Control: input() in the session reads through pyaichat.
	before := stdinReads.Load()
	setup(t, "si_line = input()")
	if stdinReads.Load() != before+1 {
		t.Fatal("control: input() did not read through pyaichat")
	}
	setup(t, `
import os, sys
class SiReader:
    def __repr__(self):
        return "read " + repr(sys.stdin.readline())
si_r = SiReader()
`)
	// The process's own descriptor 0 holds data the copy must not take.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := w.Write([]byte("SECRET\n")); err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(int(r.Fd()), 0); err != nil {
		t.Fatal(err)
	}
	before = stdinReads.Load()
	results := map[string]string{}
	for _, expr := range []string{"sys.stdin.readline()", "sys.stdin.read()", "os.read(0, 100)", "si_r"} {
		m, cerr := call(t, "eval_expr", exprArgs(expr))
		if cerr == nil {
			results[expr] = str(t, m, "repr")
		}
	}
	mustErr(t, "eval_expr", "input()", spec.Refused)
	unix.Dup2(saved, 0)
	unix.Close(saved)

	if n := stdinReads.Load() - before; n != 0 {
		t.Errorf("capabilities read %d lines through pyaichat", n)
	}
	want := map[string]string{"sys.stdin.readline()": "''", "sys.stdin.read()": "''", "os.read(0, 100)": "b''", "si_r": "read ''"}
	for k, v := range want {
		if results[k] != v {
			t.Errorf("%s: got %q, want %q", k, results[k], v)
		}
	}
	if err := unix.SetNonblock(int(r.Fd()), true); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := unix.Read(int(r.Fd()), buf)
	if string(buf[:max(n, 0)]) != "SECRET\n" {
		t.Errorf("stdin was read: %q left", buf[:max(n, 0)])
	}
}

func TestDeadlines(t *testing.T) {
	setup(t, `
import time
class DlSpin:
    def __repr__(self):
        while True: pass
dl_spin = DlSpin()
`)
	short := New(interp, Options{Deadline: 300 * time.Millisecond})
	for _, c := range [][2]string{
		{"get_repr", "dl_spin"},
		{"eval_expr", "time.sleep(10**6)"},
		{"eval_expr", "sum(range(10**12))"},
		{"eval_expr", "any(iter(int, 1))"},
		{"get_type", "[x for x in iter(int, 1)]"},
	} {
		_, cerr := short.call(context.Background(), c[0], json.RawMessage(exprArgs(c[1])))
		if cerr == nil || cerr.Type != spec.Timeout {
			t.Errorf("%s(%q): want Timeout, got %v", c[0], c[1], cerr)
		}
	}
	// The session is fully usable afterwards.
	setup(t, "dl_after = sum(range(10))")
	if got := str(t, mustOK(t, "eval_expr", "dl_after"), "repr"); got != "45" {
		t.Errorf("after the timeouts: %q", got)
	}
}

func TestContextCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, cerr := reg.call(ctx, "eval_expr", json.RawMessage(exprArgs("1"))); cerr == nil || cerr.Type != spec.Canceled {
		t.Errorf("canceled context: %v", cerr)
	}
	ctx, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if _, cerr := reg.call(ctx, "eval_expr", json.RawMessage(exprArgs("any(iter(int, 1))"))); cerr == nil || cerr.Type != spec.Timeout {
		t.Errorf("context deadline: %v", cerr)
	}
}

func TestPathologicalValues(t *testing.T) {
	setup(t, `
import sys, os, faulthandler
class PvRecursive:
    def __repr__(self):
        return repr(self)
pv_rec = PvRecursive()
class PvControl:
    def __repr__(self):
        return "\x1b]52;c;SGVsbG8=\x07\x1b[2J\r\ud800 end"
pv_ctl = PvControl()
class PvExit:
    def __repr__(self):
        raise SystemExit(3)
class PvInterrupt:
    def __repr__(self):
        raise KeyboardInterrupt
class PvHardExit:
    def __repr__(self):
        os._exit(0)
class PvSegv:
    def __repr__(self):
        faulthandler._sigsegv()
pv_exit, pv_int, pv_hard, pv_segv = PvExit(), PvInterrupt(), PvHardExit(), PvSegv()
pv_str = "a\x00b\x1b[31m\u202e\ud800"
sys.setrecursionlimit(10**6)
`)
	defer setup(t, "sys.setrecursionlimit(1000)")

	mustErr(t, "get_repr", "pv_rec", "RecursionError")
	for _, expr := range []string{"pv_ctl", "pv_str"} {
		r := str(t, mustOK(t, "get_repr", expr), "repr")
		if strings.ContainsAny(r, "\x1b\x07\x00\r\u202e\ufffd") || !strings.Contains(r, `\x1b`) {
			t.Errorf("%s: control characters not escaped: %q", expr, r)
		}
	}
	mustErr(t, "get_repr", "pv_exit", "SystemExit")
	mustErr(t, "get_repr", "pv_int", "KeyboardInterrupt")
	mustErr(t, "get_repr", "pv_hard", spec.Crashed)
	mustErr(t, "get_repr", "pv_segv", spec.Crashed)
	mustErr(t, "eval_expr", "bytearray(2**40)", "MemoryError")

	// A 10^8-element list is answered in the session, without a copy.
	setup(t, "pv_big = [0] * 10**8")
	defer setup(t, "del pv_big")
	m := mustOK(t, "get_repr", "pv_big")
	if r := str(t, m, "repr"); len(r) > 4200 || m["truncated"] != true {
		t.Errorf("10^8 list: %d chars", len(r))
	}
	for _, g := range mustOK(t, "list_globals", "")["globals"].([]any) {
		if e := g.(map[string]any); e["name"] == "pv_big" && e["preview"] != "list, 100000000 items" {
			t.Errorf("list_globals preview: %v", e)
		}
	}
	// The process is alive and the session intact.
	if got := value(t, "len(pv_big)"); got != "100000000" {
		t.Errorf("after: %s", got)
	}
}

func TestMalformedCallsRunNoPython(t *testing.T) {
	// A registry without an interpreter: any call that reached Python would
	// panic on the nil interpreter.
	r := New(nil, Options{})
	huge := strings.Repeat("1+", 1<<19) + "1"
	cases := []struct{ name, args string }{
		{"no_such_capability", `{}`},
		{"", `{}`},
		{"get_repr", `{}`},
		{"get_repr", `null`},
		{"get_repr", `{"expr": "x", "extra": 1}`},
		{"get_repr", `{"expression": "x"}`},
		{"get_repr", `{"expr": 5}`},
		{"get_repr", `{"expr": ""}`},
		{"get_repr", `{"expr": "x\u0000; import os"}`},
		{"get_repr", `{"expr": "` + huge + `"}`},
		{"get_repr", `[1]`},
		{"get_repr", `{"expr": "x"`},
		{"get_repr", `{"EXPR": "x"}`},
		{"get_repr", `{"expr": "x"} {"expr": "y"}`},
		{"list_globals", `{"expr": "x"}`},
		{"get_last_exception", `{"x": 1}`},
	}
	for _, c := range cases {
		res, cerr := r.call(context.Background(), c.name, json.RawMessage(c.args))
		if cerr == nil || cerr.Type != spec.InvalidArguments {
			t.Errorf("%s %.60s: want InvalidArguments, got %s %v", c.name, c.args, res, cerr)
		}
	}
	_, cerr := r.call(context.Background(), "nope", nil)
	contains(t, cerr.Message, "get_repr")
}

// An argument error tells the model what to change.
func TestArgumentErrorsSayWhatToChange(t *testing.T) {
	r := New(nil, Options{})
	for args, want := range map[string]string{
		`{"expr": "x", "extra": 1}`: `get_repr: unexpected argument "extra"; it takes only "expr"`,
		`{"Expr": "x"}`:             `get_repr: unexpected argument "Expr"; it takes only "expr"`,
		`{"expr": 5}`:               `get_repr: "expr" must be a string`,
		`{}`:                        `get_repr: "expr" is missing or empty (a Python expression)`,
		`[1]`:                       `get_repr: arguments must be a JSON object`,
	} {
		_, cerr := r.call(context.Background(), "get_repr", json.RawMessage(args))
		if cerr == nil || !strings.HasPrefix(cerr.Message, want) {
			t.Errorf("%s: want %q, got %v", args, want, cerr)
		}
	}
	_, cerr := r.call(context.Background(), "list_globals", json.RawMessage(`{"x": 1}`))
	if cerr == nil || cerr.Message != `list_globals: unexpected argument "x"; it takes none` {
		t.Errorf("list_globals: got %v", cerr)
	}
}

// Shared memory (an anonymous MAP_SHARED mmap, a file mapped for writing)
// is made read-only in the copy; ctypes, already loaded by the session,
// calls C without an audit event, so the copy refuses every foreign call
// (and the seccomp filter would stop mprotect from making the mapping
// writable again, or madvise from punching holes in it).
func TestSharedMemoryNotWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mapped")
	if err := os.WriteFile(path, []byte(strings.Repeat("f", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	setup(t, fmt.Sprintf(`
import ctypes, mmap
sm_anon = mmap.mmap(-1, 4096)
sm_anon[:4] = b"anon"
sm_file_f = open(%q, "r+b")
sm_file = mmap.mmap(sm_file_f.fileno(), 4096)
sm_addrs = [ctypes.addressof(ctypes.c_char.from_buffer(m)) for m in (sm_anon, sm_file)]
_libc = ctypes.CDLL(None)
sm_mprotect = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)(
    ctypes.cast(_libc.mprotect, ctypes.c_void_p).value)
sm_madvise = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)(
    ctypes.cast(_libc.madvise, ctypes.c_void_p).value)
sm_mremap = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int)(
    ctypes.cast(_libc.mremap, ctypes.c_void_p).value)
del _libc
`, path))
	defer setup(t, "del sm_anon, sm_file, sm_control; sm_file_f.close()")
	// Control: the same calls in the session do write.
	setup(t, "sm_control = mmap.mmap(-1, 4096); _a = ctypes.addressof(ctypes.c_char.from_buffer(sm_control)); "+
		"sm_mprotect(_a, 4096, mmap.PROT_READ); sm_mprotect(_a, 4096, mmap.PROT_READ | mmap.PROT_WRITE); ctypes.memmove(_a, b'ctrl', 4)")
	if got := value(t, "sm_control[:4]"); got != "b'ctrl'" {
		t.Fatalf("control: %s", got)
	}
	for _, prot := range []string{"mmap.PROT_READ | mmap.PROT_WRITE", "mmap.PROT_WRITE", "mmap.PROT_READ | mmap.PROT_EXEC"} {
		for i := range 2 {
			// mprotect's result, then the write if it succeeded.
			expr := fmt.Sprintf("(lambda r: r if r else ctypes.memmove(sm_addrs[%d], b'PWND', 4))(sm_mprotect(sm_addrs[%[1]d], 4096, %s))", i, prot)
			refusedInCopy(t, expr)
		}
	}
	const madvRemove = 9
	for i := range 2 {
		refusedInCopy(t, fmt.Sprintf("sm_madvise(sm_addrs[%d], 4096, %d)", i, madvRemove))
	}
	// A second mapping of the same shared pages (mremap with an old size
	// of 0) would not be read-only.
	const mremapMaymove = 1
	for i := range 2 {
		refusedInCopy(t, fmt.Sprintf("sm_mremap(sm_addrs[%d], 0, 4096, %d)", i, mremapMaymove))
	}
	if got := value(t, "(sm_anon[:4], sm_file[:4])"); got != "(b'anon', b'ffff')" {
		t.Errorf("shared memory written by the copy: %s", got)
	}
	if b, _ := os.ReadFile(path); string(b[:4]) != "ffff" {
		t.Errorf("the mapped file now starts %q", b[:4])
	}
}

// A shared mapping that is read-only in the session but whose file was
// opened for writing can be made writable too: the copy must guard it
// even when it is the only shared mapping.
func TestReadOnlySharedMappingNotWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mapped")
	if err := os.WriteFile(path, []byte(strings.Repeat("f", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	setup(t, fmt.Sprintf(`
import ctypes, mmap
ro_f = open(%q, "r+b")
_libc = ctypes.CDLL(None)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
ro_addr = _libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_SHARED, ro_f.fileno(), 0)
ro_mprotect = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)(
    ctypes.cast(_libc.mprotect, ctypes.c_void_p).value)
ro_munmap = _libc.munmap
del _libc
`, path))
	defer setup(t, "ro_munmap(ctypes.c_void_p(ro_addr), 4096); ro_f.close()")
	expr := "(lambda r: r if r else ctypes.memmove(ro_addr, b'PWND', 4))(ro_mprotect(ro_addr, 4096, mmap.PROT_READ | mmap.PROT_WRITE))"
	refusedInCopy(t, expr)
	if b, _ := os.ReadFile(path); string(b[:4]) != "ffff" {
		t.Errorf("the mapped file now starts %q", b[:4])
	}
}

// A thread of the user's that holds the GIL inside C code keeps every call
// from even starting: the call gives up at its deadline instead of waiting
// for the thread, so a question is not stuck behind it.
func TestGILHeldByThreadTimesOut(t *testing.T) {
	// The first call loads the helper for this registry, which waits for
	// the GIL without a deadline; so it comes before the thread. On a
	// loaded machine it can take longer than the deadline: it is tried
	// again until one call gets through.
	short := New(interp, Options{Deadline: 100 * time.Millisecond})
	for attempt := 1; ; attempt++ {
		_, cerr := short.call(context.Background(), "get_type", json.RawMessage(exprArgs("1")))
		if cerr == nil {
			break
		}
		if cerr.Type != spec.Timeout || attempt == 100 {
			t.Fatalf("before the thread (attempt %d): %v", attempt, cerr)
		}
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer goR.Close()
	defer goW.Close()
	started, startedW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer started.Close()
	defer startedW.Close()
	// C functions called through ctypes.PyDLL keep the GIL. The thread
	// waits for a byte from the test (in os.read, without the GIL), then
	// says it has the GIL and sleeps in C for a second, ten times the
	// deadline. No Python job runs in between that it could hold up.
	setup(t, fmt.Sprintf("import ctypes, os, threading\n"+
		"gh_libc = ctypes.PyDLL(None)\n"+
		"gh_thread = threading.Thread(daemon=True, target=lambda: (\n"+
		"    os.read(%d, 1), gh_libc.write(%d, b'x', 1), gh_libc.usleep(1000000)))\n"+
		"gh_thread.start()", goR.Fd(), startedW.Fd()))
	if _, err := goW.Write([]byte{'g'}); err != nil {
		t.Fatal(err)
	}
	if _, err := started.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	_, cerr := short.call(context.Background(), "get_type", json.RawMessage(exprArgs("1")))
	if cerr == nil || cerr.Type != spec.Timeout {
		t.Errorf("call while a thread holds the GIL: %v, want a Timeout", cerr)
	}
	setup(t, "gh_thread.join()") // the next tests want the GIL back
}

// refusedInCopy checks that evaluating expr, which calls C through ctypes,
// is refused in the copy.
func refusedInCopy(t *testing.T, expr string) {
	t.Helper()
	res, cerr := call(t, "eval_expr", exprArgs(expr))
	if cerr == nil || cerr.Type != spec.Refused || !strings.Contains(cerr.Message, "ctypes") {
		t.Errorf("%s in the copy: got %v %v, want Refused", expr, res, cerr)
	}
}
