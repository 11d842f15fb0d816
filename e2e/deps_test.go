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
