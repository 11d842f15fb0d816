//go:build cgo

package pybridge

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// The REPL's operations, each one call into python/repl.py.

const replModule = "_pyaichat_repl"

func parseOutcome(res string, err error) (Outcome, error) {
	if err != nil {
		return Outcome{}, err
	}
	switch {
	case res == "ok":
		return Outcome{}, nil
	case strings.HasPrefix(res, "error:"):
		return Outcome{Error: res[len("error:"):]}, nil
	case res == "more":
		return Outcome{More: true}, nil
	case strings.HasPrefix(res, "exit:"):
		n, err := strconv.Atoi(res[len("exit:"):])
		if err != nil {
			return Outcome{}, fmt.Errorf("pybridge: bad exit status %q", res)
		}
		return Outcome{Exit: true, Status: n}, nil
	}
	return Outcome{}, fmt.Errorf("pybridge: unexpected helper result %q", res)
}

// runInput compiles input with a helper and, when it queued code, runs
// that code, all in one job on the interpreter's thread.
func (in *Interp) runInput(fn, arg string) (Outcome, error) {
	var res string
	var err error
	derr := in.job(func() {
		res, err = in.call(replModule, fn, arg, callHelper)
		if err == nil && res == "run" {
			res, err = in.runPending()
		}
	})
	if derr != nil {
		return Outcome{}, derr
	}
	// The helpers answer "<result>\n<what output left on the line>".
	res, partial, _ := strings.Cut(res, "\n")
	out, err := parseOutcome(res, err)
	out.Partial = partial
	return out, err
}

// Push feeds one line typed at the prompt, as CPython's interactive loop
// does: output and tracebacks go to the process's stdout and stderr.
func (in *Interp) Push(line string) (Outcome, error) {
	return in.runInput("push", line)
}

// PushEOF finishes a pending statement at end of input, as python3 does.
func (in *Interp) PushEOF() (Outcome, error) {
	return in.runInput("push_eof", "")
}

// ResetBlock discards a pending incomplete statement.
func (in *Interp) ResetBlock() error {
	_, err := in.Call(replModule, "reset", "", false)
	return err
}

// RunBlock runs pasted text: parsed whole, top-level statements in order.
func (in *Interp) RunBlock(source string) (Outcome, error) {
	return in.runInput("run_block", source)
}

// RunFile runs a script in __main__, like python3 -i FILE.
func (in *Interp) RunFile(path string) (Outcome, error) {
	return in.runInput("run_file", path)
}

// RunStartup runs the file named by PYTHONSTARTUP in __main__, as python3
// does before the first prompt of a bare interactive session.
func (in *Interp) RunStartup(path string) (Outcome, error) {
	return in.runInput("run_startup", path)
}

// RunCommand runs -c code in __main__.
func (in *Interp) RunCommand(source string) (Outcome, error) {
	return in.runInput("run_command", source)
}

// RunModule runs library module name as __main__, as python3 -m does.
func (in *Interp) RunModule(name string) (Outcome, error) {
	return in.runInput("run_module", name)
}

// RouteStdin sets up user code's sys.stdin and input(). On a terminal
// they read the terminal themselves, as in python3 (input() through GNU
// readline, as python3 -i has it), and the caller must not read it while
// user code runs; otherwise they read through Config.ReadLine.
func (in *Interp) RouteStdin(terminal bool) error {
	arg := "0"
	if terminal {
		arg = "1"
	}
	_, err := in.Call(replModule, "install_stdin", arg, false)
	return err
}

// SetPath0 puts the script's directory first on sys.path, or "" (the
// current directory) when script is empty, as python3 does.
func (in *Interp) SetPath0(script string) error {
	_, err := in.Call(replModule, "set_path0", script, false)
	return err
}

// RecentContext describes the last few py> inputs and their results or
// errors, for the assistant's automatic context. It only reads what the
// REPL helper recorded, so a ready copy of the session survives it.
func (in *Interp) RecentContext() (string, error) {
	return in.CallReadOnlyContext(context.Background(), replModule, "recent_context", "")
}
