package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	// BurntSushi/toml: the reference Go TOML decoder (TOML 1.0, no
	// dependencies, maintained for a decade); it reports undecoded keys,
	// which lets a typo in config.toml be an error instead of silence.
	"github.com/BurntSushi/toml"

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/llm"
)

// DefaultBaseURL is OpenAI's API; any other base URL is a server that may
// not need a key (Ollama, llama.cpp, vLLM, LM Studio...).
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultModel is used when no flag, variable or file names one.
const DefaultModel = "gpt-4o"

// Config is everything the assistant needs. LoadConfig fills the first
// three from flag > environment > config file > default; the rest are
// bounds with defaults that tests shrink.
type Config struct {
	Model   string
	BaseURL string
	APIKey  string // never printed; String() hides it
	// KeyHint is what a rejected key tells the user to check: the
	// variable the key is read from ("" is OPENAI_API_KEY).
	KeyHint string
	// Source says where Model came from ("flag", "env", "file", "default"),
	// for /model.
	Source string
	// File is the config file LoadConfig read (or would have), where
	// /model NAME --save writes; "" when there is none.
	File string
	// Origins says where the model, base URL, key and provider each came
	// from, and FileHasKey whether the file holds a key (in force or
	// not): pyaichat doctor and config show report them.
	Origins    Origins
	FileHasKey bool
	// Provider is the preset in use ("" for none).
	Provider string

	// Share is what may leave the machine (see privacy.go): ShareRedacted
	// (the default), ShareOff or ShareAsk.
	Share string
	// Confirm is asked under ShareAsk before each tool result is sent;
	// the result goes only if it returns true. It should end early with
	// ctx's error when ctx is cancelled (Ctrl-C). Nil means there is no
	// one to ask, and no result is sent.
	Confirm func(ctx context.Context, o Outgoing) (bool, error)
	// Environ is the environment whose secret-looking values are redacted
	// from what is sent (os.Environ() in pyaichat); HideEnv and AllowEnv
	// are names the user declares secret, or not secret.
	Environ           []string
	HideEnv, AllowEnv []string

	// ContextWindow (tokens) and the prices (US dollars per million
	// tokens, when Priced) are the config file's; the server's model list
	// or a table of known models fill in what it leaves out.
	ContextWindow     int
	PriceIn, PriceOut float64
	Priced            bool

	// Instructions are the user's and the project's instructions files
	// (LoadInstructions), added to the system prompt; InstructionsFile
	// is where the user's would be.
	Instructions     []Instructions
	InstructionsFile string

	// CapabilityModules are the Python modules whose @pyaichat.capability
	// functions become capabilities (capability_modules in config.toml);
	// the composition root imports them, the agent only offers the tools.
	CapabilityModules []string

	// NoMagics makes IPython's line magics at py> (%timeit, !ls) the
	// SyntaxErrors they are in Python (magics = false in config.toml).
	NoMagics bool
	// NoSuggest turns off the inline suggestions at py> (suggest = false
	// in config.toml). It is the REPL's setting, kept here because the
	// file is read here.
	NoSuggest bool

	MaxSteps        int           // tool-call rounds per question (8)
	MaxCallsPerStep int           // tool calls run from one response (8)
	QuestionTimeout time.Duration // wall clock for one question, all steps (3 min)
	ToolResultBytes int           // cap on each tool result sent to the model (4000)
	HistoryTokens   int           // budget for the conversation sent (12000, estimated)
	ContextBytes    int           // budget for the automatic session context (1500)

	// The provider's time and retry bounds, with its defaults.
	llm.Limits

	// MoreHelp is added to /help: the lines of commands that whoever
	// wraps the Session handles itself (cmd/pyaichat's /save).
	MoreHelp string

	// Events, when set, is told of everything a question does as it
	// happens (events.go), for the session log and --json; it is called
	// on the question's goroutine and should return quickly.
	Events func(event.Event)
	// View makes the view of each question, which shows its events as
	// they happen and draws around the question under ShareAsk
	// (agent/view on a terminal or a pipe); nil shows nothing.
	View event.NewView

	// The session log, which the agent does not write (cmd/pyaichat does):
	// NoLog turns it off (log = false), LogKeep is how many session files
	// are kept and LogMaxBytes how large one may grow (0: the defaults);
	// LogOutput keeps what py> inputs print in it (log_output = true).
	NoLog       bool
	LogKeep     int
	LogMaxBytes int64
	LogOutput   bool

	// HTTPClient replaces the default client (tests); nil builds one with
	// ConnectTimeout.
	HTTPClient *http.Client
}

