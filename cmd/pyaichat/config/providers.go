package config

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Provider is an OpenAI-compatible service that --provider names: where
// its API is and which variable holds its key (none for the servers that
// run on the user's own machine).
type Provider struct {
	Name    string
	BaseURL string // "" for Azure OpenAI: built from its endpoint and deployment
	KeyVar  string
}

// AzureAPIVersion is the Azure OpenAI API version the azure preset asks for.
const AzureAPIVersion = "2024-10-21"

var providers = []Provider{
	{"openai", "https://api.openai.com/v1", "OPENAI_API_KEY"},
	{"azure", "", "AZURE_OPENAI_API_KEY"},
	{"openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"},
	{"github", "https://models.github.ai/inference", "GITHUB_TOKEN"},
	{"groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"},
	{"anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"},
	{"ollama", "http://localhost:11434/v1", ""},
	{"llamacpp", "http://localhost:8080/v1", ""},
	{"vllm", "http://localhost:8000/v1", ""},
	{"lmstudio", "http://localhost:1234/v1", ""},
}

// Providers lists the presets, by name.
func Providers() []Provider {
	out := append([]Provider(nil), providers...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func lookupProvider(name string) (Provider, error) {
	for _, p := range providers {
		if p.Name == strings.ToLower(name) {
			return p, nil
		}
	}
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = p.Name
	}
	return Provider{}, fmt.Errorf("unknown provider %q (known: %s)", name, strings.Join(names, ", "))
}

// baseURL is the preset's API for model: Azure OpenAI's is its resource's
// endpoint ($AZURE_OPENAI_ENDPOINT) with the deployment, named as the model.
func (p Provider) baseURL(model string) (string, error) {
	if p.BaseURL != "" {
		return p.BaseURL, nil
	}
	endpoint := strings.TrimRight(strings.TrimSpace(os.Getenv("AZURE_OPENAI_ENDPOINT")), "/")
	if endpoint == "" {
		return "", fmt.Errorf("provider %s needs AZURE_OPENAI_ENDPOINT (https://RESOURCE.openai.azure.com) and the deployment as the model", p.Name)
	}
	return endpoint + "/openai/deployments/" + model + "?api-version=" + AzureAPIVersion, nil
}
