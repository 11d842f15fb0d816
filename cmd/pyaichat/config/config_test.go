package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent"
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

// testKey is a key whose every appearance in an error is a leak.
const testKey = "sk-test-S3CRET-0123456789"

// loaded is what a test reads of Settings: the agent's options, and where
// each came from.
type loaded struct {
	agent.Config
	Origins    Origins
	FileHasKey bool
}

// loadConfig loads the settings as pyaichat does, from the config file
// under the test's XDG_CONFIG_HOME.
func loadConfig(model, baseURL, provider string) (loaded, error) {
	s, err := Load(xdgConfigFile(), Flags{Model: model, BaseURL: baseURL, Provider: provider})
	return loaded{s.Agent, s.Origins, s.FileHasKey}, err
}

func TestConfigDefaults(t *testing.T) {
	configEnv(t, "")
	c, err := loadConfig("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "gpt-4o" || c.BaseURL != agent.DefaultBaseURL || c.APIKey != "" || c.Source != "default" {
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
	c, err := loadConfig("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "file-model" || c.BaseURL != "http://file:1/v1" || c.APIKey != "sk-file" || c.Source != "file" {
		t.Errorf("file: %v", c)
	}
	t.Setenv("PYAICHAT_MODEL", "env-model")
	t.Setenv("OPENAI_BASE_URL", "http://env:2/v1")
	t.Setenv("OPENAI_API_KEY", "sk-env")
	c, _ = loadConfig("", "", "")
	if c.Model != "env-model" || c.BaseURL != "http://env:2/v1" || c.APIKey != "sk-env" || c.Source != "env" {
		t.Errorf("env over file: %v", c)
	}
	c, _ = loadConfig("flag-model", "http://flag:3/v1", "")
	if c.Model != "flag-model" || c.BaseURL != "http://flag:3/v1" || c.APIKey != "sk-env" || c.Source != "flag" {
		t.Errorf("flag over env: %v", c)
	}
}

func TestConfigFileEnvSpelling(t *testing.T) {
	configEnv(t, "OPENAI_BASE_URL = \"http://localhost:11434/v1\"\nPYAICHAT_MODEL = \"qwen2.5\"\n")
	c, err := loadConfig("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "http://localhost:11434/v1" || c.Model != "qwen2.5" || !c.Configured() {
		t.Errorf("a local server without a key: %v configured=%v", c, c.Configured())
	}
}

func TestConfigErrorsNameTheFile(t *testing.T) {
	configEnv(t, "modle = \"typo\"\n")
	if _, err := loadConfig("", "", ""); err == nil || !strings.Contains(err.Error(), "config.toml") || !strings.Contains(err.Error(), "modle") {
		t.Errorf("unknown key: %v", err)
	}
	configEnv(t, "model = \n")
	if _, err := loadConfig("", "", ""); err == nil || !strings.Contains(err.Error(), "config.toml") {
		t.Errorf("bad TOML: %v", err)
	}
	configEnv(t, "api_key = \""+testKey+"\"\nbase_url = \"ftp://nope\"\n")
	_, err := loadConfig("", "", "")
	if err == nil || !strings.Contains(err.Error(), "http://") {
		t.Errorf("bad base URL: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "S3CRET") {
		t.Errorf("config error shows the key: %v", err)
	}
}

// The line editor's settings: their values, and a clear error for one
// that is none of them.
func TestConfigEditorSettings(t *testing.T) {
	configEnv(t, "tab = \"toggle\"\nauto_indent = true\nediting_mode = \"vi\"\n")
	s, err := Load(xdgConfigFile(), Flags{})
	if err != nil || !s.REPL.TabToggles || s.REPL.AutoIndent == nil || !*s.REPL.AutoIndent || s.REPL.EditingMode != "vi" {
		t.Errorf("got %+v, %v", s.REPL, err)
	}
	for _, bad := range []string{"tab = \"always\"\n", "editing_mode = \"nano\"\n"} {
		configEnv(t, bad)
		if _, err := loadConfig("", "", ""); err == nil || !strings.Contains(err.Error(), "config.toml") || !strings.Contains(err.Error(), "want") {
			t.Errorf("%q: %v", bad, err)
		}
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
		_, err := loadConfig("", c.base, "")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q rejected: %v", c.base, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%q: err = %v\nwant         %s", c.base, err, c.want)
		case err != nil && (strings.Contains(err.Error(), "sk-OTHER") || strings.Contains(err.Error(), "S3CRET")):
			t.Errorf("%q: a secret is shown: %v", c.base, err)
		}
	}
}

// Load refuses a key with a control character at start-up, as the
// provider refuses to send it (agent/llm's retry tests).
func TestMalformedKeyRefusedAtStart(t *testing.T) {
	configEnv(t, "")
	t.Setenv("OPENAI_BASE_URL", "http://localhost:8080/v1")
	t.Setenv("OPENAI_API_KEY", "sk-abc\x01def")
	if _, err := loadConfig("", "", ""); err == nil || !strings.Contains(err.Error(), "the API key is malformed") {
		t.Errorf("Load: %v", err)
	}
}

