package app

import (
	"os"
	"path/filepath"
)

// paths are the directories pyaichat keeps its files in, by the XDG base
// directory specification on every OS: a variable that holds an absolute
// path, or its default under the home directory. "" when there is neither.
type paths struct {
	config string // config.toml: $XDG_CONFIG_HOME/pyaichat, ~/.config/pyaichat
	state  string // history: $XDG_STATE_HOME/pyaichat, ~/.local/state/pyaichat
	cache  string // compiled helpers: $XDG_CACHE_HOME/pyaichat, ~/.cache/pyaichat
}

func xdgPaths() paths {
	return paths{
		config: xdgDir("XDG_CONFIG_HOME", ".config"),
		state:  xdgDir("XDG_STATE_HOME", ".local/state"),
		cache:  xdgDir("XDG_CACHE_HOME", ".cache"),
	}
}

func xdgDir(env, underHome string) string {
	if d := os.Getenv(env); filepath.IsAbs(d) {
		return filepath.Join(d, "pyaichat")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, underHome, "pyaichat")
}

// entryPointCache is where the capabilities keep which directories hold
// packages registering user capabilities, or "" without a cache directory.
func entryPointCache() string {
	if d := xdgPaths().cache; d != "" {
		return filepath.Join(d, "entry-points.json")
	}
	return ""
}

// instructionsFile is the user's instructions for the assistant, or ""
// when there is no config directory.
func (p paths) instructionsFile() string {
	if p.config == "" {
		return ""
	}
	return filepath.Join(p.config, "instructions.md")
}

// configFile is pyaichat's config.toml, or "" when there is no config
// directory.
func (p paths) configFile() string {
	if p.config == "" {
		return ""
	}
	return filepath.Join(p.config, "config.toml")
}
