package agent

import (
	"context"

	"github.com/pyaichat/pyaichat/agent/llm"
)

// model is the provider as the loop sees it: one streamed response per
// request, the server's list of models, and where it is. *llm.Client is
// the real one (through llmModel); loop tests may put a fake in
// Session.model.
type model interface {
	// Open sends the conversation and the tools and returns the response
	// as it streams. notify is told of each retry wait. Errors are one
	// line without the key.
	Open(ctx context.Context, model string, msgs []llm.Message, tools llm.Tools, notify func(string)) (response, error)
	Models(ctx context.Context) ([]string, error)
	ModelInfos(ctx context.Context) ([]llm.ModelInfo, error)
	// Where is the server as it may be shown (no key, no query).
	Where() string
	// NewCallID makes an id for a tool call the model wrote as text.
	NewCallID() string
}

// response is one streamed response: its visible text piece by piece
// (Next, Current), then how it ended and everything it carried.
type response interface {
	Next() bool
	Current() (kind llm.DeltaKind, choice int, text string)
	// Err is what ended the response early: a read failure, a stall, a
	// cancellation, or an error the server reported inside it.
	Err() error
	// Capped reports a response cut at llm.MaxResponseText.
	Capped() bool
	// Unfinished reports a body that ended cleanly before the server said
	// the answer was complete.
	Unfinished() bool
	Result() *llm.Completion
	Close() error
}

// llmModel adapts *llm.Client, whose Open returns its concrete stream.
type llmModel struct{ *llm.Client }

func (m llmModel) Open(ctx context.Context, model string, msgs []llm.Message, tools llm.Tools, notify func(string)) (response, error) {
	s, err := m.Client.Open(ctx, model, msgs, tools, notify)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// options are the provider's part of the configuration.
func (c Config) options() llm.Options {
	return llm.Options{BaseURL: c.BaseURL, APIKey: c.APIKey, KeyHint: c.KeyHint, Limits: c.Limits, HTTPClient: c.HTTPClient}
}
