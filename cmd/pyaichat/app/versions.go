package app

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/pyaichat/pyaichat/pybridge"
)

// printVersion is -V (one line, as python3 -V) or, with full (--version,
// -VV), also the embedded Python's build and where its library lives.
func printVersion(w io.Writer, full bool) {
	if !full {
		fmt.Fprintf(w, "pyaichat %s (Python %s)\n", version, strings.Fields(pybridge.Version())[0])
		return
	}
	fmt.Fprintf(w, "pyaichat %s\n", version)
	fmt.Fprintf(w, "Python %s\n", pybridge.Version())
	if lib := pybridge.Library(); lib != "" {
		fmt.Fprintf(w, "libpython: %s (shared library)\n", lib)
	} else {
		fmt.Fprintln(w, "libpython: linked into pyaichat (static)")
	}
	if exe := pybridge.RealExecutable(); exe != "" {
		fmt.Fprintf(w, "interpreter: %s\n", exe)
	}
}

// pythonMismatch says, in one line, when the python3 a user runs is not the
// Python pyaichat embeds (their packages would be missing), with the
// command that builds pyaichat for it; "" when they agree or when that
// cannot be told without running it (which would slow every start).
func pythonMismatch() string {
	path, err := exec.LookPath("python3")
	if err != nil {
		return ""
	}
	theirs := pythonVersionOf(path)
	if theirs == "" {
		return ""
	}
	major, minor := pybridge.MajorMinor()
	ours := fmt.Sprintf("%d.%d", major, minor)
	if theirs == ours {
		return ""
	}
	return fmt.Sprintf("python3 on PATH (%s) is Python %s, but pyaichat embeds Python %s, so that one's packages are not here; make build PYTHON=$(command -v python%s) builds pyaichat for it",
		path, theirs, ours, theirs)
}

var (
	minorName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^python(3\.\d+)$`) })
	minorVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(3\.\d+)`) })
)

// pythonVersionOf is the major.minor of the python3 at path, read from
// names and files only: the name its links lead to (python3.12), the
// pyvenv.cfg of a virtualenv, or pyenv's version files for its shim.
func pythonVersionOf(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		if m := minorName().FindStringSubmatch(filepath.Base(real)); m != nil {
			return m[1]
		}
	}
	dir := filepath.Dir(path)
	if v := versionIn(filepath.Join(dir, "..", "pyvenv.cfg"), "version"); v != "" {
		return v
	}
	if filepath.Base(dir) == "shims" {
		return pyenvVersion(filepath.Dir(dir))
	}
	return ""
}

// pyenvVersion is the version pyenv's shims run: $PYENV_VERSION, the
// nearest .python-version, or root's version file.
func pyenvVersion(root string) string {
	if v := minorVersion().FindString(os.Getenv("PYENV_VERSION")); v != "" {
		return v
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if v := firstLineVersion(filepath.Join(d, ".python-version")); v != "" {
				return v
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return firstLineVersion(filepath.Join(root, "version"))
}

// firstLineVersion reads the major.minor a file (.python-version) names
// on its first line.
func firstLineVersion(path string) string {
	return scanVersion(path, func(line string) (string, bool) {
		return minorVersion().FindString(strings.TrimSpace(line)), true
	})
}

// versionIn reads key's major.minor from a key = value file (pyvenv.cfg).
func versionIn(path, key string) string {
	return scanVersion(path, func(line string) (string, bool) {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == key {
			return minorVersion().FindString(strings.TrimSpace(v)), true
		}
		return "", false
	})
}

// scanVersion reads the file at path up to the first line that holds
// its version for line (ok), and returns that; "" when no line does or
// the file cannot be read.
func scanVersion(path string, line func(string) (version string, ok bool)) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := line(sc.Text()); ok {
			return v
		}
	}
	return ""
}
