package config

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent"
	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/view"
)

// noTools is a Toolset with nothing in it: a preset's question needs none.
type noTools struct{}

func (noTools) Tools() []llm.Tool { return nil }
func (noTools) Call(context.Context, string, json.RawMessage) (string, bool) {
	return "", true
}

// Each --provider preset asks its service at the service's path with the
// service's key variable in the service's header. The request reaches a
// fake server (with TLS for an https preset) whatever host the preset
// names: the client's dialer is pointed at it.
func TestProviderPresets(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("OPENAI_BASE_URL", "http://elsewhere.example/v1") // a preset wins over it
	t.Setenv("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com")
	for _, p := range Providers() {
		t.Run(p.Name, func(t *testing.T) {
			key := ""
			if p.KeyVar != "" {
				key = "key-for-" + p.Name
				t.Setenv(p.KeyVar, key)
			}
			cfg, err := loadConfig("some-model", "", p.Name)
			if err != nil {
				t.Fatal(err)
			}
			want := p.BaseURL
			if p.Name == "azure" {
				want = "https://res.openai.azure.com/openai/deployments/some-model?api-version=" + AzureAPIVersion
			}
			if cfg.BaseURL != want || cfg.APIKey != key {
				t.Fatalf("base %q key %q; want %q %q", cfg.BaseURL, cfg.APIKey, want, key)
			}
			// A rejected key names where it came from.
			if hint := cfg.KeyHint; (p.KeyVar != "" && hint != p.KeyVar) || (p.KeyVar == "" && !strings.Contains(hint, "the "+p.Name+" preset sends no key")) {
				t.Errorf("key hint %q for key variable %q", hint, p.KeyVar)
			}
			u, _ := url.Parse(cfg.BaseURL)
			start := fakemodel.New
			if u.Scheme == "https" {
				start = fakemodel.NewTLS
			}
			f := start(t, fakemodel.Reply{Text: "hello"})
			f.AllowAnyPath() // the request goes to the preset's own path
			target := f.Addr()
			cfg.HTTPClient = &http.Client{Transport: &http.Transport{
				DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, network, target)
				},
				// The fake's certificate is not the service's.
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
			}}
			cfg.View = view.For(view.Options{})
			var out strings.Builder
			if err := agent.NewConversation(cfg.Config, noTools{}, nil).Handle(context.Background(), "hi?", &out); err != nil {
				t.Fatal(err)
			}
			reqs := f.Requests()
			if len(reqs) != 1 || !strings.Contains(out.String(), "hello") {
				t.Fatalf("no answer: %q", out.String())
			}
			got := reqs[0]
			if wantPath := strings.TrimSuffix(u.Path, "/") + "/chat/completions"; got.Path != wantPath || got.Query != u.RawQuery {
				t.Errorf("asked %s?%s, want %s?%s", got.Path, got.Query, wantPath, u.RawQuery)
			}
			apiKey, bearer := got.Header.Get("api-key"), got.Header.Get("Authorization")
			switch {
			case p.Name == "azure":
				if apiKey != key || bearer != "" {
					t.Errorf("api-key %q, Authorization %q; want the key in api-key", apiKey, bearer)
				}
			case key == "":
				if apiKey != "" || bearer != "" {
					t.Errorf("a server on this machine got a key: api-key %q, Authorization %q", apiKey, bearer)
				}
			case bearer != "Bearer "+key || apiKey != "":
				t.Errorf("Authorization %q, api-key %q; want Bearer %s", bearer, apiKey, key)
			}
		})
	}
}
