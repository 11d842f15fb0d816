package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"

	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// maxModelsBody bounds the answer of GET /models.
const maxModelsBody = 4 << 20

// Models asks the server which models it offers (GET {base}/models, as
// OpenAI, Ollama, llama.cpp, vLLM and LM Studio answer it), sorted, each
// made visible. Its errors never hold the key.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	ids, err := c.models(ctx)
	if err != nil {
		return nil, c.cleanErr(err)
	}
	return ids, nil
}

func (c *Client) models(ctx context.Context) ([]string, error) {
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
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("%s's model list is not the JSON OpenAI's is", c.Where())
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		ids = append(ids, termsafe.Visible(m.ID))
	}
	sort.Strings(ids)
	return ids, nil
}
