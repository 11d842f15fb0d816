package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pyaichat/pyaichat/capabilities"
	"github.com/pyaichat/pyaichat/capabilities/spec"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/config"
)

const capabilityUsage = "usage: pyaichat --capability NAME [EXPR | JSON-ARGS] [-c CODE]... [FILE [ARG]...]\n       pyaichat --capability NAME [EXPR] --existing CONNECTION_FILE"

// capabilityCall is a parsed --capability command line.
type capabilityCall struct {
	name     string
	expr     string   // the expression, or a user capability's JSON arguments
	user     bool     // not a built-in: one of the user's, known once loaded
	commands []string // -c CODE, in order
	file     string   // FILE, or ""
	fileArgs []string // what follows FILE
	existing string   // --existing: a Jupyter kernel's connection file
}

func parseCapabilityArgs(args []string) (capabilityCall, error) {
	var c capabilityCall
	if len(args) == 0 {
		return c, fmt.Errorf("missing capability NAME; the capabilities are %s", strings.Join(capabilities.Names(), ", "))
	}
	c.name, args = args[0], args[1:]
	args, err := c.takeArgument(args)
	if err != nil {
		return c, err
	}
	return c, c.takeRest(args)
}

// takeArgument takes the capability's argument: an expression for one of
// the seven that takes it, JSON arguments for one of the user's.
func (c *capabilityCall) takeArgument(args []string) ([]string, error) {
	takes, exists := capabilities.TakesExpr(c.name)
	switch {
	case !exists && strings.HasPrefix(c.name, "-"):
		return nil, fmt.Errorf("unknown capability %q; the capabilities are %s", c.name, strings.Join(capabilities.Names(), ", "))
	case !exists:
		c.user = true
		if len(args) > 0 && strings.HasPrefix(args[0], "{") {
			c.expr, args = args[0], args[1:]
		}
	case takes:
		if len(args) == 0 || args[0] == "-c" {
			return nil, fmt.Errorf("%s needs an EXPR", c.name)
		}
		c.expr, args = args[0], args[1:]
	}
	return args, nil
}

// takeRest takes the setup (-c CODE..., FILE [ARG]...) and --existing.
func (c *capabilityCall) takeRest(args []string) error {
	for len(args) > 0 {
		switch {
		case args[0] == "-c":
			if len(args) < 2 {
				return fmt.Errorf("-c needs CODE")
			}
			c.commands = append(c.commands, args[1])
			args = args[2:]
		case args[0] == "--existing" && len(args) >= 2:
			c.existing = args[1]
			args = args[2:]
		case strings.HasPrefix(args[0], "-") && args[0] != "-":
			return fmt.Errorf("unknown option %s", args[0])
		default:
			c.file, c.fileArgs = args[0], args[1:]
			args = nil
		}
	}
	return nil
}

// capabilityOutput is the one JSON object --capability prints.
type capabilityOutput struct {
	Capability string          `json:"capability"`
	OK         bool            `json:"ok"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *spec.Error     `json:"error,omitempty"`
}

// runCapability is `pyaichat --capability NAME [EXPR] [-c CODE]... [FILE]`:
// it starts the interpreter, runs the -c code and FILE as the REPL would,
// calls one capability and prints one JSON object on stdout. Exit status:
// 0 ok, 1 the capability failed, 2 usage.
func runCapability(std stdio, args []string) int {
	call, err := parseCapabilityArgs(args)
	if err != nil {
		fmt.Fprintf(std.err, "pyaichat: %v\n%s\n", err, capabilityUsage)
		return 2
	}
	if call.existing != "" {
		return runKernelCapability(std, call)
	}
	c := cmdline{commands: call.commands, script: call.file, args: call.fileArgs}
	if c.script != "" {
		if _, err := os.Stat(c.script); err != nil {
			std.warn(cantOpen(c.script, err))
			return 1
		}
	}
	in, err := startPython(c, nil, false, std.warn)
	if err != nil {
		std.warn(err.Error())
		return 1
	}
	defer in.Close(2 * time.Second)
	if err := setupToStderr(func() { runSetup(in, c, false, std.warn) }); err != nil {
		std.warn(err.Error())
		return 1
	}
	return printCapability(std, call, in)
}

// printCapability calls one capability on in and prints its JSON object,
// with the same environment policy as ai>'s: the copy where expressions
// run wipes the values of secret variables (a broken config file leaves
// the built-in rule).
func printCapability(std stdio, call capabilityCall, in capabilities.Session) int {
	set, _ := config.Load(xdgPaths().configFile(), config.Flags{})
	reg := newRegistry(withSecrets(set.Agent).Secrets, in, "")
	if call.user && !loadUserCapability(std, reg, set.CapabilityModules, call.name) {
		return 2
	}
	res, err := reg.CallText(context.Background(), call.name, call.expr)
	out := capabilityOutput{Capability: call.name, OK: err == nil, Result: res}
	if err != nil {
		out.Error = capabilityError(err)
	}
	enc := json.NewEncoder(std.out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		std.warn(fmt.Sprintf("writing the result: %v", err))
		return 1
	}
	if !out.OK {
		return 1
	}
	return 0
}

// setupToStderr runs setup with its output (and Python's: fd 1) on
// stderr, so that stdout carries only the result.
func setupToStderr(setup func()) error {
	saved, err := unix.Dup(1)
	if err != nil {
		return fmt.Errorf("saving stdout: %w", err)
	}
	defer unix.Close(saved)
	if err := unix.Dup2(2, 1); err != nil {
		return fmt.Errorf("redirecting setup output: %w", err)
	}
	defer unix.Dup2(saved, 1)
	setup()
	return nil
}

// loadUserCapability loads the user's capabilities, their problems on
// stderr, and reports whether name is one of them (if not, the usage
// error, as for any unknown name).
func loadUserCapability(std stdio, reg *capabilities.Registry, modules []string, name string) bool {
	for _, problem := range reg.LoadUser(context.Background(), modules, entryPointCache()) {
		std.warn(problem)
	}
	names := capabilities.Names()
	for _, u := range reg.User() {
		if u.Name == name {
			return true
		}
		names = append(names, u.Name)
	}
	fmt.Fprintf(std.err, "pyaichat: unknown capability %q; the capabilities are %s\n%s\n", name, strings.Join(names, ", "), capabilityUsage)
	return false
}
