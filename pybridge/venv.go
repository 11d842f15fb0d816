//go:build cgo

package pybridge

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// VenvExecutable returns the python executable of the virtualenv in dir,
// for Config.Executable: CPython finds a venv only through the pyvenv.cfg
// next to its executable, never through VIRTUAL_ENV. A venv made for
// another Python minor version than the linked libpython cannot work (its
// packages are built for that version), so that is an error; the caller
// says whether pyaichat exits or starts without the venv.
func VenvExecutable(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("virtualenv %s: %w", dir, err)
	}
	cfgPath := filepath.Join(abs, "pyvenv.cfg")
	version, err := venvVersion(cfgPath)
	if err != nil {
		return "", fmt.Errorf("virtualenv %s: %w", dir, err)
	}
	major, minor := MajorMinor()
	want := fmt.Sprintf("%d.%d", major, minor)
	if version != want && !strings.HasPrefix(version, want+".") {
		return "", fmt.Errorf("virtualenv %s is for Python %s, but pyaichat embeds Python %s (make build PYTHON=%s builds for it)",
			dir, version, want, filepath.Join(abs, "bin", "python3"))
	}
	for _, name := range []string{"python", "python3", "python" + want} {
		exe := filepath.Join(abs, "bin", name)
		if _, err := os.Stat(exe); err == nil {
			return exe, nil
		}
	}
	// The interpreter link is not needed to activate the venv; pyvenv.cfg is.
	return filepath.Join(abs, "bin", "python"), nil
}

// venvVersion reads the Python version a venv was made for from pyvenv.cfg
// ("version" from venv and virtualenv, "version_info" from uv).
func venvVersion(cfgPath string) (string, error) {
	f, err := os.Open(cfgPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "version", "version_info":
			return strings.TrimSpace(value), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s names no Python version", cfgPath)
}
