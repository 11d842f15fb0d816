// Command pyaichat is a Python REPL with an assistant one TAB away.
//
// main only parses the command line and wires the packages together; the
// REPL itself is repl.Run.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"github.com/pyaichat/pyaichat/agent"
	"github.com/pyaichat/pyaichat/capabilities"
	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/repl"
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
	pybridge.RunMain(func() int { return run(os.Args[1:], os.Stdout, os.Stderr) })
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "--version", "-V":
			fmt.Fprintf(stdout, "pyaichat %s (Python %s)\n", version, strings.Fields(pybridge.Version())[0])
			return 0
		case "-h", "--help":
			io.WriteString(stdout, usage)
			return 0
		case "--capability":
			return runCapability(args[1:], stdout, stderr)
		}
	}
	c, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "pyaichat: %v\n", err)
		return 2
	}
	argv := []string{""}
	switch {
	case c.script == "-":
		fmt.Fprintln(stderr, "pyaichat: reading a program from stdin is not supported; pipe lines instead")
		return 2
	case c.script != "":
		// python3 -i reports a FILE it cannot open and goes on to the REPL
		// (so does pyaichat, from Python); a question about it cannot.
		if _, err := os.Stat(c.script); err != nil && c.question != "" {
			fmt.Fprintf(stderr, "pyaichat: %s\n", cantOpen(c.script, err))
			return 2
		}
		argv = append([]string{c.script}, c.args...)
	case c.askedC:
		argv = append([]string{"-c"}, c.args...)
	}
	cfg, cfgErr := agent.LoadConfig(c.model, c.baseURL)
	if cfgErr != nil && c.question != "" {
		fmt.Fprintf(stderr, "pyaichat: %v\n", cfgErr)
		return 2
	}
	cfg.Color = repl.IsTerminal(os.Stdout) && os.Getenv("TERM") != "dumb"
	var session *agent.Session
	opts := repl.Options{
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Argv:     argv,
		Script:   c.script,
		Commands: c.commands,
		Venv:     c.venv,
		NewAssistant: func(in *pybridge.Interp, recent func() string) (repl.Assistant, error) {
			if cfgErr != nil {
				return nil, fmt.Errorf("ai> is unavailable: %w", cfgErr)
			}
			session = agent.NewSession(cfg, agent.FromRegistry(capabilities.New(in, capabilities.Options{})), recent)
			return session, nil
		},
	}
	if c.question != "" {
		opts.OneShot = func(ctx context.Context, out io.Writer) int {
			session.Notices = os.Stderr // the answer alone goes to stdout
			if err := session.Ask(ctx, c.question, out); err != nil {
				fmt.Fprintf(stderr, "pyaichat: %v\n", err)
				return 1
			}
			return 0
		}
	}
	return repl.Run(opts)
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
