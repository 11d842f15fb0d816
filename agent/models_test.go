package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/view"
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
	s := NewConversation(cfg, &fakeTools{}, nil)
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

// Ctrl-C while /models waits on the server: the command's view shows the
// ^C and the line that says the command was cancelled, as a question's.
func TestCancelledCommandIsShown(t *testing.T) {
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	}))
	defer srv.Close()
	cfg := Config{BaseURL: srv.URL + "/v1", Model: "m", View: view.For(view.Options{Echo: true, Cancelled: "(cancelled)"})}
	s := NewConversation(cfg, &fakeTools{}, nil)
	out := newSyncBuffer()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Handle(ctx, "/models", out) }()
	<-arrived
	cancel()
	<-done
	want := "^Cpyaichat: cannot reach " + cfg.BaseURL + ": context canceled\n(cancelled)\n"
	if got := out.String(); got != want {
		t.Errorf("out %q, want %q", got, want)
	}
}
