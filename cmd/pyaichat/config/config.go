// Package config decides pyaichat's settings: it alone reads the flags
// that choose the model, the environment, the config file
// ($XDG_CONFIG_HOME/pyaichat/config.toml), the provider presets and the
// instructions files, and it alone writes the config file. It yields the
// agent's options, the REPL's and the session log's.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	// BurntSushi/toml: the reference Go TOML decoder (TOML 1.0, no
	// dependencies, maintained for a decade); it reports undecoded keys,
	// which lets a typo in config.toml be an error instead of silence.
	"github.com/BurntSushi/toml"

	"github.com/pyaichat/pyaichat/agent"
)

// Settings are what the flags, the environment, the config file and the
// presets decide, for each part of pyaichat.
type Settings struct {
	// Agent holds the model, its server and key, what may be shared and
	// the spend limits; its hooks and bounds are the caller's to set.
	Agent agent.Config
	REPL  REPL
	Log   Log
	// CapabilityModules are the Python modules whose @pyaichat.capability
	// functions become capabilities (capability_modules).
	CapabilityModules []string
	// File is the config file read (or that would have been), where
	// /model NAME --save writes; "" when there is none.
	File string
	// Origins says where the model, base URL, key and provider each came
	// from, and FileHasKey whether the file holds a key (in force or
	// not): pyaichat doctor and config show report them.
	Origins    Origins
	FileHasKey bool
}

// REPL is what the config file sets for py>.
type REPL struct {
	// NoSuggest turns off the inline suggestions (suggest = false).
	NoSuggest bool
	// NoMagics makes IPython's line magics (%timeit, !ls) the
	// SyntaxErrors they are in Python (magics = false).
	NoMagics bool
	// TabToggles makes TAB switch modes everywhere outside a block,
	// never completing (tab = "toggle").
	TabToggles bool
	// AutoIndent is auto_indent's value, nil where the file does not set
	// it (off).
	AutoIndent *bool
	// EditingMode is editing_mode's value: "emacs", "vi", or "" where the
	// file does not set it (readline's inputrc then says).
	EditingMode string
}

// Log is what the config file sets for the session log: Off turns it off
// (log = false), Keep is how many session files are kept and MaxBytes how
// large one may grow (0: the log's defaults); Output keeps what py> inputs
// print in it (log_output = true).
type Log struct {
	Off      bool
	Keep     int
	MaxBytes int64
	Output   bool
}

// Flags are the command-line flags that choose the model and its server.
type Flags struct {
	Model, BaseURL, Provider string
}

// Origins are where Load found each setting, in words a user can act on:
// "flag --model", "env OPENAI_API_KEY", "config file", "preset ollama",
// "default" (or "none" for a key that is not set).
type Origins struct {
	Model, BaseURL, APIKey, Provider string
}

// fileConfig is config.toml. The lower-case keys are the natural TOML
// spelling; the upper-case ones let people paste their environment lines.
type fileConfig struct {
	Provider    string   `toml:"provider"`
	Model       string   `toml:"model"`
	BaseURL     string   `toml:"base_url"`
	APIKey      string   `toml:"api_key"`
	EnvModel    string   `toml:"PYAICHAT_MODEL"`
	EnvBaseURL  string   `toml:"OPENAI_BASE_URL"`
	EnvAPIKey   string   `toml:"OPENAI_API_KEY"`
	Share       string   `toml:"share"`
	HideEnv     []string `toml:"hide_env"`
	AllowEnv    []string `toml:"allow_env"`
	Suggest     *bool    `toml:"suggest"`
	Magics      *bool    `toml:"magics"`
	Tab         string   `toml:"tab"`
	AutoIndent  *bool    `toml:"auto_indent"`
	EditingMode string   `toml:"editing_mode"`
	Log         *bool    `toml:"log"`
	LogKeep     int      `toml:"log_keep"`
	LogMaxBytes int64    `toml:"log_max_bytes"`
	LogOutput   bool     `toml:"log_output"`
	// The model's context window in tokens and its prices in US dollars
	// per million tokens, where the server's model list does not say.
	ContextWindow int      `toml:"context_window"`
	PriceIn       *float64 `toml:"price_in"`
	PriceOut      *float64 `toml:"price_out"`
	// The user's capability modules.
	CapabilityModules []string `toml:"capability_modules"`
}

// replSettings are the file's settings for py>.
func replSettings(path string, fc fileConfig) (REPL, error) {
	if fc.Tab != "" && fc.Tab != "toggle" && fc.Tab != "complete" {
		return REPL{}, fmt.Errorf("%s: tab = %q, want \"complete\" or \"toggle\"", path, fc.Tab)
	}
	if fc.EditingMode != "" && fc.EditingMode != "emacs" && fc.EditingMode != "vi" {
		return REPL{}, fmt.Errorf("%s: editing_mode = %q, want \"emacs\" or \"vi\"", path, fc.EditingMode)
	}
	return REPL{
		NoSuggest: fc.Suggest != nil && !*fc.Suggest, NoMagics: fc.Magics != nil && !*fc.Magics,
		TabToggles: fc.Tab == "toggle", AutoIndent: fc.AutoIndent, EditingMode: fc.EditingMode,
	}, nil
}

