package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// /models lists what the server offers; /model NAME warns when the list
// lacks NAME; --save makes NAME the default in the config file, keeping the
// file's other lines.
func TestModelsCommands(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	f := newFake(t)
	cfg := f.config()
	cfg.File = xdgConfigFile()
	s := NewSession(cfg, &fakeTools{}, nil)
	run := func(line string) string {
		out := newSyncBuffer()
		if err := s.Handle(context.Background(), line, out); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return out.String()
	}
	if got := run("/models"); got != "fake-model\nother-model\n" {
		t.Errorf("/models: %q", got)
	}
	if got := run("/model other-model"); strings.Contains(got, "warning") {
		t.Errorf("/model of a listed model warned: %q", got)
	}
	if got := run("/model not-there"); !strings.Contains(got, "does not list not-there") {
		t.Errorf("/model of an unlisted model: %q", got)
	}
	path := filepath.Join(dir, "pyaichat", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("# mine\nmodel = \"old\"\nbase_url = \"http://127.0.0.1:1/v1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := run("/model other-model --save"); !strings.Contains(got, "saved as the default") {
		t.Errorf("/model --save: %q", got)
	}
	saved, _ := os.ReadFile(path)
	if string(saved) != "# mine\nmodel = \"other-model\"\nbase_url = \"http://127.0.0.1:1/v1\"\n" {
		t.Errorf("config file after --save:\n%s", saved)
	}
	t.Setenv("PYAICHAT_MODEL", "")
	if c, err := LoadConfig(xdgConfigFile(), "", "", ""); err != nil || c.Model != "other-model" {
		t.Errorf("the saved model is not the default: %q %v", c.Model, err)
	}
	if len(f.requests()) != 0 {
		t.Errorf("the model commands sent %d questions", len(f.requests()))
	}
}
