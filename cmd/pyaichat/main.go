// Command pyaichat is a Python REPL with an assistant one TAB away. Its
// main only sets up the process; cmd/pyaichat/app is the program.
package main

import (
	"os"
	"runtime"

	"github.com/pyaichat/pyaichat/cmd/pyaichat/app"
	"github.com/pyaichat/pyaichat/pybridge"
)

// Python's main thread is the process's main thread (see pybridge.RunMain):
// the main goroutine stays on it.
func init() { runtime.LockOSThread() }

func main() {
	if os.Getenv("GOMAXPROCS") == "" {
		// Two processors for Go code, the most it needs: the prompt and
		// Python run on one thread, which holds a processor for the REPL's
		// Go code and leaves it in each cgo and system call. With only
		// that processor, the runtime's monitor takes it back from every
		// such call that lasts over 20 µs (a line's run, the wait for a
		// key) and wakes another thread to hold it: a few wake-ups a line,
		// where an idle second processor leaves the call its own for 10
		// ms. More processors would only let more threads be woken to
		// steal goroutines (see make bench-speed).
		runtime.GOMAXPROCS(2)
	}
	pybridge.RunMain(func() int { return app.Run(os.Stdin, os.Stdout, os.Stderr, os.Args[1:]) })
}
