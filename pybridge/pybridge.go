// Package pybridge embeds CPython in the Go process. It is pyaichat's only
// cgo package.
//
// CPython ties its thread state to an OS thread and runs signal handlers only
// on the thread that initialised it, so one locked goroutine owns the
// interpreter for the life of the process and runs every Python job; other
// goroutines hand it closures. The GIL is released between jobs so the
// user's background threads keep running while Go waits for a line or for
// the LLM. Python exceptions cross the boundary as *Error values.
package pybridge

/*
#include <malloc.h>
#include <stdlib.h>
#include "bridge.h"
#include "signals.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pyaichat/pyaichat/python"
	"github.com/pyaichat/pyaichat/repl/interp"
)

// Interp is the embedded interpreter. Only one can exist per process.
type Interp struct {
	jobs      *jobLine
	code      codeCache
	tid       int          // OS thread that owns the interpreter
	hosting   atomic.Bool  // Host's function is running on it (host.go)
	kicking   atomic.Bool  // a pyb_kick is in flight
	kickSince atomic.Int64 // when it started, unix nanos
	closeMu   sync.Mutex
	isClosed  bool

	// The ready copy for isolated calls (isolate.go). ready and dead
	// belong to the serve goroutine; want (and a wake-up on the job line)
	// is how PrepareIsolated asks it for a copy.
	ready readyCopy
	dead  bool // Python is finalized
	want  atomic.Bool
	stats isolationCounters

	interrupts   chan struct{} // see Interrupts
	signalErrors chan struct{} // see SignalErrors
}

var started atomic.Bool

// current is the interpreter whose ReadLine serves pybReadLine.
var current struct {
	sync.Mutex
	readLine LineReader
	display  Display // see SetDisplay
}

// Start initialises CPython on a new locked OS thread and returns once the
// interpreter is ready.
func Start(cfg Config) (*Interp, error) {
	if !started.CompareAndSwap(false, true) {
		return nil, errors.New("pybridge: the interpreter was already started in this process")
	}
	if cfg.Executable == "" {
		cfg.Executable = RealExecutable()
	}
	current.Lock()
	current.readLine = cfg.ReadLine
	current.Unlock()

	jobs, err := newJobLine()
	if err != nil {
		return nil, err
	}
	in := &Interp{jobs: jobs, code: codeCache{dir: cfg.CacheDir}, interrupts: make(chan struct{}, 1), signalErrors: make(chan struct{}, 1)}
	if err := in.watchInterrupts(); err != nil {
		return nil, err
	}
	if err := in.watchSignalErrors(); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	serve := func() { in.serve(cfg, ready) }
	if mainThread != nil {
		mainThread <- serve
	} else {
		go serve()
	}
	if err := <-ready; err != nil {
		return nil, err
	}
	return in, nil
}

// mainThread takes the interpreter's serve loop to the process's main
// thread; set by RunMain.
var mainThread chan func()

// RunMain runs program on a new goroutine and keeps the calling goroutine
// for the interpreter, which Start then runs there; program's result is
// the exit status. Call it from main with the main goroutine locked to the
// process's main thread (runtime.LockOSThread in an init function), so
// that Python's main thread is the process's, as in python3: the kernel
// gives a signal sent to the process to its main thread first, where a
// blocking call then returns EINTR and the handler runs at once.
// Without RunMain, Start runs Python on a new thread (as tests do).
func RunMain(program func() int) {
	mainThread = make(chan func())
	go func() { os.Exit(program()) }()
	(<-mainThread)()
	select {} // Python's thread runs the program's jobs until it exits
}

// Interrupts has a value for each SIGINT (Ctrl-C) that reached running user
// code (one waits while the last is not taken). Python has been told
// already; Stuck says whether it could act on the one before.
func (in *Interp) Interrupts() <-chan struct{} { return in.interrupts }

// watchInterrupts passes on the SIGINTs that reach user code (signals.c),
// after starting the check for a Python stuck in C code.
func (in *Interp) watchInterrupts() error {
	return watchPipe("interrupt pipe", func(fd C.int) { C.pyb_signals_notify(fd) }, func(n int) {
		for range n {
			in.kick()
			offer(in.interrupts)
		}
	})
}

// SignalErrors has a value when a Python signal handler that ran while no
// user code did (at the prompt) raised: ShowSignalError shows it as
// python3's prompt would.
func (in *Interp) SignalErrors() <-chan struct{} { return in.signalErrors }

// watchSignalErrors passes on what bridge.c says of a handler's exception.
func (in *Interp) watchSignalErrors() error {
	return watchPipe("signal error pipe", func(fd C.int) { C.pyb_signal_errors_notify(fd) }, func(int) {
		offer(in.signalErrors)
	})
}

// watchPipe makes a pipe that C code writes a byte to for each event
// (notify gives it the write end), and calls got with the number of bytes
// each read brings, until the pipe fails.
func watchPipe(name string, notify func(fd C.int), got func(n int)) error {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return fmt.Errorf("pybridge: %s: %w", name, err)
	}
	notify(C.int(p[1]))
	r := os.NewFile(uintptr(p[0]), name)
	go func() {
		buf := make([]byte, 16)
		for {
			n, err := r.Read(buf)
			if err != nil {
				return
			}
			got(n)
		}
	}()
	return nil
}

// offer sends a value on ch unless one is already waiting there.
func offer(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (in *Interp) serve(cfg Config, ready chan<- error) {
	// Never unlocked: this thread is Python's main thread for good.
	runtime.LockOSThread()

	cexe := C.CString(cfg.Executable)
	defer C.free(unsafe.Pointer(cexe))
	args := append([]string{cfg.Executable}, cfg.Args...)
	argv := make([]*C.char, len(args))
	for i, a := range args {
		argv[i] = C.CString(a)
		defer C.free(unsafe.Pointer(argv[i]))
	}
	src := newCSource(python.REPL[:]...)
	defer src.free()

	cache, freeCache := in.code.load(replModule, src.bytes())
	var fresh C.pyb_bytes
	var cerr C.pyb_error
	rc := C.pyb_init(cexe, C.int(len(argv)), &argv[0], src.str, cache, &fresh, &cerr)
	freeCache()
	if rc != 0 {
		e := takeError(&cerr)
		if status, err := strconv.Atoi(e.Message); e.Type == "SystemExit" && err == nil {
			ready <- ExitError{Status: status}
			return
		}
		ready <- fmt.Errorf("starting Python: %w", e)
		return
	}
	in.tid = int(C.pyb_signals_python_tid())
	in.jobs.signalled = func() {
		if !in.dead {
			C.pyb_idle_signals()
		}
	}
	ready <- nil
	in.code.save(replModule, src.bytes(), &fresh)

	for {
		if _, err := in.serveOnce(nil, nil); err != nil {
			in.want.Store(false) // no ready copy, rather than a busy loop
		}
	}
}

// job runs fn, which may run user code, on the interpreter's thread (see do).
func (in *Interp) job(fn func()) error { return in.do(fn, false) }

// do runs fn on the interpreter's thread, as a job, and waits for it:
// Python runs only this way. fn may run user code unless keep is set, and
// then a ready copy of the session (PrepareIsolated) is discarded first;
// keep says that it changes nothing a ready copy of
// the session could show (it runs no user code and leaves the session's
// objects as they were).
func (in *Interp) do(fn func(), keep bool) error {
	return in.doContext(context.Background(), keep, untilDone, func(int) { fn() })
}

// How a caller waits for its job once ctx ends.
const (
	untilDone = false // the job watches ctx itself (its cancel descriptor)
	giveUp    = true  // the wait ends; the job still runs, its answer unread
)

// doContext is do for a job that sees ctx end: fn gets a descriptor that
// polls readable once ctx has ended (-1 for a ctx that cannot end), the
// one way a wait in C or a system call learns of it; with giveUp the
// caller's wait ends then too (see jobLine.waitDoneContext).
func (in *Interp) doContext(ctx context.Context, keep, wait bool, fn func(cancel int)) error {
	if in.onThread() {
		return in.inline(job{fn: func() { fn(-1) }, keep: keep})
	}
	w, err := in.jobs.getWaiter()
	if err != nil {
		return err
	}
	cancel := -1
	if ctx.Done() != nil {
		cancel = w.cancel
	}
	if err := in.jobs.submit(job{fn: func() { fn(cancel) }, keep: keep, done: w}, false); err != nil {
		in.jobs.putWaiter(w)
		return err
	}
	return in.jobs.waitDoneContext(ctx, w, wait)
}

// LoadModule compiles and runs a helper module's source as module name.
// Helpers are private to pyaichat: neither the helper nor a module it
// imports while loading appears in the sys.modules that user code sees, so
// loading one changes nothing there, and no edit of sys.modules unloads it.
func (in *Interp) LoadModule(name, source string) error {
	return in.loadModule(name, source, in.code)
}

// loadModule is LoadModule keeping compiled code in cache.
func (in *Interp) loadModule(name, source string, cache codeCache) error {
	var err error
	derr := in.job(func() {
		cname, src := C.CString(name), newCSource(source)
		defer C.free(unsafe.Pointer(cname))
		defer src.free()
		kept, freeKept := cache.load(name, src.bytes())
		defer freeKept()
		var fresh C.pyb_bytes
		var cerr C.pyb_error
		if C.pyb_load_module(cname, src.str, kept, &fresh, &cerr) != 0 {
			err = fmt.Errorf("loading %s: %w", name, takeError(&cerr))
		}
		cache.save(name, src.bytes(), &fresh)
	})
	if derr != nil {
		return derr
	}
	return err
}

// Call calls module.fn(arg), a helper function taking and returning str,
// and returns its result. module is a helper loaded by LoadModule (or
// _pyaichat_repl, loaded at Start); kind says what it may do. A Python
// exception it raises is an *Error.
//
// When ctx ends first, Call gives up (ctx.Err()): Python runs a call only
// once it has the GIL, and a thread of the user's running C code can hold
// that for as long as it runs. The call itself still happens then, its
// answer unread. An isolated call instead stops its copy at once and
// reports that as an *Error.
func (in *Interp) Call(ctx context.Context, kind CallKind, module, fn, arg string) (string, error) {
	if kind == CallIsolated {
		return in.isolated(ctx, module, fn, arg)
	}
	ckind := callHelper
	switch kind {
	case CallUserCode:
		ckind = callUser
	case CallReadOnly:
		ckind = callReadOnly
	}
	var out string
	var err error
	job := func(int) { out, err = in.call(module, fn, arg, ckind) }
	if derr := in.doContext(ctx, kind == CallReadOnly, giveUp, job); derr != nil {
		return "", derr
	}
	return out, err
}

// What a call may do (bridge.h).
const (
	callHelper   = C.PYB_CALL_HELPER    // a helper of pyaichat's
	callUser     = C.PYB_CALL_USER      // may run user code
	callReadOnly = C.PYB_CALL_READ_ONLY // changes nothing; GC off
)

// call runs on the interpreter's thread; kind is a call* constant.
func (in *Interp) call(module, fn, arg string, kind int) (string, error) {
	cmod, cfn := C.CString(module), C.CString(fn)
	defer C.free(unsafe.Pointer(cmod))
	defer C.free(unsafe.Pointer(cfn))
	// Passed with its length: arg may hold NUL bytes.
	carg := (*C.char)(C.CBytes([]byte(arg + "\x00")))
	defer C.free(unsafe.Pointer(carg))
	var n C.size_t
	var cerr C.pyb_error
	res := C.pyb_call(cmod, cfn, carg, C.size_t(len(arg)), &n, C.int(kind), &cerr)
	if res == nil {
		return "", takeError(&cerr)
	}
	defer C.free(unsafe.Pointer(res))
	return C.GoStringN(res, C.int(n)), nil
}

func takeError(cerr *C.pyb_error) *Error {
	defer C.pyb_error_free(cerr)
	e := &Error{Type: "Error"}
	if cerr._type != nil {
		e.Type = C.GoString(cerr._type)
	}
	if cerr.message != nil {
		e.Message = C.GoString(cerr.message)
	}
	if cerr.traceback != nil {
		e.Traceback = C.GoString(cerr.traceback)
	}
	return e
}

// SIGINT says what user code set SIGINT to do (signal.signal), as of the
// end of its last statement: at pyaichat's prompt, where SIGINT is Go's,
// the REPL does that with a Ctrl-C or a SIGINT, as python3's prompt would.
func (in *Interp) SIGINT() interp.SIGINTAction {
	switch C.pyb_signals_sigint_action() {
	case C.PYB_SIGINT_DEFAULT:
		return interp.SIGINTKills
	case C.PYB_SIGINT_IGNORED:
		return interp.SIGINTIgnored
	}
	return interp.SIGINTRaises
}

// DieBySIGINT ends the process by SIGINT, as SIGINT under SIG_DFL does.
func (in *Interp) DieBySIGINT() { C.pyb_signals_die_by_sigint() }

// SIGINTToUser says whether a SIGINT at the prompt is the user code's
// (py>) or pyaichat's: while it is the user's and ignored, signals.c
// drops it as it arrives, as the kernel would for python3.
func (in *Interp) SIGINTToUser(user bool) {
	u := C.int(0)
	if user {
		u = 1
	}
	C.pyb_signals_sigint_users(u)
}

// Busy reports whether user code is running.
func (in *Interp) Busy() bool { return C.pyb_busy() != 0 }

// Interrupt raises KeyboardInterrupt in running user code, as Ctrl-C does in
// python3, for a Ctrl-C that came some other way than SIGINT reaching user
// code (which needs nothing more). It is safe from any goroutine and does
// nothing when Python is idle. Code stuck inside a C loop cannot be
// interrupted in-process; the caller decides what to offer then (Stuck).
func (in *Interp) Interrupt() {
	if !in.Busy() {
		return
	}
	// Trips Python's SIGINT flag (it runs default_int_handler, or the
	// user's handler, at the next check).
	C.pyb_set_interrupt()
	in.kick()
}

// kick makes Python look at a tripped signal soon and measures how long
// that takes (see Stuck). A GIL request sets the running thread's eval
// breaker; if Python is stuck in C code holding the GIL this blocks, so at
// most one such goroutine is kept.
func (in *Interp) kick() {
	if in.kicking.CompareAndSwap(false, true) {
		in.kickSince.Store(time.Now().UnixNano())
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			C.pyb_kick()
			in.kicking.Store(false)
		}()
	}
}

// markClosed reports whether this call is the one that closes the
// interpreter: Close and Exit finalize it once between them.
func (in *Interp) markClosed() bool {
	in.closeMu.Lock()
	defer in.closeMu.Unlock()
	if in.isClosed {
		return false
	}
	in.isClosed = true
	return true
}

// Close finalizes the interpreter (non-daemon threads are joined and atexit
// handlers run) but gives up after timeout, so that exit never hangs on a
// thread that never ends. It reports whether finalization completed.
func (in *Interp) Close(timeout time.Duration) bool {
	if !in.markClosed() {
		return true
	}
	done := make(chan struct{})
	// Not a keep job: the ready copy is discarded first. The last job:
	// later ones are refused (ErrClosed), whether or not finalizing ends in
	// time.
	err := in.jobs.submit(job{fn: func() {
		in.dead = true
		C.pyb_finalize(0)
		close(done)
	}}, true)
	if err != nil {
		return true
	}
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Exit finalizes the interpreter as python3 does at its exit and returns
// the status python3 would exit with: status, or 120 when the standard
// streams could not be flushed. Like python3, it waits for non-daemon
// threads and then runs the atexit handlers for as long as they take;
// once that has lasted patience, notice is told, once, what it waits for.
// Ctrl-C meanwhile raises KeyboardInterrupt in what it waits for, as in
// python3 (reported as ignored; exit goes on). A Ctrl-C that Python
// cannot act on (its thread, or the one it waits for, is stuck in C code
// with the GIL) ends the wait: Exit returns 130 and the process must end.
func (in *Interp) Exit(status int, patience time.Duration, notice func(waitingFor string)) int {
	if !in.markClosed() {
		return status
	}
	done := make(chan bool, 1)
	err := in.jobs.submit(job{fn: func() {
		in.dead = true
		done <- C.pyb_finalize(C.int(status)) == 0
	}}, true)
	if err != nil {
		return status
	}
	wait := time.NewTimer(patience)
	defer wait.Stop()
	for {
		select {
		case flushed := <-done:
			if !flushed {
				return 120
			}
			return status
		case <-wait.C:
			notice(finalizeWaitsFor())
		case <-in.interrupts:
			if in.Stuck(exitStuckGrace) {
				return 130
			}
		}
	}
}

// exitStuckGrace is how long a Ctrl-C at exit may go unanswered before
// the next one ends the wait.
const exitStuckGrace = 100 * time.Millisecond

// finalizeWaitsFor says what finalization is doing, for Exit's notice.
func finalizeWaitsFor() string {
	switch C.pyb_finalize_phase() {
	case C.PYB_FINALIZE_THREADS:
		return "Python's non-daemon threads to end"
	case C.PYB_FINALIZE_ATEXIT:
		return "Python's atexit handlers to finish"
	default:
		return "Python to finish"
	}
}

// TrimCHeap gives the C heap's free pages back to the system. Python puts
// its larger objects there (code, dicts, buffers), and compiling pyaichat's
// helpers and the first lines' imports leave free pages that stay resident
// (glibc returns only the heap's top on its own). Call it when the REPL is
// idle: it takes malloc's locks for a moment.
func TrimCHeap() { C.malloc_trim(0) }

// Version is the linked CPython's version, e.g. "3.11.2 (main, ...)".
func Version() string { return C.GoString(C.pyb_version_string()) }

// Platform is the linked CPython's sys.platform, e.g. "linux".
func Platform() string { return C.GoString(C.pyb_platform()) }

// MajorMinor is the linked CPython's major and minor version.
func MajorMinor() (int, int) { return int(C.pyb_version_major()), int(C.pyb_version_minor()) }

// buildPython is the interpreter pyaichat was built against, stamped by
// the build (make passes -ldflags=-X=...pybridge.buildPython=PATH, read by
// scripts/python-flags.sh). A static libpython leaves no file to start
// from at run time, so this is how such a build knows its interpreter.
var buildPython string

// RealExecutable finds the python executable that belongs to the linked
// libpython, so that sys.executable (and subprocess or pip through it) runs
// the same interpreter rather than the first python3 on PATH: the one the
// build names, else the pythonX.Y beside the shared libpython loaded.
func RealExecutable() string {
	if st, err := os.Stat(buildPython); buildPython != "" && err == nil && !st.IsDir() {
		return buildPython
	}
	major, minor := MajorMinor()
	name := "python" + strconv.Itoa(major) + "." + strconv.Itoa(minor)
	lib := libpythonPath()
	if lib == "" {
		return ""
	}
	// libpython lives in PREFIX/lib or PREFIX/lib/<multiarch>; the
	// interpreter is PREFIX/bin/pythonX.Y.
	dir := lib
	for range 4 {
		i := strings.LastIndexByte(dir, '/')
		if i <= 0 {
			break
		}
		dir = dir[:i]
		cand := dir + "/bin/" + name
		if st, err := os.Stat(cand); err == nil && !st.IsDir() {
			return cand
		}
	}
	return ""
}

// Library is the file libpython was loaded from, or "" when it is linked
// into the executable.
func Library() string { return libpythonPath() }

// libpythonPath is the file the dynamic linker loaded libpython from. It
// reads the process's mappings: dladdr on a libpython function answers with
// the executable's PLT stub instead.
func libpythonPath() string {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(maps), "\n") {
		i := strings.IndexByte(line, '/')
		if i < 0 {
			continue
		}
		path := line[i:]
		base := path[strings.LastIndexByte(path, '/')+1:]
		if strings.HasPrefix(base, "libpython") {
			return path
		}
	}
	return ""
}

// Stuck reports whether an Interrupt has waited longer than grace for the
// GIL: Python is inside C code that does not check for signals.
func (in *Interp) Stuck(grace time.Duration) bool {
	since := in.kickSince.Load()
	return in.kicking.Load() && since != 0 && time.Since(time.Unix(0, since)) > grace
}
