package app

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pyaichat/pyaichat/agent"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/config"
	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog"
)

const configUsage = `usage: pyaichat config path            print the config file's path
       pyaichat config show [--model NAME] [--base-url URL] [--provider NAME]
                                     the settings in force, each with where it came from
       pyaichat config edit            open the config file in $VISUAL or $EDITOR
`

// runConfig is pyaichat config path|show|edit.
func runConfig(std stdio, args []string) int {
	if len(args) == 0 {
		io.WriteString(std.err, configUsage)
		return exitUsage
	}
	path := xdgPaths().configFile()
	switch args[0] {
	case "path":
		if len(args) > 1 || path == "" {
			return configPathProblem(std, path)
		}
		fmt.Fprintln(std.out, path)
		return 0
	case "show":
		return configShow(std, path, args[1:])
	case "edit":
		if len(args) > 1 {
			std.warn("config edit takes no arguments")
			return exitUsage
		}
		return configEdit(std, path)
	case "-h", "--help", "help":
		io.WriteString(std.out, configUsage)
		return 0
	}
	std.warn(fmt.Sprintf("config: unknown command %q (path, show or edit)", args[0]))
	return exitUsage
}

func configPathProblem(std stdio, path string) int {
	if path == "" {
		std.warn("no config directory: set XDG_CONFIG_HOME or HOME")
		return 1
	}
	std.warn("config path takes no arguments")
	return exitUsage
}

// configShow prints the effective settings, as TOML a user could paste
// into the file, each with a comment saying where it came from; the key
// is masked.
func configShow(std stdio, path string, args []string) int {
	c, err := parseArgs(args)
	switch {
	case err != nil:
		std.warn("config show: " + strings.SplitN(err.Error(), "\n", 2)[0])
		return exitUsage
	case c.script != "" || c.module != "" || len(c.commands) > 0 || c.question != "" || c.venv != "":
		std.warn("config show takes only --model, --base-url and --provider")
		return exitUsage
	}
	set, err := config.Load(path, c.configFlags())
	if err != nil {
		std.warn(err.Error())
		return 1
	}
	fileNote := "# " + path
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fileNote += " (does not exist: every setting is the default or from the environment)"
	}
	fmt.Fprintln(std.out, fileNote)
	fromFile := fileKeys(path)
	for _, s := range shownSettings(set, fromFile) {
		fmt.Fprintf(std.out, "%-14s = %-40s # %s\n", s.key, s.value, s.origin)
	}
	return 0
}

// A setting is one line of config show.
type setting struct{ key, value, origin string }

func shownSettings(set config.Settings, fromFile map[string]bool) []setting {
	cfg, origins := set.Agent, set.Origins
	fileOr := func(key string) string {
		if fromFile[key] {
			return "config file"
		}
		return "default"
	}
	provider := strconv.Quote(cfg.Provider)
	if cfg.Provider == "" {
		provider, origins.Provider = `""`, "none"
	}
	shown := []setting{
		{"provider", provider, origins.Provider},
		{"base_url", strconv.Quote(agent.DisplayURL(cfg.BaseURL)), origins.BaseURL},
		{"model", strconv.Quote(cfg.Model), origins.Model},
		{"api_key", strconv.Quote(maskKey(cfg.APIKey)), origins.APIKey},
		{"share", strconv.Quote(cfg.Share), fileOr("share")},
		{"hide_env", tomlList(cfg.HideEnv), fileOr("hide_env")},
		{"allow_env", tomlList(cfg.AllowEnv), fileOr("allow_env")},
		{"suggest", strconv.FormatBool(!set.REPL.NoSuggest), fileOr("suggest")},
		{"magics", strconv.FormatBool(!set.REPL.NoMagics), fileOr("magics")},
		{"tab", strconv.Quote(tabSetting(set.REPL.TabToggles)), fileOr("tab")},
		{"auto_indent", strconv.FormatBool(autoIndent(set.REPL.AutoIndent)), fileOr("auto_indent")},
		{"log", strconv.FormatBool(!set.Log.Off), fileOr("log")},
		{"log_keep", orDefault(int64(set.Log.Keep), sessionlog.DefaultKeep), fileOr("log_keep")},
		{"log_max_bytes", orDefault(set.Log.MaxBytes, sessionlog.DefaultMaxBytes), fileOr("log_max_bytes")},
		{"log_output", strconv.FormatBool(set.Log.Output), fileOr("log_output")},
		{"context_window", strconv.Itoa(cfg.ContextWindow), windowOrigin(fromFile["context_window"])},
		{"capability_modules", tomlList(set.CapabilityModules), fileOr("capability_modules")},
	}
	if cfg.Priced {
		price := func(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }
		shown = append(shown, setting{"price_in", price(cfg.PriceIn), "config file"}, setting{"price_out", price(cfg.PriceOut), "config file"})
	}
	return shown
}

