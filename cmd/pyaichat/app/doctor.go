package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/pyaichat/pyaichat/agent"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/config"
	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/repl/term"
)

// A finding is one line of pyaichat doctor: a level, what it is about, what
// was found and, when the level is warn or fail, what to do about it.
type finding struct {
	level level
	topic string
	text  string
	fix   string
}

type level int

const (
	levelInfo level = iota // worth knowing, nothing to fix
	levelOK
	levelWarn // works, but should be fixed
	levelFail // pyaichat cannot do its job until fixed
)

func (l level) word() string {
	return [...]string{"--", "ok", "warn", "FAIL"}[l]
}

// colour is the SGR colour of l's word on a terminal.
func (l level) colour() string {
	return [...]string{"2", "32", "33", "31"}[l]
}

const doctorUsage = `usage: pyaichat doctor [--model NAME] [--base-url URL] [--provider NAME] [--venv DIR]
                       [--existing [FILE] | --kernel NAME]

Says what pyaichat will use and whether it works: the embedded Python, the
virtualenv, the config file, the provider, model and key and where each
came from, whether the server answers GET /models and lists the model, and
the terminal; with --existing, whether the kernel answers; with --kernel,
whether its kernelspec is there. Exit status 0 when all is well, 1 with
the first thing to fix.
`

// runDoctor is pyaichat doctor.
func runDoctor(std stdio, args []string) int {
	c, err := parseArgs(args)
	switch {
	case err != nil:
		std.warn("doctor: " + strings.SplitN(err.Error(), "\n", 2)[0])
		return exitUsage
	case c.help:
		io.WriteString(std.out, doctorUsage)
		return 0
	case c.script != "" || c.module != "" || len(c.commands) > 0 || c.question != "":
		std.warn("doctor takes only --model, --base-url, --provider, --venv, --existing and --kernel")
		return exitUsage
	}
	color := colorWanted(term.IsTerminal(std.out))
	fmt.Fprintf(std.out, "pyaichat %s\n", version)
	var first *finding
	for _, f := range diagnose(c, std.out) {
		printFinding(std.out, f, color)
		if f.level >= levelWarn && (first == nil || f.level > first.level) {
			first = &f
		}
	}
	if first == nil {
		fmt.Fprintln(std.out, "all is well")
		return 0
	}
	fmt.Fprintf(std.out, "first thing to fix: %s\n", first.fix)
	return 1
}

func printFinding(w io.Writer, f finding, color bool) {
	word := fmt.Sprintf("%-4s", f.level.word())
	if color {
		word = "\x1b[" + f.level.colour() + "m" + word + "\x1b[0m"
	}
	fmt.Fprintf(w, "%s  %-9s %s\n", word, f.topic, f.text)
}

// diagnose makes every finding, in the order a user reads them: Python,
// virtualenv, config file, the assistant's settings and server, terminal.
func diagnose(c cmdline, out *os.File) []finding {
	found := []finding{pythonFinding(), venvFinding(c.venv)}
	path := xdgPaths().configFile()
	set, cfgErr := config.Load(path, c.configFlags())
	found = append(found, configFileFinding(path, set.FileHasKey, cfgErr))
	if cfgErr == nil {
		found = append(found, settingFindings(set.Agent, set.Origins)...)
		found = append(found, serverFindings(set.Agent, set.Origins)...)
	}
	found = append(found, kernelFinding(c)...)
	return append(found, terminalFinding(out))
}

// pythonFinding is the embedded Python: its version, how libpython is
// linked, and the interpreter (sys.executable) that goes with it.
func pythonFinding() finding {
	linkage := "libpython linked in (static)"
	if lib := pybridge.Library(); lib != "" {
		linkage = "libpython " + lib + " (shared)"
	}
	f := finding{level: levelOK, topic: "python", text: fmt.Sprintf("%s; %s", strings.Fields(pybridge.Version())[0], linkage)}
	major, minor := pybridge.MajorMinor()
	if major == 0 {
		f.level, f.fix = levelFail, "this pyaichat was built without cgo and embeds no Python; build it with make build"
		return f
	}
	exe := pybridge.RealExecutable()
	if exe == "" {
		f.level = levelWarn
		f.text += fmt.Sprintf("; no python%d.%d interpreter found for sys.executable", major, minor)
		f.fix = fmt.Sprintf("install python%d.%d (pip and venvs run it)", major, minor)
		return f
	}
	f.text += "; interpreter " + exe
	return f
}

