package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/pyaichat/pyaichat/cmd/pyaichat/config"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog/live"
)

const usage = `usage: pyaichat [option] ... [-c cmd | -m mod | file] [arg] ...
       pyaichat --capability NAME [EXPR] [-c CODE]... [FILE]

A Python REPL with an AI assistant that can look at the live session.
At the prompt, TAB switches between py> (Python) and ai> (questions).

As python3 -i:
  -c cmd           run cmd, then stay interactive (the arguments after it are
                   sys.argv[1:], so options go before it)
  -m mod           run library module mod as __main__, then stay interactive
  file             run file as __main__ with sys.argv = [file, arg...], then
                   stay interactive
  -q               no banner      -u  unbuffered stdout and stderr
  -B               no .pyc files  -E  ignore PYTHON* environment variables
  -s               no user site   -S  no site module
  -I               isolated (-E -P -s)
  -P               no unsafe path (script directory or cwd) on sys.path
  -O, -OO          optimize       -b, -bb  bytes warnings
  -W arg           warning control (as python3's -W)
  -X opt           implementation option (as python3's -X)
  -i               accepted; pyaichat is always interactive
  -V               print pyaichat's and Python's versions and exit
  -VV, --version   the same, with where the embedded Python lives
  -h, --help       print this help and exit

pyaichat's own:
  -p QUESTION      run the setup (-c cmd, -m mod or file, given after it), ask
                   QUESTION, print the answer and exit
  --venv DIR       use the virtualenv in DIR (default: $VIRTUAL_ENV)
  --model NAME     the model to ask (default: $PYAICHAT_MODEL, or gpt-4o)
  --base-url URL   an OpenAI-compatible API (default: $OPENAI_BASE_URL)
  --provider NAME  a known service's API and key variable: openai, azure,
                   openrouter, github, groq, anthropic, ollama, llamacpp,
                   vllm, lmstudio (default: $PYAICHAT_PROVIDER)
  --capability ... call one read-only capability and print its JSON result
  --json           with -p: print one JSON object (answer, tool calls, usage,
                   model, error) instead of the answer
  --json-stream    with -p: print each event as a JSON line as it happens
  --no-log         do not write this session's log
  --no-instructions
                   leave out ~/.config/pyaichat/instructions.md and the
                   project's .pyaichat.md
  --log-output     keep what each py> input prints in the session's log
  --continue       resume the latest session: its conversation, and its py>
                   inputs replayed if you say so
  --resume ID      resume session ID (a unique prefix will do)
  --existing [FILE]
                   py> in a running Jupyter kernel: FILE is its connection
                   file (default: the latest in Jupyter's runtime directory)
  --kernel NAME    py> in a new Jupyter kernel of kernelspec NAME, shut down
                   on exit

  pyaichat sessions                       list recent sessions
  pyaichat sessions show ID               print one as a transcript
  pyaichat sessions export ID FILE        write it as FILE.ipynb, .py or .md
  pyaichat serve [--addr A] [--open] [-- ARGS...]
                                          the REPL in a browser tab (serve -h)
  pyaichat doctor                         check the set-up; what to fix first
  pyaichat config path|show|edit          the config file; the settings in force
  pyaichat completion bash|zsh|fish       print a shell completion script

Environment: OPENAI_API_KEY, OPENAI_BASE_URL, PYAICHAT_MODEL, VIRTUAL_ENV,
NO_COLOR, FORCE_COLOR, PYTHON_COLORS, and python3's.
`

// cmdline is the parsed command line.
type cmdline struct {
	commands []string // -c cmd (--capability takes several)
	module   string   // -m mod
	script   string   // file
	args     []string // after file, -c cmd or -m mod
	question string
	venv     string
	model    string
	baseURL  string
	provider string
	options  []string // python3's options, as given

	// pyaichat's sessions: --no-log, --log-output, --json, --json-stream,
	// --continue, --resume ID; and --no-instructions, which leaves the
	// user's and the project's instructions out of what the assistant
	// is told.
	noLog          bool
	logOutput      bool
	json           bool
	jsonStream     bool
	noInstructions bool
	resume         string // an id, or resumeLatest

	// py> in a Jupyter kernel: --existing [FILE] attaches to a running
	// one (existing is its connection file, "" for the latest), --kernel
	// NAME starts one of that kernelspec.
	attach     bool
	existing   string
	kernelName string

	version int // -V, given this many times
	help    bool
	// pythonHelp is python3's --help-env, --help-xoptions or --help-all,
	// which python3 of the embedded version answers.
	pythonHelp string

	// What pyaichat itself must know of python3's options.
	quiet     bool // -q: no banner
	safePath  bool // -P or -I: no script directory or cwd on sys.path
	ignoreEnv bool // -E or -I: no PYTHONSTARTUP either
	unbuffer  bool // -u: stdin read unbuffered too, as python3's C stdio
	// -x: FILE's first line is skipped.
	skipFirstLine bool
}

