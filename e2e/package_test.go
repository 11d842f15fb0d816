package e2e

import (
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// packageScript runs scripts/package.sh with args on the binary under
// test and returns its stdout.
func packageScript(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("scripts/package.sh", args...)
	cmd.Dir = ".." // the module root
	cmd.Env = append(os.Environ(), "PYAICHAT_BIN="+binary)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/package.sh %v: %v\n%s", args, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// make deb's package: the metadata and contents check-deb promises, a
// Depends line of run-time packages only (the embedded Python's stdlib
// package among them), and a binary that runs Python once unpacked.
func TestDebPackage(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	deb := packageScript(t, "deb", out)
	if filepath.Dir(deb) != out || !strings.HasPrefix(filepath.Base(deb), "pyaichat_") || !strings.HasSuffix(deb, ".deb") {
		t.Fatalf("package.sh deb wrote %q, want pyaichat_VERSION_ARCH.deb in %s", deb, out)
	}
	packageScript(t, "check-deb", deb)

	field := func(name string) string {
		v, err := exec.Command("dpkg-deb", "-f", deb, name).Output()
		if err != nil {
			t.Fatalf("dpkg-deb -f %s: %v", name, err)
		}
		return strings.TrimSpace(string(v))
	}
	major, minor := pythonMajorMinor(t)
	depends := strings.Split(field("Depends"), ", ")
	want := "libpython" + major + "." + minor + "-stdlib"
	hasStdlib, hasLibc := false, false
	for _, d := range depends {
		name := strings.Fields(d)[0]
		hasStdlib = hasStdlib || name == want
		hasLibc = hasLibc || strings.HasPrefix(d, "libc6 (>= 2.")
		if strings.HasSuffix(name, "-dev") || strings.HasPrefix(name, "golang") || name == "gcc" {
			t.Errorf("Depends has a build tool: %s", d)
		}
	}
	if !hasStdlib || !hasLibc {
		t.Errorf("Depends: %v, want %s and libc6 (>= 2.x) among them", depends, want)
	}
	if got := field("Recommends"); got != "python"+major+"."+minor {
		t.Errorf("Recommends: %q, want the embedded version's interpreter", got)
	}

	root := t.TempDir()
	if out, err := exec.Command("dpkg-deb", "-x", deb, root).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb -x: %v\n%s", err, out)
	}
	r := runWith(t, t.TempDir(), filepath.Join(root, "usr", "bin", "pyaichat"), []string{"-q", "-c", "print(6*7)"}, "")
	if r.status != 0 || r.stdout != "42\n" {
		t.Errorf("the packaged pyaichat -c 'print(6*7)': status %d stdout %q stderr %q", r.status, r.stdout, r.stderr)
	}
	man, err := os.Open(filepath.Join(root, "usr", "share", "man", "man1", "pyaichat.1.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer man.Close()
	zr, err := gzip.NewReader(man)
	if err != nil {
		t.Fatalf("the man page is not gzipped: %v", err)
	}
	page, err := io.ReadAll(zr)
	if err != nil || !strings.HasPrefix(string(page), ".TH PYAICHAT 1 ") || !strings.Contains(string(page), "pyaichat \\- a Python REPL") {
		t.Errorf("the packaged man page (%v) starts %q", err, string(page[:min(len(page), 80)]))
	}
}

// make install lays out the same files under PREFIX in DESTDIR, and make
// uninstall takes them away again.
func TestInstallUninstall(t *testing.T) {
	t.Parallel()
	dest := t.TempDir()
	packageScript(t, "install", dest, "/opt/pyaichat")
	prefix := filepath.Join(dest, "opt", "pyaichat")
	for _, f := range []string{"bin/pyaichat", "share/man/man1/pyaichat.1.gz", "share/bash-completion/completions/pyaichat",
		"share/zsh/vendor-completions/_pyaichat", "share/fish/vendor_completions.d/pyaichat.fish",
		"share/doc/pyaichat/copyright", "share/doc/pyaichat/licenses/cpython/LICENSE.txt"} {
		if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
			t.Errorf("make install: %v", err)
		}
	}
	packageScript(t, "uninstall", dest, "/opt/pyaichat")
	var left []string
	filepath.Walk(dest, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			left = append(left, path)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("make uninstall left %v", left)
	}
}

// pythonMajorMinor is the embedded Python's version, as "3" and "11".
func pythonMajorMinor(t *testing.T) (string, string) {
	t.Helper()
	v := strings.Split(pythonVersion(t), ".")
	return v[0], v[1]
}
