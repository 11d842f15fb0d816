package llm

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
)

// TestAzureKeyAndQuery sends a request to Azure-style base URLs. The
// fake server stands in for the Azure host: the client's dialer reaches it
// whatever host the URL names.
func TestAzureKeyAndQuery(t *testing.T) {
	cases := []struct {
		base      string
		wantPath  string
		wantQuery string
		azure     bool
	}{
		{"http://res.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-10-21",
			"/openai/deployments/gpt-4o/chat/completions", "api-version=2024-10-21", true},
		{"http://res.openai.azure.com/openai/v1/", "/openai/v1/chat/completions", "", true},
		{"http://res.services.ai.azure.com/openai/v1", "/openai/v1/chat/completions", "", true},
		{"http://openrouter.example/api/v1", "/api/v1/chat/completions", "", false},
	}
	for _, c := range cases {
		t.Run(c.base, func(t *testing.T) {
			f := fakemodel.New(t, fakemodel.Reply{Text: "hello"})
			f.AllowAnyPath() // the request goes to the base URL's own path
			target := f.Addr()
			client := New(Options{BaseURL: c.base, APIKey: testKey, HTTPClient: &http.Client{Transport: &http.Transport{
				DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
					return (&net.Dialer{}).DialContext(ctx, network, target)
				},
			}}})
			st, err := client.Open(context.Background(), "m", []Message{{Role: "user", Content: "hi?"}}, Tools{}, func(string) {})
			if err != nil {
				t.Fatal(err)
			}
			for st.Next() {
			}
			st.Close()
			if got := st.Result().Choice0().Content; got != "hello" || st.Err() != nil {
				t.Errorf("answer %q, error %v", got, st.Err())
			}
			got := f.Requests()[0]
			if got.Path != c.wantPath || got.Query != c.wantQuery {
				t.Errorf("request to %s?%s, want %s?%s", got.Path, got.Query, c.wantPath, c.wantQuery)
			}
			apiKey, bearer := got.Header.Get("api-key"), got.Header.Get("Authorization")
			if c.azure && (apiKey != testKey || bearer != "") {
				t.Errorf("Azure: api-key %q, Authorization %q; want the key in api-key only", apiKey, bearer)
			}
			if !c.azure && (apiKey != "" || bearer != "Bearer "+testKey) {
				t.Errorf("api-key %q, Authorization %q; want a Bearer token only", apiKey, bearer)
			}
		})
	}
}

// The base URL as shown to the user never carries its query.
func TestAzureQueryNotShown(t *testing.T) {
	u, _ := url.Parse(DisplayURL("https://res.openai.azure.com/openai/deployments/x?api-version=1&api-key=SECRET"))
	if u.RawQuery != "" || strings.Contains(u.String(), "SECRET") {
		t.Errorf("shown as %s", u)
	}
}
