//go:build !cgo

package pybridge

// Without cgo there is no CPython to embed. A build with CGO_ENABLED=0 (or
// without a C compiler) still compiles, so that the packages that need no
// Python can be vetted and tested that way, and the program stops at
// start-up (RunMain) saying why, rather than at the first line of Python.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/pyaichat/pyaichat/repl/interp"
)

// errNoCgo is every call's answer in a build without cgo.
var errNoCgo = errors.New("pybridge: pyaichat was built without cgo (CGO_ENABLED=0 or no C compiler), so it has no Python; build it with make build, which uses cgo")

// RunMain stops the program: it cannot run without Python.
func RunMain(func() int) {
	fmt.Fprintf(os.Stderr, "pyaichat: %v\n", errNoCgo)
	os.Exit(1)
}

// Interp is the embedded interpreter; without cgo there is none.
type Interp struct{}

// Start reports that there is no Python in this build.
func Start(Config) (*Interp, error) { return nil, errNoCgo }

func Version() string                       { return "none (built without cgo)" }
func Platform() string                      { return "" }
func Library() string                       { return "" }
func RealExecutable() string                { return "" }
func MajorMinor() (int, int)                { return 0, 0 }
func TrimCHeap()                            {}
func SeccompActive() (bool, bool)           { return false, false }
func VenvExecutable(string) (string, error) { return "", errNoCgo }

func (*Interp) Busy() bool                                        { return false }
func (*Interp) Host(func()) error                                 { return errNoCgo }
func (*Interp) CanHost() bool                                     { return false }
func (*Interp) MoreLines(string) bool                             { return false }
func (*Interp) AwaitInput([]int, *interp.ReadAhead) (bool, error) { return false, nil }
func (*Interp) Stuck(time.Duration) bool                          { return false }
func (*Interp) Interrupt()                                        {}
func (*Interp) Interrupts() <-chan struct{}                       { return nil }
func (*Interp) SignalErrors() <-chan struct{}                     { return nil }
func (*Interp) SIGINT() interp.SIGINTAction                       { return interp.SIGINTRaises }
func (*Interp) RunSIGINTHandler() bool                            { return false }
func (*Interp) SetMagics(bool) error                              { return errNoCgo }
func (*Interp) SetDisplay(Display)                                {}
func (*Interp) SetFigureDir(string) error                         { return errNoCgo }
func (*Interp) DieBySIGINT()                                      {}
func (*Interp) SIGINTToUser(bool)                                 {}
func (*Interp) SetMainImporter(string) error                      { return errNoCgo }
func (*Interp) SkipSourceFirstLine() error                        { return errNoCgo }
func (*Interp) ShowSignalError() (interp.Outcome, error)          { return interp.Outcome{}, errNoCgo }
func (*Interp) Close(time.Duration) bool                          { return true }
func (*Interp) Exit(s int, _ time.Duration, _ func(string)) int   { return s }
func (*Interp) CaptureOutput(int) error                           { return errNoCgo }
func (*Interp) StopCapture()                                      {}
func (*Interp) TakeOutput() ([]OutputPart, int)                   { return nil, 0 }
func (*Interp) LoadModule(string, string) error                   { return errNoCgo }
func (*Interp) PrepareIsolated()                                  {}
func (*Interp) DiscardIsolated()                                  {}
func (*Interp) IsolationStats() IsolationStats                    { return IsolationStats{} }
func (*Interp) RouteStdin(bool) error                             { return errNoCgo }
func (*Interp) SetPath0(string) error                             { return errNoCgo }
func (*Interp) RecentContext() (string, error)                    { return "", errNoCgo }
func (*Interp) ResetBlock() error                                 { return errNoCgo }
func (*Interp) Push(string) (interp.Outcome, error)               { return interp.Outcome{}, errNoCgo }
func (*Interp) PushEOF() (interp.Outcome, error)                  { return interp.Outcome{}, errNoCgo }
func (*Interp) RunBlock(string) (interp.Outcome, error)           { return interp.Outcome{}, errNoCgo }
func (*Interp) RunCommand(string) (interp.Outcome, error)         { return interp.Outcome{}, errNoCgo }
func (*Interp) RunFile(string) (interp.Outcome, error)            { return interp.Outcome{}, errNoCgo }
func (*Interp) RunModule(string) (interp.Outcome, error)          { return interp.Outcome{}, errNoCgo }
func (*Interp) RunStartup(string) (interp.Outcome, error)         { return interp.Outcome{}, errNoCgo }
func (*Interp) Call(context.Context, CallKind, string, string, string) (string, error) {
	return "", errNoCgo
}