// venvFinding is the virtualenv pyaichat would use: --venv, else
// $VIRTUAL_ENV, and whether it is for the embedded Python.
func venvFinding(flagVenv string) finding {
	dir, from := flagVenv, "--venv"
	if dir == "" {
		dir, from = os.Getenv("VIRTUAL_ENV"), "$VIRTUAL_ENV"
	}
	if dir == "" {
		return finding{level: levelInfo, topic: "venv", text: "none (--venv DIR or $VIRTUAL_ENV picks one)"}
	}
	if _, err := pybridge.VenvExecutable(dir); err != nil {
		// pyaichat refuses to start with a bad --venv, and starts
		// without a bad $VIRTUAL_ENV.
		lvl, drop := levelFail, "leave out --venv"
		if from == "$VIRTUAL_ENV" {
			lvl, drop = levelWarn, "unset VIRTUAL_ENV"
		}
		return finding{level: lvl, topic: "venv", text: err.Error(),
			fix: fmt.Sprintf("make a venv with the embedded Python's interpreter (%s -m venv DIR), or %s", interpreterName(), drop)}
	}
	major, minor := pybridge.MajorMinor()
	return finding{level: levelOK, topic: "venv", text: fmt.Sprintf("%s (Python %d.%d, from %s)", dir, major, minor, from)}
}

func interpreterName() string {
	if exe := pybridge.RealExecutable(); exe != "" {
		return exe
	}
	major, minor := pybridge.MajorMinor()
	return fmt.Sprintf("python%d.%d", major, minor)
}

// configFileFinding is the config file: where, whether it parses, and
// whether a key in it can be read by others than its owner.
func configFileFinding(path string, fileHasKey bool, loadErr error) finding {
	f := finding{topic: "config"}
	if path == "" {
		f.level, f.text = levelInfo, "no config directory (neither $XDG_CONFIG_HOME nor $HOME is set)"
		return f
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.level, f.text = levelInfo, path+" (none; pyaichat config edit makes one)"
		if loadErr != nil { // a bad flag or variable, not the file
			f.level, f.text, f.fix = levelFail, loadErr.Error(), "fix the setting: "+loadErr.Error()
		}
		return f
	case err != nil:
		f.level, f.text, f.fix = levelFail, err.Error(), "make "+path+" readable"
		return f
	case loadErr != nil:
		f.level, f.text, f.fix = levelFail, loadErr.Error(), "fix "+path+" (pyaichat config edit)"
		return f
	}
	mode := st.Mode().Perm()
	f.level, f.text = levelOK, fmt.Sprintf("%s (mode %04o)", path, mode)
	if fileHasKey && mode&0o077 != 0 {
		f.level = levelWarn
		f.text = fmt.Sprintf("%s holds an API key and others can read it (mode %04o)", path, mode)
		f.fix = "chmod 600 " + path
	}
	return f
}

// settingFindings are the provider, the base URL, the model and the key,
// each with where it came from; no key for OpenAI's own API is the thing
// to fix when nothing is configured.
func settingFindings(cfg agent.Config, origins config.Origins) []finding {
	provider := "none"
	if cfg.Provider != "" {
		provider = cfg.Provider + " (" + origins.Provider + ")"
	}
	key := finding{level: levelOK, topic: "key", text: "set (" + origins.APIKey + ")"}
	switch keyVar := presetKeyVar(cfg.Provider); {
	case cfg.APIKey == "" && keyVar != "":
		key.level, key.text = levelFail, "none, and provider "+cfg.Provider+" reads it from $"+keyVar
		key.fix = "set " + keyVar + " to your " + cfg.Provider + " key (or api_key in " + configHint() + ")"
	case cfg.APIKey == "" && !cfg.Configured():
		key.level, key.text = levelFail, "none, and "+agent.DisplayURL(cfg.BaseURL)+" needs one"
		key.fix = "configure a model: set OPENAI_API_KEY, or name a server with --provider or --base-url (or in " + configHint() + ")"
	case cfg.APIKey == "":
		key.level, key.text = levelInfo, "none (a server of your own needs none)"
	}
	return []finding{
		{level: levelInfo, topic: "provider", text: provider},
		{level: levelOK, topic: "base URL", text: agent.DisplayURL(cfg.BaseURL) + " (" + origins.BaseURL + ")"},
		{level: levelOK, topic: "model", text: cfg.Model + " (" + origins.Model + ")"},
		key,
	}
}