// String never shows the key, so a Config can be logged or printed safely.
func (c Config) String() string {
	key := "unset"
	if c.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("model=%s base_url=%s api_key=%s", c.Model, llm.DisplayURL(c.BaseURL), key)
}

// GoString keeps %#v from printing the key too.
func (c Config) GoString() string { return "agent.Config{" + c.String() + "}" }

// Configured reports whether a question can be sent: a key, or a base URL
// that is not OpenAI's (local servers need none).
func (c Config) Configured() bool {
	return c.APIKey != "" || !isOpenAI(c.BaseURL)
}

func isOpenAI(base string) bool {
	return strings.TrimRight(base, "/") == DefaultBaseURL
}

// withDefaults fills every zero bound.
func (c Config) withDefaults() Config {
	def := func(p *time.Duration, d time.Duration) {
		if *p <= 0 {
			*p = d
		}
	}
	defi := func(p *int, d int) {
		if *p <= 0 {
			*p = d
		}
	}
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Share == "" {
		c.Share = ShareRedacted
	}
	defi(&c.MaxSteps, 8)
	defi(&c.MaxCallsPerStep, 8)
	def(&c.QuestionTimeout, 3*time.Minute)
	defi(&c.ToolResultBytes, 4000)
	defi(&c.HistoryTokens, 12000)
	defi(&c.ContextBytes, 1500)
	c.Limits = c.Limits.WithDefaults()
	return c
}

// fileConfig is config.toml. The lower-case keys are the natural TOML
// spelling; the upper-case ones let people paste their environment lines.
type fileConfig struct {
	Provider   string   `toml:"provider"`
	Model      string   `toml:"model"`
	BaseURL    string   `toml:"base_url"`
	APIKey     string   `toml:"api_key"`
	EnvModel   string   `toml:"PYAICHAT_MODEL"`
	EnvBaseURL string   `toml:"OPENAI_BASE_URL"`
	EnvAPIKey  string   `toml:"OPENAI_API_KEY"`
	Share      string   `toml:"share"`
	HideEnv    []string `toml:"hide_env"`
	AllowEnv   []string `toml:"allow_env"`
	Suggest    *bool    `toml:"suggest"`
	Magics     *bool    `toml:"magics"`
	// The session log's (cmd/pyaichat), read here with the rest of the
	// file so that one place knows its keys.
	Log         *bool `toml:"log"`
	LogKeep     int   `toml:"log_keep"`
	LogMaxBytes int64 `toml:"log_max_bytes"`
	LogOutput   bool  `toml:"log_output"`
	// The model's context window in tokens and its prices in US dollars
	// per million tokens, where the server's model list does not say.
	ContextWindow int      `toml:"context_window"`
	PriceIn       *float64 `toml:"price_in"`
	PriceOut      *float64 `toml:"price_out"`
	// The user's capability modules (cmd/pyaichat imports them).
	CapabilityModules []string `toml:"capability_modules"`
}

// Origins are where LoadConfig found each setting, in words a user can act
// on: "flag --model", "env OPENAI_API_KEY", "config file", "preset ollama",
// "default" (or "none" for a key that is not set).
type Origins struct {
	Model, BaseURL, APIKey, Provider string
}

// pick is the first of a flag, an environment variable and the config
// file's values that is set, and where it came from.
func pick(flagName, flag, env string, file ...string) (string, string) {
	if flag != "" {
		return flag, "flag " + flagName
	}
	if v := strings.TrimSpace(os.Getenv(env)); v != "" {
		return v, "env " + env
	}
	for _, f := range file {
		if f != "" {
			return f, "config file"
		}
	}
	return "", "default"
}

// sourceWord is an origin as /model has always said it: flag, env, file
// or default.
func sourceWord(origin string) string {
	word, _, _ := strings.Cut(origin, " ")
	if word == "config" {
		return "file"
	}
	return word
}

