package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// maxModelsBody bounds the answer of GET /models.
const maxModelsBody = 4 << 20

// Models asks the server which models it offers (GET {base}/models, as
// OpenAI, Ollama, llama.cpp, vLLM and LM Studio answer it), sorted, each
// made visible. Its errors never hold the key.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	infos, err := c.ModelInfos(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(infos))
	for i, m := range infos {
		ids[i] = m.ID
	}
	return ids, nil
}

// ModelInfo is what a server's model list says of one model, where it
// says it: OpenRouter gives the context length and prices, vLLM the
// longest sequence it serves, Groq the context window.
type ModelInfo struct {
	ID string
	// ContextWindow is the model's context in tokens; 0 when not given.
	ContextWindow int
	// PriceIn and PriceOut are US dollars per million prompt and
	// completion tokens, when Priced.
	PriceIn, PriceOut float64
	Priced            bool
}

// ModelInfos is Models with what the list says of each model.
func (c *Client) ModelInfos(ctx context.Context) ([]ModelInfo, error) {
	infos, err := c.models(ctx)
	if err != nil {
		return nil, c.cleanErr(err)
	}
	return infos, nil
}

// listedModel is one entry of GET /models, with the fields of the
// servers that give a model's context and prices.
type listedModel struct {
	ID            string `json:"id"`
	ContextLength int    `json:"context_length"` // OpenRouter
	MaxModelLen   int    `json:"max_model_len"`  // vLLM
	ContextWindow int    `json:"context_window"` // Groq
	Pricing       *struct {
		// OpenRouter's: US dollars per token, as decimal strings.
		Prompt     json.Number `json:"prompt"`
		Completion json.Number `json:"completion"`
	} `json:"pricing"`
}

func (m listedModel) info() ModelInfo {
	info := ModelInfo{ID: termsafe.Visible(m.ID), ContextWindow: max(m.ContextLength, m.MaxModelLen, m.ContextWindow, 0)}
	if m.Pricing != nil {
		in, err1 := strconv.ParseFloat(m.Pricing.Prompt.String(), 64)
		out, err2 := strconv.ParseFloat(m.Pricing.Completion.String(), 64)
		if err1 == nil && err2 == nil && in >= 0 && out >= 0 {
			info.PriceIn, info.PriceOut, info.Priced = in*1e6, out*1e6, true
		}
	}
	return info
}

func (c *Client) models(ctx context.Context) ([]ModelInfo, error) {
	u, err := url.Parse(c.cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.FirstByteTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.JoinPath("models").String(), nil)
	if err != nil {
		return nil, err
	}
	c.setKey(req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.netError(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody))
	if err != nil {
		return nil, fmt.Errorf("reading the model list from %s: %w", c.Where(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s to GET /models", c.Where(), resp.Status)
	}
	var list struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("%s's model list is not the JSON OpenAI's is", c.Where())
	}
	infos := make([]ModelInfo, 0, len(list.Data))
	for _, raw := range list.Data {
		var m listedModel
		if json.Unmarshal(raw, &m) != nil {
			// A field of another type than these servers give (a
			// context_length as a string) loses the extras, not the id.
			var bare struct {
				ID string `json:"id"`
			}
			json.Unmarshal(raw, &bare)
			m = listedModel{ID: bare.ID}
		}
		infos = append(infos, m.info())
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].ID < infos[j].ID })
	return infos, nil
}
