package kernel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLatestConnectionFileIsTheNewest(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("JUPYTER_RUNTIME_DIR", dir)
	if _, err := ResolveConnectionFile(""); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("an empty runtime directory: %v", err)
	}
	old := time.Now().Add(-time.Hour)
	for i, name := range []string{"kernel-old.json", "kernel-new.json", "other.json"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		stamp := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(path, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"": "kernel-new.json", "old": "kernel-old.json", "other.json": "other.json", "kernel-old.json": "kernel-old.json"} {
		got, err := ResolveConnectionFile(name)
		if err != nil || filepath.Base(got) != want {
			t.Errorf("ResolveConnectionFile(%q) = %q, %v; want %s", name, got, err, want)
		}
	}
	if _, err := ResolveConnectionFile("missing"); err == nil {
		t.Error("a missing kernel was found")
	}
}

func TestReadConnectionFileSaysWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		`{`: "unexpected end",
		`{"transport":"udp","ip":"127.0.0.1","shell_port":1,"iopub_port":2,"control_port":3}`:                                         `"udp"`,
		`{"transport":"tcp","ip":"127.0.0.1","shell_port":0,"iopub_port":2,"control_port":3}`:                                         "shell_port 0",
		`{"transport":"tcp","ip":"127.0.0.1","shell_port":1,"iopub_port":2,"control_port":3,"key":"k","signature_scheme":"hmac-md5"}`: "hmac-md5",
	} {
		path := filepath.Join(dir, "c.json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadConnectionFile(path); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the file and %q", body, err, want)
		}
	}
}