// Each setting says where it came from, in words a user can act on.
func TestConfigOrigins(t *testing.T) {
	configEnv(t, "model = \"file-model\"\napi_key = \"sk-file-0123456789abcdef\"\n")
	t.Setenv("PYAICHAT_PROVIDER", "")
	t.Setenv("OPENAI_BASE_URL", "http://env:2/v1")
	c, err := loadConfig("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := Origins{Model: "config file", BaseURL: "env OPENAI_BASE_URL", APIKey: "config file", Provider: "none"}
	if c.Origins != want || !c.FileHasKey || c.Source != "file" {
		t.Errorf("origins %+v (file has key %v, source %q), want %+v", c.Origins, c.FileHasKey, c.Source, want)
	}
	c, err = loadConfig("m", "", "ollama")
	if err != nil {
		t.Fatal(err)
	}
	want = Origins{Model: "flag --model", BaseURL: "preset ollama", APIKey: "none", Provider: "flag --provider"}
	if c.Origins != want || c.Provider != "ollama" || c.APIKey != "" {
		t.Errorf("with --provider ollama: origins %+v provider %q key set %v, want %+v", c.Origins, c.Provider, c.APIKey != "", want)
	}
	t.Setenv("GROQ_API_KEY", "gsk-env-0123456789abcdef")
	c, err = loadConfig("", "http://mine:1/v1", "groq")
	if err != nil {
		t.Fatal(err)
	}
	want = Origins{Model: "config file", BaseURL: "flag --base-url", APIKey: "env GROQ_API_KEY", Provider: "flag --provider"}
	if c.Origins != want {
		t.Errorf("with --provider groq --base-url: origins %+v, want %+v", c.Origins, want)
	}
}

func TestShareAskIsAValidSetting(t *testing.T) {
	configEnv(t, "share = \"ask\"\n")
	c, err := loadConfig("", "", "")
	if err != nil || c.Share != agent.ShareAsk {
		t.Fatalf("share = \"ask\": %v, %v", c.Share, err)
	}
	configEnv(t, "share = \"maybe\"\n")
	_, err = loadConfig("", "", "")
	if err == nil || !strings.Contains(err.Error(), `want "redacted", "off" or "ask"`) {
		t.Errorf("share = \"maybe\": %v", err)
	}
}

// The config file's prices go in pairs and are not negative.
func TestSpendSettingsChecked(t *testing.T) {
	for text, want := range map[string]string{
		"price_in = 1.0\n":                   "price_in and price_out go together",
		"price_in = -1.0\nprice_out = 2.0\n": "not negative",
		"context_window = -5\n":              "want a number of tokens",
	} {
		configEnv(t, text)
		if _, err := loadConfig("", "", ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
	configEnv(t, "context_window = 32768\nprice_in = 0.5\nprice_out = 1.5\n")
	c, err := loadConfig("", "", "")
	if err != nil || c.ContextWindow != 32768 || !c.Priced || c.PriceIn != 0.5 || c.PriceOut != 1.5 {
		t.Errorf("read %+v, %v", c, err)
	}
}

// --base-url overrides a preset's API; an unknown provider lists the known.
func TestProviderOverridesAndErrors(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GROQ_API_KEY", "gk")
	cfg, err := loadConfig("", "http://127.0.0.1:9/v1", "groq")
	if err != nil || cfg.BaseURL != "http://127.0.0.1:9/v1" || cfg.APIKey != "gk" {
		t.Errorf("--base-url with a preset: %+v %v", cfg.BaseURL, err)
	}
	if _, err := loadConfig("", "", "nope"); err == nil || !strings.Contains(err.Error(), "ollama") {
		t.Errorf("unknown provider: %v", err)
	}
	t.Setenv("AZURE_OPENAI_ENDPOINT", "")
	if _, err := loadConfig("", "", "azure"); err == nil || !strings.Contains(err.Error(), "AZURE_OPENAI_ENDPOINT") {
		t.Errorf("azure without an endpoint: %v", err)
	}
}

// SaveModel makes a model the default, keeping the file's other lines,
// and Load then reads it; a file that is not there is made, private.
func TestSaveModel(t *testing.T) {
	configEnv(t, "# mine\nmodel = \"old\"\nbase_url = \"http://127.0.0.1:1/v1\"\n")
	s, err := Load(xdgConfigFile(), Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if where, err := s.Agent.SaveModel("other-model"); err != nil || where != xdgConfigFile() {
		t.Fatalf("SaveModel: %q %v", where, err)
	}
	saved, _ := os.ReadFile(xdgConfigFile())
	if string(saved) != "# mine\nmodel = \"other-model\"\nbase_url = \"http://127.0.0.1:1/v1\"\n" {
		t.Errorf("config file after SaveModel:\n%s", saved)
	}
	if c, err := loadConfig("", "", ""); err != nil || c.Model != "other-model" {
		t.Errorf("the saved model is not the default: %q %v", c.Model, err)
	}
	configEnv(t, "")
	if err := SaveModel(xdgConfigFile(), "m"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(xdgConfigFile()); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("a new config file: %v %v, want mode 0600", st.Mode(), err)
	}
	if s, _ := Load("", Flags{}); s.Agent.SaveModel != nil {
		t.Errorf("no config file, yet SaveModel is set")
	}
}
