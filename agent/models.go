package agent

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pyaichat/pyaichat/agent/llm"
)

// modelsCommand is /models.
func (s *Conversation) modelsCommand(ctx context.Context, out io.Writer) error {
	ids, err := s.model.Models(ctx)
	if err != nil {
		_, err = fmt.Fprintf(out, "pyaichat: %v\n", s.clean(err))
		return err
	}
	if len(ids) == 0 {
		_, err = fmt.Fprintf(out, "%s lists no models\n", s.model.Where())
		return err
	}
	_, err = fmt.Fprintln(out, strings.Join(ids, "\n"))
	return err
}

// modelCommand is /model NAME [--save]: the model for the next questions,
// with a warning when the server's list does not have it, and with --save
// kept as the default in the config file.
func (s *Conversation) modelCommand(ctx context.Context, arg string, out io.Writer) error {
	name, save := strings.TrimSpace(strings.TrimSuffix(arg, "--save")), strings.HasSuffix(arg, "--save")
	if name == "" {
		_, err := fmt.Fprintln(out, "usage: /model NAME [--save]")
		return err
	}
	s.cfg.Model = name
	if _, err := fmt.Fprintf(out, "model set to %s\n", name); err != nil {
		return err
	}
	if ids, err := s.model.Models(ctx); err == nil && !contains(ids, name) {
		if _, err := fmt.Fprintf(out, "warning: %s does not list %s (see /models)\n", s.model.Where(), name); err != nil {
			return err
		}
	}
	if !save {
		return nil
	}
	if s.cfg.SaveModel == nil {
		_, err := fmt.Fprintln(out, "pyaichat: saving the model: no config directory (set XDG_CONFIG_HOME or HOME)")
		return err
	}
	where, err := s.cfg.SaveModel(name)
	if err != nil {
		_, err = fmt.Fprintf(out, "pyaichat: saving the model: %v\n", err)
		return err
	}
	_, err = fmt.Fprintf(out, "saved as the default in %s\n", where)
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ServerModels asks cfg's server once, without retries, which models it
// offers (GET /models, which costs no tokens): whether it answers, takes
// the key, and lists the model is what pyaichat doctor checks. Its errors
// never hold the key.
func ServerModels(ctx context.Context, cfg Config) ([]string, error) {
	client := llm.New(llm.Options{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, HTTPClient: cfg.HTTPClient, Limits: llm.Limits{
		ConnectTimeout: 10 * time.Second, FirstByteTimeout: 30 * time.Second, MaxRetries: -1,
	}})
	return client.Models(ctx)
}

// DisplayURL is a base URL as it may be shown: no userinfo, no query (an
// Azure ?api-key=...), control characters made visible.
func DisplayURL(raw string) string { return llm.DisplayURL(raw) }
