package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pyaichat/pyaichat/pybridge"
)

// sysPathKey names what decides an interactive session's sys.path, as far
// as Go can tell before Python runs: the interpreter, the virtualenv,
// python3's options and arguments, the PYTHON* variables, the working
// directory and whether the user's site directory exists. The entry
// points' cache keeps the sys.path of the last start and its key, so that
// a start with the same key knows without Python whether anything
// registers a capability (capabilities.Options.SysPathKey). It is ""
// (unknown) when setup code runs before the first prompt (-c, -m, FILE,
// PYTHONSTARTUP), which may change sys.path as only Python sees.
func sysPathKey(c cmdline) string {
	if len(c.commands) > 0 || c.module != "" || c.script != "" || (os.Getenv("PYTHONSTARTUP") != "" && !c.ignoreEnv) {
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PYTHON") || strings.HasPrefix(kv, "VIRTUAL_ENV=") {
			env = append(env, kv)
		}
	}
	slices.Sort(env)
	parts := append([]string{pybridge.RealExecutable(), pybridge.Version(), c.venv, wd}, c.pythonArgs()...)
	for _, dir := range userSiteDirs() {
		_, err := os.Stat(dir)
		parts = append(parts, dir, fmt.Sprint(err == nil))
	}
	h := sha256.New()
	for _, p := range append(parts, env...) {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// userSiteDirs are where Python's site module may look for the user's
// packages (site.getusersitepackages(): the first on Linux, the second
// for a macOS framework build), which it puts on sys.path only when the
// directory exists.
func userSiteDirs() []string {
	home, _ := os.UserHomeDir()
	major, minor := pybridge.MajorMinor()
	version := fmt.Sprintf("%d.%d", major, minor)
	posix := filepath.Join(home, ".local")
	framework := filepath.Join(home, "Library", "Python", version)
	if base := os.Getenv("PYTHONUSERBASE"); base != "" {
		posix, framework = base, base
	}
	return []string{
		filepath.Join(posix, "lib", "python"+version, "site-packages"),
		filepath.Join(framework, "lib", "python", "site-packages"),
	}
}
