package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// xdgConfigFile is where pyaichat reads its config file (cmd/pyaichat's
// paths) under the XDG_CONFIG_HOME a test set.
func xdgConfigFile() string {
	return filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "pyaichat", "config.toml")
}

// configEnv isolates a test from the caller's environment and config file.
func configEnv(t *testing.T, file string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("PYAICHAT_MODEL", "")
	if file != "" {
		os.MkdirAll(filepath.Join(dir, "pyaichat"), 0o700)
		if err := os.WriteFile(filepath.Join(dir, "pyaichat", "config.toml"), []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	configEnv(t, "")
	c, err := LoadConfig(xdgConfigFile(), "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "gpt-4o" || c.BaseURL != DefaultBaseURL || c.APIKey != "" || c.Source != "default" {
		t.Errorf("defaults: %v", c)
	}
	if c.Configured() {
		t.Errorf("no key and OpenAI's URL must not count as configured")
	}
	if c.MaxSteps != 8 || c.QuestionTimeout <= 0 || c.IdleTimeout <= 0 || c.MaxRetries != 2 {
		t.Errorf("bounds not defaulted: %+v", c)
	}
}

func TestConfigPrecedence(t *testing.T) {
	configEnv(t, "model = \"file-model\"\nbase_url = \"http://file:1/v1\"\napi_key = \"sk-file\"\n")
	c, err := LoadConfig(xdgConfigFile(), "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "file-model" || c.BaseURL != "http://file:1/v1" || c.APIKey != "sk-file" || c.Source != "file" {
		t.Errorf("file: %v", c)
	}
	t.Setenv("PYAICHAT_MODEL", "env-model")
	t.Setenv("OPENAI_BASE_URL", "http://env:2/v1")
	t.Setenv("OPENAI_API_KEY", "sk-env")
	c, _ = LoadConfig(xdgConfigFile(), "", "", "")
	if c.Model != "env-model" || c.BaseURL != "http://env:2/v1" || c.APIKey != "sk-env" || c.Source != "env" {
		t.Errorf("env over file: %v", c)
	}
	c, _ = LoadConfig(xdgConfigFile(), "flag-model", "http://flag:3/v1", "")
	if c.Model != "flag-model" || c.BaseURL != "http://flag:3/v1" || c.APIKey != "sk-env" || c.Source != "flag" {
		t.Errorf("flag over env: %v", c)
	}
}

func TestConfigFileEnvSpelling(t *testing.T) {
	configEnv(t, "OPENAI_BASE_URL = \"http://localhost:11434/v1\"\nPYAICHAT_MODEL = \"qwen2.5\"\n")
	c, err := LoadConfig(xdgConfigFile(), "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "http://localhost:11434/v1" || c.Model != "qwen2.5" || !c.Configured() {
		t.Errorf("a local server without a key: %v configured=%v", c, c.Configured())
	}
}

func TestConfigErrorsNameTheFile(t *testing.T) {
	configEnv(t, "modle = \"typo\"\n")
	if _, err := LoadConfig(xdgConfigFile(), "", "", ""); err == nil || !strings.Contains(err.Error(), "config.toml") || !strings.Contains(err.Error(), "modle") {
		t.Errorf("unknown key: %v", err)
	}
	configEnv(t, "model = \n")
	if _, err := LoadConfig(xdgConfigFile(), "", "", ""); err == nil || !strings.Contains(err.Error(), "config.toml") {
		t.Errorf("bad TOML: %v", err)
	}
	configEnv(t, "api_key = \""+testKey+"\"\nbase_url = \"ftp://nope\"\n")
	_, err := LoadConfig(xdgConfigFile(), "", "", "")
	if err == nil || !strings.Contains(err.Error(), "http://") {
		t.Errorf("bad base URL: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "S3CRET") {
		t.Errorf("config error shows the key: %v", err)
	}
}

func TestBaseURLChecks(t *testing.T) {
	cases := []struct {
		base, want string // want "" means accepted
	}{
		{"HTTP://127.0.0.1:18080/v1", ""},
		{"Https://example.com/v1?api-version=1", ""},
		{"http://u:sk-OTHER@[::1/v1", `base URL "http://[::1/v1" is malformed: missing ']' in host`},
		{"notaurl", `base URL "notaurl" must start with http:// or https://`},
		{"127.0.0.1:9/v1", `base URL "127.0.0.1:9/v1" must start with http:// or https://`},
		{"localhost:11434/v1", `base URL "localhost:11434/v1" must start with http:// or https://`},
		{"ftp://user:sk-OTHER@example.com/v1?k=sk-OTHER", `base URL "ftp://example.com/v1" must start with http:// or https://`},
		{"http://127.0.0.1:99999/v1", `base URL "http://127.0.0.1:99999/v1" has an invalid port (99999; ports are 1-65535)`},
		{"http:///v1", `base URL "http:///v1" has no host`},
		{"http://host/v1\x1b]0;T\x07", `base URL "http://host/v1\x1b]0;T\x07" is malformed: net/url: invalid control character in URL`},
		{testKey, `base URL "[key]" must start with http:// or https://`},
	}
	for _, c := range cases {
		configEnv(t, "")
		t.Setenv("OPENAI_API_KEY", testKey)
		_, err := LoadConfig(xdgConfigFile(), "", c.base, "")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q rejected: %v", c.base, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%q: err = %v\nwant         %s", c.base, err, c.want)
		case err != nil && (strings.Contains(err.Error(), "sk-OTHER") || strings.Contains(err.Error(), "S3CRET")):
			t.Errorf("%q: a secret is shown: %v", c.base, err)
		}
		if c.want == "" {
			continue
		}
		// A Config made without LoadConfig fails the same way, at once.
		s := NewConversation(Config{BaseURL: c.base, APIKey: testKey, Model: "m"}, &fakeTools{}, nil)
		out := newSyncBuffer()
		if err := s.Handle(context.Background(), "q", out); err == nil || err.Error() != c.want || out.String() != "" {
			t.Errorf("%q at ai>: err = %v, out %q", c.base, err, out.String())
		}
	}
}

// LoadConfig refuses a key with a control character at start-up, as the
// provider refuses to send it (agent/llm's retry tests).
func TestMalformedKeyRefusedAtStart(t *testing.T) {
	configEnv(t, "")
	t.Setenv("OPENAI_BASE_URL", "http://localhost:8080/v1")
	t.Setenv("OPENAI_API_KEY", "sk-abc\x01def")
	if _, err := LoadConfig(xdgConfigFile(), "", "", ""); err == nil || !strings.Contains(err.Error(), "the API key is malformed") {
		t.Errorf("LoadConfig: %v", err)
	}
}

// Each setting says where it came from, in words a user can act on.
func TestConfigOrigins(t *testing.T) {
	configEnv(t, "model = \"file-model\"\napi_key = \"sk-file-0123456789abcdef\"\n")
	t.Setenv("PYAICHAT_PROVIDER", "")
	t.Setenv("OPENAI_BASE_URL", "http://env:2/v1")
	c, err := LoadConfig(xdgConfigFile(), "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := Origins{Model: "config file", BaseURL: "env OPENAI_BASE_URL", APIKey: "config file", Provider: "none"}
	if c.Origins != want || !c.FileHasKey || c.Source != "file" {
		t.Errorf("origins %+v (file has key %v, source %q), want %+v", c.Origins, c.FileHasKey, c.Source, want)
	}
	c, err = LoadConfig(xdgConfigFile(), "m", "", "ollama")
	if err != nil {
		t.Fatal(err)
	}
	want = Origins{Model: "flag --model", BaseURL: "preset ollama", APIKey: "none", Provider: "flag --provider"}
	if c.Origins != want || c.Provider != "ollama" || c.APIKey != "" {
		t.Errorf("with --provider ollama: origins %+v provider %q key set %v, want %+v", c.Origins, c.Provider, c.APIKey != "", want)
	}
	t.Setenv("GROQ_API_KEY", "gsk-env-0123456789abcdef")
	c, err = LoadConfig(xdgConfigFile(), "", "http://mine:1/v1", "groq")
	if err != nil {
		t.Fatal(err)
	}
	want = Origins{Model: "config file", BaseURL: "flag --base-url", APIKey: "env GROQ_API_KEY", Provider: "flag --provider"}
	if c.Origins != want {
		t.Errorf("with --provider groq --base-url: origins %+v, want %+v", c.Origins, want)
	}
}
