package agent

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/view"
)

// /models lists what the server offers; /model NAME warns when the list
// lacks NAME; --save hands NAME to the config's SaveModel and says where
// it went.
func TestModelsCommands(t *testing.T) {
	f := newFake(t)
	cfg := f.config()
	var saved []string
	cfg.SaveModel = func(name string) (string, error) {
		saved = append(saved, name)
		return "/cfg/config.toml", nil
	}
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
	if len(saved) != 0 {
		t.Errorf("/model without --save saved %q", saved)
	}
	if got := run("/model other-model --save"); got != "model set to other-model\nsaved as the default in /cfg/config.toml\n" {
		t.Errorf("/model --save: %q", got)
	}
	if len(saved) != 1 || saved[0] != "other-model" {
		t.Errorf("saved %q, want other-model", saved)
	}
	cfg.SaveModel = nil
	s = NewConversation(cfg, &fakeTools{}, nil)
	if got := run("/model other-model --save"); !strings.Contains(got, "no config directory") {
		t.Errorf("/model --save with nowhere to save: %q", got)
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
