// Command pyaichat is a Python REPL with an assistant one TAB away.
//
// This package is the composition root: it parses the command line, finds
// the configuration and the files pyaichat keeps, picks a terminal or a
// pipe, starts the interpreter and wires the REPL (repl), the assistant
// (agent) and its capabilities (capabilities) together.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/pyaichat/pyaichat/agent"
	"github.com/pyaichat/pyaichat/pybridge"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const usage = `usage: pyaichat [option] ... [-c CODE | FILE] [ARG] ...
       pyaichat --capability NAME [EXPR] [-c CODE]... [FILE]

A Python REPL with an AI assistant that can look at the live session.
At the prompt, TAB switches between py> (Python) and ai> (questions).

Options:
  -c CODE          run CODE, then stay interactive; as in python3, the arguments
                   after it are sys.argv[1:], so options go before it
  FILE             run FILE as __main__ with sys.argv = [FILE, ARG...], then stay interactive
  -p QUESTION      run the setup (-c CODE or FILE, given after it), ask QUESTION,
                   print the answer and exit
  --venv DIR       use the virtualenv in DIR (default: $VIRTUAL_ENV)
  --model NAME     the model to ask (default: $PYAICHAT_MODEL, or gpt-4o)
  --base-url URL   an OpenAI-compatible API (default: $OPENAI_BASE_URL)
  --capability ... call one read-only capability and print its JSON result
  --version        print the version and exit
  -h, --help       print this help and exit

Environment: OPENAI_API_KEY, OPENAI_BASE_URL, PYAICHAT_MODEL, VIRTUAL_ENV.
`

// cmdline is the parsed command line.
type cmdline struct {
	commands []string
	script   string
	args     []string // after FILE or -c
	question string
	venv     string
	model    string
	baseURL  string
	askedC   bool
}

// argv is sys.argv as python3 has it for the same command line.
func (c cmdline) argv() []string {
	switch {
	case c.script != "":
		return append([]string{c.script}, c.args...)
	case len(c.commands) > 0:
		return append([]string{"-c"}, c.args...)
	}
	return []string{""}
}

// parseArgs reads options the way python3 does: they stop at the first
// -c CODE or FILE, and everything after belongs to sys.argv.
func parseArgs(args []string) (cmdline, error) {
	var c cmdline
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
				return v, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("option %s needs an argument", a)
			}
			i++
			return args[i], nil
		}
		name, _, _ := strings.Cut(a, "=")
		var err error
		switch {
		case a == "-c":
			v, err := value()
			if err != nil {
				return c, err
			}
			c.commands = append(c.commands, v)
			c.askedC = true
			c.args = args[i+1:]
			return c, nil
		case a == "-p":
			c.question, err = value()
		case name == "--venv":
			c.venv, err = value()
		case name == "--model":
			c.model, err = value()
		case name == "--base-url":
			c.baseURL, err = value()
		case a == "--":
			if i+1 < len(args) {
				c.script, c.args = args[i+1], args[i+2:]
			}
			return c, nil
		case a == "-" || !strings.HasPrefix(a, "-"):
			c.script, c.args = a, args[i+1:]
			return c, nil
		default:
			return c, fmt.Errorf("unknown option %s (see pyaichat --help)", a)
		}
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// Python's main thread is the process's main thread (see pybridge.RunMain):
// the main goroutine stays on it.
func init() { runtime.LockOSThread() }

func main() {
	if os.Getenv("GOMAXPROCS") == "" {
		// One processor for Go code: Python runs on its own thread, outside
		// any processor, and the Go side only edits lines and waits on I/O.
		// With a second processor idle, every goroutine made ready wakes
		// another thread to steal it, and on the way from a key to Python
		// and back those wake-ups cost more than the work (see make
		// bench-repl).
		runtime.GOMAXPROCS(1)
	}
	std := stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}
	pybridge.RunMain(func() int { return run(std, os.Args[1:]) })
}

// stdio are the standard streams pyaichat runs with.
type stdio struct {
	in       *os.File
	out, err *os.File
}

func (s stdio) warn(msg string) { fmt.Fprintf(s.err, "pyaichat: %s\n", msg) }

// run is pyaichat with its arguments; it returns the exit status.
func run(std stdio, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "--version", "-V":
			fmt.Fprintf(std.out, "pyaichat %s (Python %s)\n", version, strings.Fields(pybridge.Version())[0])
			return 0
		case "-h", "--help":
			io.WriteString(std.out, usage)
			return 0
		case "--capability":
			return runCapability(std, args[1:])
		}
	}
	c, err := parseArgs(args)
	if err != nil {
		std.warn(err.Error())
		return 2
	}
	if c.script == "-" {
		std.warn("reading a program from stdin is not supported; pipe lines instead")
		return 2
	}
	// python3 -i reports a FILE it cannot open and goes on to the REPL
	// (so does pyaichat, from Python); a question about it cannot.
	if c.script != "" && c.question != "" {
		if _, err := os.Stat(c.script); err != nil {
			std.warn(cantOpen(c.script, err))
			return 2
		}
	}
	cfg, cfgErr := agent.LoadConfig(c.model, c.baseURL)
	if cfgErr != nil && c.question != "" {
		std.warn(cfgErr.Error())
		return 2
	}
	return runInteractive(std, c, cfg, cfgErr)
}

// cantOpen says that FILE cannot be opened as python3 says it (and as
// pyaichat says it when the REPL starts anyway).
func cantOpen(path string, err error) string {
	if abs, aerr := filepath.Abs(path); aerr == nil {
		path = abs
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fmt.Sprintf("can't open file '%s': %v", path, err)
	}
	msg := errno.Error() // strerror, but in lower case
	return fmt.Sprintf("can't open file '%s': [Errno %d] %s", path, int(errno), strings.ToUpper(msg[:1])+msg[1:])
}
