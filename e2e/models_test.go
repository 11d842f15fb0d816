package e2e

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
)

// askLocal runs pyaichat -p against srv as the ollama preset, with the
// model named by args if any; it returns the exit status and stderr.
func askLocal(t *testing.T, srv *fakemodel.Server, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--provider", "ollama", "--base-url", srv.URL, "-p", "hello?"}, args...)...)
	cmd.Env = testEnv(t.TempDir(), "")
	var stderr strings.Builder
	cmd.Stdin, cmd.Stderr = strings.NewReader(""), &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// A local server's preset without a model takes the server's only model
// and says so; with several it lists them and asks for a choice rather
// than asking for the default, which such a server seldom has.
func TestLocalPresetTakesTheServersModel(t *testing.T) {
	t.Parallel()
	one := fakemodel.New(t, fakemodel.Reply{Text: "hi"})
	one.SetModels("llama3.2:1b")
	status, stderr := askLocal(t, one)
	if status != 0 || !strings.Contains(stderr, "model llama3.2:1b: the only one "+one.URL+" offers") {
		t.Errorf("one model: status %d, stderr:\n%s", status, stderr)
	}
	if reqs := one.Requests(); len(reqs) != 1 {
		t.Fatalf("%d chat requests, want 1", len(reqs))
	} else {
		var body struct{ Model string }
		if err := json.Unmarshal(reqs[0].Body, &body); err != nil || body.Model != "llama3.2:1b" {
			t.Errorf("the request asked model %q (%v), want llama3.2:1b", body.Model, err)
		}
	}

	several := fakemodel.New(t)
	several.SetModels("llama3.2:1b", "qwen2.5:7b")
	status, stderr = askLocal(t, several)
	want := several.URL + " offers 2 models and none was chosen: llama3.2:1b, qwen2.5:7b; choose one with /model NAME"
	if status != 1 || !strings.Contains(stderr, want) {
		t.Errorf("several models: status %d, stderr:\n%s\nwant %q", status, stderr, want)
	}
	if n := len(several.Requests()); n != 0 {
		t.Errorf("%d chat requests for no chosen model, want none", n)
	}

	// A model the user named is asked for as named, and when the server
	// has no such model the error lists what it has.
	missing := fakemodel.New(t, fakemodel.Reply{Status: http.StatusNotFound, Error: "model 'gpt-5' not found", ErrorCode: "model_not_found"})
	missing.SetModels("llama3.2:1b", "qwen2.5:7b")
	status, stderr = askLocal(t, missing, "--model", "gpt-5")
	if status != 1 || !strings.Contains(stderr, `model "gpt-5" not found at `+missing.URL) || !strings.Contains(stderr, "it offers: llama3.2:1b, qwen2.5:7b") {
		t.Errorf("an unknown model: status %d, stderr:\n%s", status, stderr)
	}
}

// -p --json reports how full the context was and what the question cost,
// with the window and prices of the config file.
func TestJSONReportsContextAndCost(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New(t, fakemodel.Reply{Text: "hi", Usage: &fakemodel.Usage{Prompt: 1000, Completion: 100}})
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "pyaichat")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	config := "base_url = \"" + srv.URL + "\"\nmodel = \"m\"\ncontext_window = 200000\nprice_in = 3.0\nprice_out = 15.0\n"
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "-p", "hello?", "--json")
	cmd.Env = testEnv(home, "")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var report struct {
		Usage struct {
			ContextTokens int      `json:"context_tokens"`
			ContextWindow int      `json:"context_window"`
			CostUSD       *float64 `json:"cost_usd"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	u := report.Usage
	// (1000 * 3 + 100 * 15) / 1e6 dollars.
	if u.ContextTokens != 1000 || u.ContextWindow != 200000 || u.CostUSD == nil || math.Abs(*u.CostUSD-0.0045) > 1e-12 {
		t.Errorf("usage %+v (cost %v), want 1000 of 200000 tokens and $0.0045\n%s", u, u.CostUSD, out)
	}
}