// Load resolves the settings from the config file at path (none when path
// is ""): flag > environment (PYAICHAT_MODEL, OPENAI_BASE_URL,
// OPENAI_API_KEY) > config file > default. A provider (--provider,
// $PYAICHAT_PROVIDER or the file's provider key) gives the base URL, which
// only --base-url overrides, and the variable the key is read from. A
// missing file is fine; an unreadable or invalid one is an error naming it.
func Load(path string, f Flags) (Settings, error) {
	fc, err := readFileConfig(path)
	if err != nil {
		return Settings{}, err
	}
	s := Settings{File: path, FileHasKey: fc.APIKey != "" || fc.EnvAPIKey != ""}
	c := &s.Agent
	c.Model, s.Origins.Model = pick("--model", f.Model, "PYAICHAT_MODEL", fc.Model, fc.EnvModel)
	c.Source = sourceWord(s.Origins.Model)
	if name, origin := pick("--provider", f.Provider, "PYAICHAT_PROVIDER", fc.Provider); name != "" {
		s.Origins.Provider = origin
		if err := s.usePreset(name, f.BaseURL, fc.APIKey); err != nil {
			return Settings{}, err
		}
	} else {
		s.Origins.Provider = "none"
		c.BaseURL, s.Origins.BaseURL = pick("--base-url", f.BaseURL, "OPENAI_BASE_URL", fc.BaseURL, fc.EnvBaseURL)
		c.APIKey, s.Origins.APIKey = pick("", "", "OPENAI_API_KEY", fc.APIKey, fc.EnvAPIKey)
	}
	if c.APIKey == "" {
		s.Origins.APIKey = "none"
	}
	c.Share, c.HideEnv, c.AllowEnv = fc.Share, fc.HideEnv, fc.AllowEnv
	if err := setSpendLimits(c, path, fc); err != nil {
		return Settings{}, err
	}
	if s.REPL, err = replSettings(path, fc); err != nil {
		return Settings{}, err
	}
	s.Log = Log{Off: fc.Log != nil && !*fc.Log, Keep: fc.LogKeep, MaxBytes: fc.LogMaxBytes, Output: fc.LogOutput}
	s.CapabilityModules = fc.CapabilityModules
	if c.Share != "" {
		if err := agent.CheckShare(c.Share); err != nil {
			return Settings{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	if s.Agent, err = s.Agent.Check(); err != nil {
		return Settings{}, err
	}
	if path != "" {
		s.Agent.SaveModel = func(name string) (string, error) { return path, SaveModel(path, name) }
	}
	return s, nil
}

// readFileConfig reads and decodes the config file; a missing one is
// empty, and an unknown key is an error that names the known ones.
func readFileConfig(path string) (fileConfig, error) {
	var fc fileConfig
	if path == "" {
		return fc, nil
	}
	data, err := readFile(path)
	var md toml.MetaData
	if err == nil {
		md, err = toml.Decode(string(data), &fc)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fileConfig{}, nil
	case err != nil:
		return fileConfig{}, fmt.Errorf("reading %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return fileConfig{}, fmt.Errorf("%s: unknown key %q (known: provider, model, base_url, api_key, share, hide_env, allow_env, suggest, magics, tab, auto_indent, editing_mode, log, log_keep, log_max_bytes, log_output, context_window, price_in, price_out, capability_modules)", path, und[0].String())
	}
	return fc, nil
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

// usePreset fills the base URL and key from the provider name: its API
// unless flagBaseURL names another, and its key variable, or the file's
// api_key (none for a server on this machine).
func (s *Settings) usePreset(name, flagBaseURL, fileKey string) error {
	p, err := lookupProvider(name)
	if err != nil {
		return err
	}
	c := &s.Agent
	if c.Model == "" {
		c.Model = agent.DefaultModel
	}
	c.Provider, c.Local = p.Name, p.KeyVar == ""
	c.BaseURL, s.Origins.BaseURL = flagBaseURL, "flag --base-url"
	if c.BaseURL == "" {
		s.Origins.BaseURL = "preset " + p.Name
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
		c.APIKey, s.Origins.APIKey = pick("", "", p.KeyVar, fileKey)
	}
	return nil
}

// setSpendLimits takes the config file's context window and prices,
// refusing values that cannot be meant.
func setSpendLimits(c *agent.Config, path string, fc fileConfig) error {
	if fc.ContextWindow < 0 {
		return fmt.Errorf("%s: context_window = %d, want a number of tokens", path, fc.ContextWindow)
	}
	c.ContextWindow = fc.ContextWindow
	if (fc.PriceIn == nil) != (fc.PriceOut == nil) {
		return fmt.Errorf("%s: price_in and price_out go together (US dollars per million tokens)", path)
	}
	if fc.PriceIn != nil {
		if *fc.PriceIn < 0 || *fc.PriceOut < 0 {
			return fmt.Errorf("%s: price_in and price_out are US dollars per million tokens, not negative", path)
		}
		c.PriceIn, c.PriceOut, c.Priced = *fc.PriceIn, *fc.PriceOut, true
	}
	return nil
}