// wantsHelp says that -h or python3's --help-* was given.
// configFlags are the flags that choose the model and its server.
func (c cmdline) configFlags() config.Flags {
	return config.Flags{Model: c.model, BaseURL: c.baseURL, Provider: c.provider}
}

func (c cmdline) wantsHelp() bool { return c.help || c.pythonHelp != "" }

// unbuffered says whether python3 would read a piped stdin unbuffered:
// under -u or PYTHONUNBUFFERED (unless -E or -I).
func (c cmdline) unbuffered() bool {
	return c.unbuffer || (!c.ignoreEnv && os.Getenv("PYTHONUNBUFFERED") != "")
}

// resumeLatest is --continue: the newest session.
const resumeLatest = live.Latest

// pythonArgs is the command line Python reads as python3 would read it
// (pybridge.Config.Args): the options, then what runs, then sys.argv's
// rest.
func (c cmdline) pythonArgs() []string {
	args := append([]string(nil), c.options...)
	switch {
	case c.script != "":
		args = append(args, "--", c.script)
	case c.module != "":
		args = append(args, "-m", c.module)
	case len(c.commands) > 0:
		args = append(args, "-c", c.commands[0])
	default:
		return args
	}
	return append(args, c.args...)
}

// usageError is a command line python3 would refuse: it says so in
// python3's words, with the usage line, and exits with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string {
	return e.msg + "\nusage: pyaichat [option] ... [-c cmd | -m mod | file | -] [arg] ...\nTry `pyaichat -h' for more information."
}

// python3Flags are python3's options without an argument, and what of each
// pyaichat itself must know.
var python3Flags = map[byte]func(*cmdline){
	'q': func(c *cmdline) { c.quiet = true },
	'E': func(c *cmdline) { c.ignoreEnv = true },
	'I': func(c *cmdline) { c.ignoreEnv, c.safePath = true, true },
	'P': func(c *cmdline) { c.safePath = true },
	'u': func(c *cmdline) { c.unbuffer = true },
	'B': nil, 'v': nil, 'R': nil, 'd': nil,
	'x': func(c *cmdline) { c.skipFirstLine = true }, 's': nil, 'S': nil, 'O': nil, 'b': nil, 'i': nil,
}

// parseArgs reads the command line the way python3 does: options may be
// grouped (-qB) and an option's argument may follow it (-Wignore) or come
// next; options stop at -c cmd, -m mod, the first file or "--", and
// everything after belongs to sys.argv.
func parseArgs(args []string) (cmdline, error) {
	var c cmdline
	for i := 0; i < len(args); i++ {
		a := args[i]
		// value is the argument of the option at a[j] (in a, or next).
		value := func(opt string, j int) (string, error) {
			if j+1 < len(a) {
				return a[j+1:], nil
			}
			if i+1 >= len(args) {
				return "", usageError{fmt.Sprintf("Argument expected for the %s option", opt)}
			}
			i++
			return args[i], nil
		}
		switch {
		case a == "--":
			if i+1 < len(args) {
				c.script, c.args = args[i+1], args[i+2:]
			}
			return c, nil
		case a == "-" || !strings.HasPrefix(a, "-"):
			c.script, c.args = a, args[i+1:]
			return c, nil
		case existingWithFile(args, i):
			i++
			c.attach, c.existing = true, args[i]
			continue
		case strings.HasPrefix(a, "--"):
			if err := c.longOption(a, func() (string, error) { return value(a, len(a)-1) }); err != nil {
				return c, err
			}
			continue
		}
		rest, err := c.shortOptions(a, value)
		if err != nil || rest != nil {
			if rest != nil {
				c.args = args[i+1:]
			}
			return c, err
		}
	}
	return c, nil
}

