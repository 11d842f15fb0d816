package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/deps.sh skips a Go too old to fetch the toolchain go.mod names
// (Debian 12's golang-go is 1.19) even when it comes first on PATH.
func TestDepsSkipsAnOldGo(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "go")
	script := "#!/bin/sh\ncase \"$1 $2\" in\n'env GOVERSION') echo go1.19.8 ;;\n*) echo 'go version go1.19.8 linux/amd64' ;;\nesac\n"
	if err := os.WriteFile(old, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("../scripts/deps.sh", "--which-go")
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("deps.sh --which-go: %v\n%s", err, out)
	}
	chosen := strings.TrimSpace(string(out))
	if chosen == old {
		t.Fatalf("deps.sh chose the Go 1.19 first on PATH")
	}
	v, err := exec.Command(chosen, "env", "GOVERSION").Output()
	if err != nil || !strings.HasPrefix(string(v), "go1.") {
		t.Fatalf("%s: %q %v", chosen, v, err)
	}
	// Only the old one: a one-line reason, and failure.
	cmd = exec.Command("../scripts/deps.sh", "--which-go")
	cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + dir, "DEPS_GO_DIRS="}
	out, err = cmd.CombinedOutput()
	if err == nil || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 || !strings.Contains(string(out), "1.21") {
		t.Errorf("with only Go 1.19: %v, %q; want a one-line failure", err, out)
	}
}

// With a go older than go.mod's, scripts/deps.sh says in one line that it
// downloads the toolchain go.mod names, before the go command does it, and
// then which Go builds pyaichat; once the toolchain is in the module cache,
// only the latter.
func TestDepsSaysWhichGoAndWhenItDownloads(t *testing.T) {
	modText, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, line := range strings.Split(string(modText), "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			want = strings.TrimSpace(v)
		}
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "go")
	// A Go 1.23 that records being asked to switch (GOTOOLCHAIN=auto) and
	// then has the toolchain in its module cache.
	script := `#!/bin/sh
case "$1 $2" in
'env GOVERSION') echo go1.23.4 ;;
'env GOMODCACHE') echo "` + dir + `/mod" ;;
'env GOOS') echo linux ;;
'env GOARCH') echo amd64 ;;
'version '*)
  if [ "$GOTOOLCHAIN" = auto ]; then
    echo fetched >>"` + dir + `/log"
    mkdir -p "` + dir + `/mod/golang.org/toolchain@v0.0.1-go` + want + `.linux-amd64"
  fi
  echo "go version go1.23.4 linux/amd64" ;;
esac
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func() string {
		cmd := exec.Command("../scripts/deps.sh", "--toolchain")
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + dir, "DEPS_GO_DIRS="}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("deps.sh --toolchain: %v\n%s", err, out)
		}
		return string(out)
	}
	builtBy := "deps: Go " + want + ", the toolchain go.mod names, run by " + fake + " (1.23.4)\n"
	first := run()
	announce := "deps: go.mod needs " + want + "; " + fake + " (1.23.4) downloads that toolchain once from the Go module proxy, now\n"
	if first != announce+builtBy {
		t.Errorf("first run:\n%s\nwant\n%s%s", first, announce, builtBy)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "log")); string(log) != "fetched\n" {
		t.Errorf("the fake go was asked to switch %q times, want once", log)
	}
	if second := run(); second != builtBy {
		t.Errorf("with the toolchain cached:\n%s\nwant\n%s", second, builtBy)
	}
}
