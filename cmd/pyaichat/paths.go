package main

import (
	"os"
	"path/filepath"
)

// paths are the directories pyaichat keeps its files in, by the XDG base
// directory specification on every OS: a variable that holds an absolute
// path, or its default under the home directory. "" when there is neither.
type paths struct {
	state string // history: $XDG_STATE_HOME/pyaichat, ~/.local/state/pyaichat
	cache string // compiled helpers: $XDG_CACHE_HOME/pyaichat, ~/.cache/pyaichat
}

func xdgPaths() paths {
	return paths{
		state: xdgDir("XDG_STATE_HOME", ".local/state"),
		cache: xdgDir("XDG_CACHE_HOME", ".cache"),
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