// existingWithFile says whether args[i] is --existing followed by its
// connection file: its argument is optional, as jupyter console's is, and
// a word after it is the file.
func existingWithFile(args []string, i int) bool {
	return args[i] == "--existing" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-")
}

// shortOptions reads one argument of single-letter options (-qB, -Wignore,
// -c cmd); value takes the argument of the option at a[j]. rest is
// non-nil when the options end there (-c cmd, -m mod): what follows
// belongs to sys.argv.
func (c *cmdline) shortOptions(a string, value func(opt string, j int) (string, error)) (rest []string, err error) {
	for j := 1; j < len(a); j++ {
		opt := a[j]
		if set, ok := python3Flags[opt]; ok {
			c.options = append(c.options, "-"+string(opt))
			if set != nil {
				set(c)
			}
			continue
		}
		switch opt {
		case 'V':
			c.version++
			continue
		case 'h', '?':
			c.help = true
			continue
		case 'c', 'm', 'W', 'X', 'p':
		default:
			return nil, usageError{fmt.Sprintf("Unknown option: -%c", opt)}
		}
		v, err := value("-"+string(opt), j)
		if err != nil {
			return nil, err
		}
		switch opt {
		case 'c':
			c.commands = append(c.commands, v)
			return []string{}, nil
		case 'm':
			c.module = v
			return []string{}, nil
		case 'W', 'X':
			c.options = append(c.options, "-"+string(opt), v)
		case 'p':
			c.question = v
		}
		return nil, nil // the rest of a was the argument
	}
	return nil, nil
}

// switches are the long options that take no argument and turn one
// setting on.
func (c *cmdline) switches() map[string]*bool {
	return map[string]*bool{
		"--help": &c.help, "--no-log": &c.noLog, "--no-instructions": &c.noInstructions,
		"--log-output": &c.logOutput, "--json": &c.json, "--json-stream": &c.jsonStream,
	}
}

// settings are the long options whose argument is the setting itself.
func (c *cmdline) settings() map[string]*string {
	return map[string]*string{
		"--venv": &c.venv, "--model": &c.model, "--base-url": &c.baseURL, "--provider": &c.provider,
		"--kernel": &c.kernelName, "--resume": &c.resume,
	}
}

// longOption reads one --option; value takes its argument, after "=" or
// next.
func (c *cmdline) longOption(a string, value func() (string, error)) error {
	name, v, hasValue := strings.Cut(a, "=")
	arg := func() (string, error) {
		if hasValue {
			return v, nil
		}
		return value()
	}
	if flag := c.switches()[name]; flag != nil {
		*flag = true
		return nil
	}
	if setting := c.settings()[name]; setting != nil {
		var err error
		*setting, err = arg()
		return err
	}
	var err error
	switch name {
	case "--version":
		c.version += 2 // the full one
	case "--existing":
		c.attach, c.existing = true, v
	case "--continue":
		c.resume = resumeLatest
	case "--check-hash-based-pycs":
		if v, err = arg(); err == nil {
			if v != "default" && v != "always" && v != "never" {
				return usageError{"--check-hash-based-pycs must be one of 'default', 'always', or 'never'"}
			}
			c.options = append(c.options, name, v)
		}
	case "--help-env", "--help-xoptions", "--help-all":
		c.pythonHelp = name
	default:
		return usageError{"unknown option " + name}
	}
	return err
}

// ownLongOptions are pyaichat's options that python3 has not: after -c,
// -m or FILE they are the script's arguments, as python3 has it, which a
// user of -p rarely means.
var ownLongOptions = []string{"--json", "--json-stream", "--model", "--base-url",
	"--provider", "--venv", "--no-log", "--no-instructions", "--log-output", "--continue", "--resume"}

// misplacedOptions says, for -p, which of pyaichat's own options went to
// sys.argv because they came after -c, -m or FILE; "" when none did.
func (c cmdline) misplacedOptions() string {
	if c.question == "" {
		return ""
	}
	var found []string
	for _, a := range c.args {
		name, _, _ := strings.Cut(a, "=")
		for _, own := range ownLongOptions {
			if name == own {
				found = append(found, name)
			}
		}
	}
	if len(found) == 0 {
		return ""
	}
	return fmt.Sprintf("%s went to the script's sys.argv; pyaichat's own options go before -c, -m or FILE", strings.Join(found, ", "))
}