// windowOrigin says where the context window comes from: the file, or
// (0) the server's model list or the table of known models, at the first
// question.
func windowOrigin(inFile bool) string {
	if inFile {
		return "config file"
	}
	return "default: the server's model list or known models"
}

// orDefault is n, or the session log's default d when n is 0.
func orDefault(n, d int64) string {
	if n <= 0 {
		n = d
	}
	return strconv.FormatInt(n, 10)
}

func tomlList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// maskKey shows enough of a key to tell two apart (its kind prefix and
// last four characters), never enough to use it.
func maskKey(key string) string {
	switch {
	case key == "":
		return ""
	case len(key) < 16:
		return "****"
	}
	prefix := ""
	if i := strings.IndexByte(key, '-'); i > 0 && i <= 8 {
		prefix = key[:i+1]
	}
	return prefix + "****" + key[len(key)-4:]
}

// fileKeys are the top-level keys the config file sets (none when it
// cannot be read; config show has already reported that through
// LoadConfig).
func fileKeys(path string) map[string]bool {
	keys := map[string]bool{}
	data, err := os.ReadFile(path)
	if err != nil {
		return keys
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, _, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if ok && k != "" && !strings.HasPrefix(k, "#") {
			keys[k] = true
		}
	}
	return keys
}

// configTemplate is a new config file: every key, commented out, so that
// editing it starts from what can be said.
const configTemplate = `# pyaichat's settings; flags and environment variables override them.
# (pyaichat config show prints the settings in force and where each came from.)

# provider = "ollama"                  # openai, azure, openrouter, github, groq, anthropic,
#                                      # ollama, llamacpp, vllm, lmstudio
# base_url = "http://localhost:11434/v1"
# model = "qwen3:8b"
# api_key = "sk-..."                   # keep this file private: chmod 600
# share = "redacted"                   # redacted, off or ask
# hide_env = ["MY_TOKEN"]
# allow_env = []
# suggest = true
# log = true
# log_keep = 200                       # session files kept
# log_max_bytes = 16777216
# log_output = false
# capability_modules = ["dbtools"]     # your @pyaichat.capability functions
`

// configEdit opens the config file in the user's editor, making it first
// (0600 in a 0700 directory: it may hold a key), and checks it afterwards.
func configEdit(std stdio, path string) int {
	if path == "" {
		return configPathProblem(std, path)
	}
	if err := createConfig(path); err != nil {
		std.warn(err.Error())
		return 1
	}
	editor := editorCommand()
	cmd := exec.Command("/bin/sh", "-c", editor+` "$1"`, "sh", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = std.in, std.out, std.err
	if err := cmd.Run(); err != nil {
		std.warn(fmt.Sprintf("the editor (%s) failed: %v; %s is unchanged by pyaichat", editor, err, path))
		return 1
	}
	if _, err := config.Load(path, config.Flags{}); err != nil {
		std.warn(err.Error() + " (pyaichat config edit opens it again)")
		return 1
	}
	return 0
}

// editorCommand is $VISUAL, $EDITOR, or the system's choice: a shell
// command that takes the file as its last argument.
func editorCommand() string {
	for _, name := range []string{"VISUAL", "EDITOR"} {
		if v := strings.TrimSpace(os.Getenv(name)); v != "" {
			return v
		}
	}
	for _, name := range []string{"sensible-editor", "editor", "nano"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return "vi"
}

func createConfig(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("making %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("making %s: %w", path, err)
	}
	defer f.Close()
	if _, err := io.WriteString(f, configTemplate); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// tabSetting is the tab key's value.
func tabSetting(toggles bool) string {
	if toggles {
		return "toggle"
	}
	return "complete"
}
