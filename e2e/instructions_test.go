package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
)

// askIn runs pyaichat -p against srv with home as $HOME, in dir, and
// returns the system message of the one request and pyaichat's stderr.
func askIn(t *testing.T, home, dir string, args ...string) (system, stderr string) {
	t.Helper()
	srv := fakemodel.New(t, fakemodel.Reply{Text: "ok"})
	cmd := exec.Command(binary, append([]string{"--base-url", srv.URL, "--model", "m", "-p", "hello?"}, args...)...)
	cmd.Env, cmd.Dir = testEnv(home, ""), dir
	var errb strings.Builder
	cmd.Stdin, cmd.Stderr = strings.NewReader(""), &errb
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("%v\n%s%s", err, out, errb.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1\n%s", len(reqs), errb.String())
	}
	var body struct {
		Messages []struct{ Role, Content string }
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil || len(body.Messages) == 0 || body.Messages[0].Role != "system" {
		t.Fatalf("request %s: %v", reqs[0].Body, err)
	}
	return body.Messages[0].Content, errb.String()
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The user's instructions file and the project's .pyaichat.md (found
// from a subdirectory up to the repository's root) go into the system
// message, filtered for secrets; --no-instructions leaves them out; a file
// that cannot be read is one line, and the other still counts.
func TestInstructionsInTheSystemMessage(t *testing.T) {
	t.Parallel()
	home, repo := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, ".config", "pyaichat", "instructions.md"), "Answer in German.\n")
	writeFile(t, filepath.Join(repo, ".pyaichat.md"), "We use polars, not pandas. Our key is "+fakeAWSID+".\n")
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(repo, "src", "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}

	system, _ := askIn(t, home, sub)
	user, project := strings.Index(system, "Answer in German."), strings.Index(system, "We use polars, not pandas.")
	if user < 0 || project < user {
		t.Errorf("the system message lacks the instructions, in order:\n%s", system)
	}
	if strings.Contains(system, fakeAWSID) || !strings.Contains(system, "<redacted: AWS access key") {
		t.Errorf("the project's secret was not filtered:\n%s", system)
	}

	system, _ = askIn(t, home, sub, "--no-instructions")
	if strings.Contains(system, "German") || strings.Contains(system, "polars") {
		t.Errorf("--no-instructions sent them:\n%s", system)
	}

	// Outside the repository the project's file is not looked for above.
	system, _ = askIn(t, home, t.TempDir())
	if !strings.Contains(system, "German") || strings.Contains(system, "polars") {
		t.Errorf("outside the repository:\n%s", system)
	}

	// A FIFO would block a read: it is refused in one line.
	fifoHome := t.TempDir()
	path := filepath.Join(fifoHome, ".config", "pyaichat", "instructions.md")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	system, stderr := askIn(t, fifoHome, sub)
	if want := "pyaichat: instructions " + path + ": not a regular file"; !strings.Contains(stderr, want) || !strings.Contains(system, "polars") {
		t.Errorf("a FIFO: stderr %q, want %q; system:\n%s", stderr, want, system)
	}
}