// presetKeyVar is the variable the named provider preset reads its key
// from ("" for none, or for no preset).
func presetKeyVar(name string) string {
	for _, p := range config.Providers() {
		if p.Name == name {
			return p.KeyVar
		}
	}
	return ""
}

func configHint() string {
	if path := xdgPaths().configFile(); path != "" {
		return path
	}
	return "the config file"
}

// serverFindings ask the server for its models, which needs no tokens:
// whether it answers, accepts the key, and lists the model. Nothing is
// asked when no model is configured, so that doctor works offline.
func serverFindings(cfg agent.Config, origins config.Origins) []finding {
	if !cfg.Configured() {
		return nil
	}
	ids, err := agent.ServerModels(context.Background(), cfg)
	if err != nil {
		return []finding{{level: levelFail, topic: "server", text: err.Error(), fix: serverFix(cfg, origins, err)}}
	}
	answers := finding{level: levelOK, topic: "server", text: fmt.Sprintf("answers GET /models (%d models)", len(ids))}
	switch {
	case len(ids) == 0:
		return []finding{answers}
	case !contains(ids, cfg.Model):
		return []finding{answers, {level: levelWarn, topic: "model", text: fmt.Sprintf("the server does not list %s (it lists %s)", cfg.Model, listSome(ids, 5)),
			fix: "pick a model the server lists: --model NAME, $PYAICHAT_MODEL or model in " + configHint()}}
	}
	return []finding{answers, {level: levelOK, topic: "model", text: cfg.Model + " is listed"}}
}

// serverFix says what to do about a server that did not answer the list.
func serverFix(cfg agent.Config, origins config.Origins, err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, " 401 ") || strings.Contains(msg, " 403 "):
		return "the server refused the key (" + origins.APIKey + "): check it"
	case strings.Contains(msg, "nothing listening"), strings.Contains(msg, "cannot"), strings.Contains(msg, "could not connect"):
		return "start the server at " + agent.DisplayURL(cfg.BaseURL) + ", or point --base-url or --provider at one that runs"
	}
	return "check the server at " + agent.DisplayURL(cfg.BaseURL) + ": " + msg
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// listSome is up to n items of list, and how many more there are.
func listSome(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:n], ", "), len(list)-n)
}

// terminalFinding is the terminal on stdout: TERM, whether pyaichat
// colours what it draws and how many colours it assumes, and its size.
func terminalFinding(out *os.File) finding {
	f := finding{level: levelInfo, topic: "terminal"}
	isTerm := term.IsTerminal(out)
	colours := "no colour"
	if colorWanted(isTerm) {
		colours = "colour"
		if opts := lookOf(out, true); opts.Colors256 {
			colours = "256 colours"
		}
	}
	if !isTerm {
		f.text = "stdout is not a terminal; " + colours
		if reason := colourReason(); reason != "by the terminal" {
			f.text += " (" + reason + ")"
		}
		return f
	}
	t := os.Getenv("TERM")
	if t == "" {
		t = "unset"
	}
	f.level, f.text = levelOK, fmt.Sprintf("TERM=%s, %s (%s), %s", t, colours, colourReason(), terminalSize(out))
	return f
}

// colourReason names the setting that decided colour, as colorWanted
// reads them.
func colourReason() string {
	for _, name := range []string{"PYTHON_COLORS", "NO_COLOR", "FORCE_COLOR"} {
		if v := os.Getenv(name); v != "" {
			return name + "=" + v
		}
	}
	return "by the terminal"
}

func terminalSize(f *os.File) string {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return "size unknown"
	}
	return fmt.Sprintf("%dx%d", ws.Col, ws.Row)
}
