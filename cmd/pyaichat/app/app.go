// Package app is pyaichat behind its main: it parses the command line,
// finds the configuration (cmd/pyaichat/config) and the files pyaichat
// keeps, picks a terminal or a pipe, starts the interpreter and wires the
// REPL (repl), the assistant (agent) and its capabilities (capabilities)
// together; and it runs pyaichat's own commands (doctor, config, serve,
// sessions, completion, --capability).
package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pyaichat/pyaichat/agent"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/config"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/jsonreport"
	"github.com/pyaichat/pyaichat/pybridge"
)

// version is pyaichat's own version.
var version = "0.1.0-dev"

// Run is pyaichat with its arguments (without the program's name) and
// standard streams; it returns the exit status. It must run on the
// process's main thread, which Python's runs on (pybridge.RunMain).
func Run(in, out, errOut *os.File, args []string) int {
	return run(stdio{in: in, out: out, err: errOut}, args, embeddedPython)
}

// stdio are the standard streams pyaichat runs with.
type stdio struct {
	in       *os.File
	out, err *os.File
}

func (s stdio) warn(msg string) { fmt.Fprintf(s.err, "pyaichat: %s\n", msg) }

// subcommands are the words that, first on the command line, name one of
// pyaichat's own commands rather than a FILE to run (./doctor runs a file
// of that name).
var subcommands = map[string]func(stdio, []string) int{
	"--capability": runCapability,
	"sessions":     runSessions,
	"serve":        runServe,
	"doctor":       runDoctor,
	"config":       runConfig,
	"completion":   runCompletion,
}

// run is pyaichat with its arguments, its interactive sessions' Python
// started by startPy; it returns the exit status.
func run(std stdio, args []string, startPy pythonStarter) int {
	if len(args) > 0 && subcommands[args[0]] != nil {
		return subcommands[args[0]](std, args[1:])
	}
	c, err := parseArgs(args)
	var uerr usageError
	switch {
	case errors.As(err, &uerr):
		fmt.Fprintln(std.err, uerr.Error())
		return 2
	case err != nil:
		std.warn(err.Error())
		return 2
	case c.wantsHelp():
		return help(std, c.pythonHelp)
	case c.version > 0:
		printVersion(std.out, c.version > 1)
		return 0
	case c.script == "-":
		std.warn("reading a program from stdin is not supported; pipe lines instead")
		return 2
	case sessionFlagsWrong(c) != "":
		std.warn(sessionFlagsWrong(c))
		return 2
	}
	if note := c.misplacedOptions(); note != "" {
		std.warn(note)
	}
	if msg := unusable(c); msg != "" {
		std.warn(msg)
		return exitUsage
	}
	set, cfgErr := config.Load(xdgPaths().configFile(), c.configFlags())
	useInstructions(std, c, &set.Agent)
	if cfgErr != nil && c.question != "" {
		return configFailed(std, c, cfgErr)
	}
	if c.inKernel() {
		return runKernel(std, c, set, cfgErr)
	}
	return runInteractive(std, c, set, cfgErr, startPy)
}

// unusable says why the command line cannot start, or "": a --venv that
// cannot be used, or a FILE that cannot be opened for a question (python3
// -i reports a FILE it cannot open and goes on to the REPL, and so does
// pyaichat, from Python; a question about it cannot).
func unusable(c cmdline) string {
	if c.venv != "" {
		if _, err := pybridge.VenvExecutable(c.venv); err != nil {
			return err.Error()
		}
	}
	if c.script != "" && c.question != "" {
		if _, err := os.Stat(c.script); err != nil {
			return cantOpen(c.script, err)
		}
	}
	return ""
}

// sessionFlagsWrong says what is wrong with the flags of -p's JSON and
// of resuming, or "".
func sessionFlagsWrong(c cmdline) string {
	switch {
	case (c.json || c.jsonStream) && c.question == "":
		return "--json and --json-stream go with -p QUESTION"
	case c.resume != "" && c.question != "":
		return "--continue and --resume start a REPL; they do not go with -p"
	}
	return ""
}

// configFailed is -p with a configuration that cannot be used.
func configFailed(std stdio, c cmdline, err error) int {
	std.warn(err.Error())
	if c.json || c.jsonStream {
		return jsonreport.New(c.model, c.question, c.jsonStream, std.out).Finish("config", err.Error(), exitUsage)
	}
	return exitUsage
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

// help is -h, or python3's --help-* option (pythonHelp).
func help(std stdio, pythonOption string) int {
	if pythonOption != "" {
		return pythonHelp(std, pythonOption)
	}
	io.WriteString(std.out, usage)
	return 0
}

// pythonHelp answers python3's --help-env, --help-xoptions and --help-all
// with the words of python3 of the embedded version (they change from
// one version to the next), its program name made pyaichat's.
func pythonHelp(std stdio, option string) int {
	exe := pybridge.RealExecutable()
	if exe == "" {
		std.warn("no python3 of the embedded version to ask for " + option)
		return 2
	}
	cmd := exec.Command(exe, option)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	ours := strings.NewReplacer("usage: "+exe, "usage: pyaichat", "`python -h'", "`pyaichat -h'")
	io.WriteString(std.out, ours.Replace(out.String()))
	io.WriteString(std.err, ours.Replace(errb.String()))
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		std.warn(fmt.Sprintf("asking %s for %s: %v", exe, option, err))
		return 2
	}
	return 0
}

// useInstructions gives the assistant the user's and the project's
// instructions, unless --no-instructions; a file that cannot be read is
// one line, and the other still counts.
func useInstructions(std stdio, c cmdline, cfg *agent.Config) {
	userFile := xdgPaths().instructionsFile()
	cfg.InstructionsHelp = config.InstructionsHelp(userFile)
	if c.noInstructions {
		return
	}
	wd, _ := os.Getwd()
	var errs []error
	cfg.Instructions, errs = config.LoadInstructions(userFile, wd)
	for _, err := range errs {
		std.warn(err.Error())
	}
}
