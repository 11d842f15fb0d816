package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/pyaichat/pyaichat/agent/llm"
)

// shownModels bounds the model names an error lists: a server may offer
// hundreds.
const shownModels = 12

// localServer says whether the model is asked of a server on the user's
// own machine (Local, or a loopback base URL): Ollama,
// llama.cpp, vLLM and LM Studio serve the models the user pulled, which
// the default model (an OpenAI one) is seldom among.
func (c Config) localServer() bool {
	if c.Local {
		return true
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// chooseServerModel picks the model for a local server when the user named
// none, once per session, before the first question: the server's only
// model, with a dim line saying so; or, when it offers several and not the
// default, an error that lists them and says how to choose. When the list
// cannot be had, the default stays and the request says what is wrong.
func (t *turn) chooseServerModel(ctx context.Context) error {
	s := t.s
	if s.modelChosen || s.cfg.Source != "default" || !s.cfg.localServer() {
		return nil
	}
	infos, err := s.models.wait(ctx)
	ids := make([]string, len(infos))
	for i, m := range infos {
		ids[i] = m.ID
	}
	if err != nil || len(ids) == 0 || contains(ids, s.cfg.Model) {
		s.modelChosen = err == nil
		return nil
	}
	s.modelChosen = true
	if len(ids) == 1 {
		s.cfg.Model, s.cfg.Source = ids[0], "server"
		t.notify(fmt.Sprintf("model %s: the only one %s offers", ids[0], s.model.Where()))
		return nil
	}
	s.modelChosen = false // asked again once the user chose
	return fmt.Errorf("%s offers %d models and none was chosen: %s; choose one with /model NAME (or --model, PYAICHAT_MODEL)",
		s.model.Where(), len(ids), listModels(ids))
}

// withServerModels adds the server's models to an error that says the
// model was not found, so that the user sees what to choose from.
func (t *turn) withServerModels(ctx context.Context, err error) error {
	var api *llm.APIError
	if err == nil || !errors.As(err, &api) || api.HTTPStatus != 404 || !strings.Contains(err.Error(), "not found") {
		return err
	}
	ids, lerr := t.s.model.Models(ctx)
	if lerr != nil || len(ids) == 0 {
		return err
	}
	return llm.Reworded(err, fmt.Sprintf("%s; it offers: %s", err.Error(), listModels(ids)))
}

// listModels is ids as one line, the first shownModels of them.
func listModels(ids []string) string {
	if len(ids) <= shownModels {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more (/models lists them)", strings.Join(ids[:shownModels], ", "), len(ids)-shownModels)
}
