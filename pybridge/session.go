//go:build cgo

package pybridge

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"strings"
	"time"
	"unsafe"

	"github.com/pyaichat/pyaichat/repl/interp"
)

// The REPL's operations, each one call into python/repl.py.

const replModule = "_pyaichat_repl"

// runInput is one REPL step: the helper fn compiles arg and, when that
// queued code, the code runs, all in one job and one crossing into C.
func (in *Interp) runInput(fn, arg string) (interp.Outcome, error) {
	var out interp.Outcome
	var err error
	derr := in.job(func() { out, err = in.replStep(fn, arg) })
	if derr != nil {
		return interp.Outcome{}, derr
	}
	return out, err
}

// replStep runs on the interpreter's thread.
func (in *Interp) replStep(fn, arg string) (interp.Outcome, error) {
	cfn := C.CString(fn)
	defer C.free(unsafe.Pointer(cfn))
	// Passed with its length: arg may hold NUL bytes.
	carg := (*C.char)(C.CBytes([]byte(arg + "\x00")))
	defer C.free(unsafe.Pointer(carg))
	var o C.pyb_outcome
	var cerr C.pyb_error
	if C.pyb_repl_step(cfn, carg, C.size_t(len(arg)), &o, &cerr) != 0 {
		return interp.Outcome{}, takeError(&cerr)
	}
	return takeOutcome(&o), nil
}

// RunSIGINTHandler runs the Python SIGINT handler for a Ctrl-C typed at the
// prompt, where the key is not a signal (the terminal is raw), as the
// signal would have run it at python3's prompt. It reports whether the
// handler did other than raise KeyboardInterrupt: it returned, and the
// line goes on as python3's read goes on; or it raised something else,
// which SignalErrors then reports as any handler's exception at the
// prompt.
func (in *Interp) RunSIGINTHandler() bool {
	var rc C.int
	if err := in.job(func() { rc = C.pyb_sigint_at_prompt() }); err != nil {
		return false
	}
	return rc != C.PYB_SIGINT_RAISED_KI
}

// ShowSignalError shows what a signal handler raised at the prompt (see
// SignalErrors) as python3's prompt does: a traceback, and sys.last_*
// set; for SystemExit, the outcome says to exit. With nothing to show it
// shows nothing.
func (in *Interp) ShowSignalError() (interp.Outcome, error) {
	var out interp.Outcome
	var err error
	derr := in.job(func() {
		var o C.pyb_outcome
		var cerr C.pyb_error
		if C.pyb_show_signal_error(&o, &cerr) != 0 {
			err = takeError(&cerr)
			return
		}
		out = takeOutcome(&o)
	})
	if derr != nil {
		return interp.Outcome{}, derr
	}
	return out, err
}

// takeOutcome converts and frees o.
func takeOutcome(o *C.pyb_outcome) interp.Outcome {
	defer C.pyb_outcome_free(o)
	out := interp.Outcome{More: o.more != 0, Exit: o.exit != 0, Status: int(o.status)}
	if o.error != nil {
		out.Error = C.GoString(o.error)
	}
	if o.partial != nil {
		out.Partial = C.GoString(o.partial)
	}
	return out
}

// replCall calls a function of the REPL helper for what it does; what it
// returns is of no use.
func (in *Interp) replCall(fn, arg string) error {
	_, err := in.Call(context.Background(), CallHelper, replModule, fn, arg)
	return err
}

// flag is a switch as the REPL helper's functions take it.
func flag(on bool) string {
	if on {
		return "1"
	}
	return "0"
}

// Push feeds one line typed at the prompt, as CPython's interactive loop
// does: output and tracebacks go to the process's stdout and stderr.
func (in *Interp) Push(line string) (interp.Outcome, error) {
	return in.runInput("push", line)
}

// PushEOF finishes a pending statement at end of input, as python3 does.
func (in *Interp) PushEOF() (interp.Outcome, error) {
	return in.runInput("push_eof", "")
}

// ResetBlock discards a pending incomplete statement.
func (in *Interp) ResetBlock() error {
	return in.replCall("reset", "")
}

// RunBlock runs pasted text: parsed whole, top-level statements in order.
func (in *Interp) RunBlock(source string) (interp.Outcome, error) {
	return in.runInput("run_block", source)
}

// RunFile runs a script in __main__, like python3 -i FILE.
func (in *Interp) RunFile(path string) (interp.Outcome, error) {
	return in.runInput("run_file", path)
}

// SetMagics turns IPython's line magics at py> (%timeit, !ls) on or off;
// off, such a line is the SyntaxError it is in Python.
func (in *Interp) SetMagics(on bool) error {
	return in.replCall("set_magics", flag(on))
}

// SkipSourceFirstLine makes RunFile skip FILE's first line, as python3 -x
// does.
func (in *Interp) SkipSourceFirstLine() error {
	return in.replCall("skip_source_first_line", "")
}

// RunStartup runs the file named by PYTHONSTARTUP in __main__, as python3
// does before the first prompt of a bare interactive session.
func (in *Interp) RunStartup(path string) (interp.Outcome, error) {
	return in.runInput("run_startup", path)
}

// RunCommand runs -c code in __main__.
func (in *Interp) RunCommand(source string) (interp.Outcome, error) {
	return in.runInput("run_command", source)
}

// RunModule runs library module name as __main__, as python3 -m does.
func (in *Interp) RunModule(name string) (interp.Outcome, error) {
	return in.runInput("run_module", name)
}

// RouteStdin sets up user code's sys.stdin and input(). On a terminal
// they read the terminal themselves, as in python3 (input() through GNU
// readline, as python3 -i has it), and the caller must not read it while
// user code runs; otherwise they read through Config.ReadLine.
func (in *Interp) RouteStdin(terminal bool) error {
	return in.replCall("install_stdin", flag(terminal))
}

// SetPath0 puts the script's directory first on sys.path, or "" (the
// current directory) when script is empty, as python3 does.
func (in *Interp) SetPath0(script string) error {
	return in.replCall("set_path0", script)
}

// SetMainImporter puts script first on sys.path when it is a directory or
// zip file (one that Python imports __main__ from), as python3 does even
// under -P and -I; any other script leaves sys.path alone.
func (in *Interp) SetMainImporter(script string) error {
	return in.replCall("set_main_importer", script)
}

// MoreLines reports whether source, a py> block typed as one buffer, is a
// statement not yet complete, to which Enter adds a line (python/repl.py's
// more_lines). A line with none of the characters that can leave one open
// (a compound statement's colon, a bracket, a backslash, a quote that may
// open a triple-quoted string, a decorator's @) is complete or an error
// without asking Python: nearly every line, at no cost to its round trip.
// Where Python cannot be asked (busy past moreLinesWait), the line is
// entered, and the REPL reads the block line by line as python3 does.
func (in *Interp) MoreLines(source string) bool {
	if !strings.Contains(source, "\n") && !strings.ContainsAny(source, ":([{\\@'\"") {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), moreLinesWait)
	defer cancel()
	more, err := in.Call(ctx, CallReadOnly, replModule, "more_lines", source)
	return err == nil && more != ""
}

// moreLinesWait bounds the wait for MoreLines' answer.
const moreLinesWait = 500 * time.Millisecond

// RecentContext describes the last few py> inputs and their results or
// errors, for the assistant's automatic context. It only reads what the
// REPL helper recorded, so a ready copy of the session survives it.
func (in *Interp) RecentContext() (string, error) {
	return in.Call(context.Background(), CallReadOnly, replModule, "recent_context", "")
}