// LoadConfig resolves model, base URL and key from the config file at
// path (none when path is ""): flag > environment
// (PYAICHAT_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY) > config file > default.
// A provider (--provider, $PYAICHAT_PROVIDER or the file's provider key)
// gives the base URL, which only --base-url overrides, and the variable
// the key is read from. A missing file is fine; an unreadable or invalid
// one is an error naming it.
func LoadConfig(path, flagModel, flagBaseURL, flagProvider string) (Config, error) {
	var fc fileConfig
	if path != "" {
		data, err := readConfigFile(path)
		var md toml.MetaData
		if err == nil {
			md, err = toml.Decode(string(data), &fc)
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return Config{}, fmt.Errorf("reading %s: %w", path, err)
		default:
			if und := md.Undecoded(); len(und) > 0 {
				return Config{}, fmt.Errorf("%s: unknown key %q (known: provider, model, base_url, api_key, share, hide_env, allow_env, suggest, magics, log, log_keep, log_max_bytes, log_output, context_window, price_in, price_out, capability_modules)", path, und[0].String())
			}
		}
	}
	var c Config
	c.Model, c.Origins.Model = pick("--model", flagModel, "PYAICHAT_MODEL", fc.Model, fc.EnvModel)
	c.Source = sourceWord(c.Origins.Model)
	c.FileHasKey = fc.APIKey != "" || fc.EnvAPIKey != ""
	if name, origin := pick("--provider", flagProvider, "PYAICHAT_PROVIDER", fc.Provider); name != "" {
		c.Origins.Provider = origin
		if err := c.usePreset(name, flagBaseURL, fc.APIKey); err != nil {
			return Config{}, err
		}
	} else {
		c.Origins.Provider = "none"
		c.BaseURL, c.Origins.BaseURL = pick("--base-url", flagBaseURL, "OPENAI_BASE_URL", fc.BaseURL, fc.EnvBaseURL)
		c.APIKey, c.Origins.APIKey = pick("", "", "OPENAI_API_KEY", fc.APIKey, fc.EnvAPIKey)
	}
	if c.APIKey == "" {
		c.Origins.APIKey = "none"
	}
	c.Share, c.HideEnv, c.AllowEnv = fc.Share, fc.HideEnv, fc.AllowEnv
	c.NoSuggest = fc.Suggest != nil && !*fc.Suggest
	c.NoMagics = fc.Magics != nil && !*fc.Magics
	if err := c.setSpendLimits(path, fc); err != nil {
		return Config{}, err
	}
	c.CapabilityModules = fc.CapabilityModules
	c.NoLog = fc.Log != nil && !*fc.Log
	c.LogKeep, c.LogMaxBytes, c.LogOutput = fc.LogKeep, fc.LogMaxBytes, fc.LogOutput
	c = c.withDefaults()
	if err := checkShare(c.Share); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := llm.CheckBaseURL(c.BaseURL); err != nil {
		return Config{}, errors.New(llm.RedactKey(err.Error(), c.APIKey))
	}
	if err := llm.CheckKey(c.APIKey, c.KeyHint); err != nil {
		return Config{}, err
	}
	c.File = path
	return c, nil
}

// usePreset fills the base URL and key from the provider name: its API
// unless flagBaseURL names another, and its key variable, or the file's
// api_key (none for a server on this machine).
func (c *Config) usePreset(name, flagBaseURL, fileKey string) error {
	p, err := lookupProvider(name)
	if err != nil {
		return err
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	c.Provider = p.Name
	c.BaseURL, c.Origins.BaseURL = flagBaseURL, "flag --base-url"
	if c.BaseURL == "" {
		c.Origins.BaseURL = "preset " + p.Name
		if c.BaseURL, err = p.baseURL(c.Model); err != nil {
			return err
		}
	}
	// The preset's own variable, not OPENAI_API_KEY, is what to check
	// when the key is rejected.
	c.KeyHint = p.KeyVar
	if p.KeyVar == "" {
		c.KeyHint = fmt.Sprintf("the server's settings: the %s preset sends no key (--base-url with OPENAI_API_KEY sends one)", p.Name)
	}
	if p.KeyVar != "" {
		c.APIKey, c.Origins.APIKey = pick("", "", p.KeyVar, fileKey)
	}
	return nil
}
