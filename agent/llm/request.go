package llm

import (
	"encoding/json"

	// go-openai is used for request encoding only: its Tool and
	// StreamOptions types. Responses are decoded by wire.go, and the
	// stream read by sse.go, because its own decoding and stream reader
	// fail on what real servers send.
	openai "github.com/sashabaranov/go-openai"
)

// Tool describes one tool to the model.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON schema of the arguments object
	// Module is the Python module that defined one of the user's own
	// capabilities (shown by /tools; never sent); "" for pyaichat's.
	Module string
}

// Message is one message of a conversation, in our own terms: the loop and
// its tests never see wire types.
type Message struct {
	Role       string // "system", "user", "assistant" or "tool"
	Content    string
	ToolCalls  []ToolCall // assistant only
	ToolCallID string     // tool only
}

// wireRequest is the body of POST /chat/completions. go-openai's Tool and
// StreamOptions are used as they are; its ChatCompletionMessage is not,
// because it has no field for Gemini's extra_content (the thought signature
// Gemini 3 requires back) and would send a tool call's "type" as "".
type wireRequest struct {
	Model         string                `json:"model"`
	Messages      []wireOutMsg          `json:"messages"`
	Tools         json.RawMessage       `json:"tools,omitempty"`
	Stream        bool                  `json:"stream"`
	StreamOptions *openai.StreamOptions `json:"stream_options,omitempty"`
}

type wireOutMsg struct {
	Role       string            `json:"role"`
	Content    string            `json:"content"`
	ToolCalls  []wireOutToolCall `json:"tool_calls,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
}

type wireOutToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content,omitempty"`
}

func buildRequest(model string, msgs []Message, tools Tools, usage bool) ([]byte, error) {
	if tools.err != nil {
		return nil, tools.err
	}
	req := wireRequest{Model: model, Tools: tools.raw, Stream: true, Messages: make([]wireOutMsg, len(msgs))}
	if usage {
		req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	for i, m := range msgs {
		w := wireOutMsg{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			var o wireOutToolCall
			o.ID, o.Type, o.ExtraContent = tc.ID, "function", tc.Extra
			o.Function.Name, o.Function.Arguments = tc.Name, tc.Arguments
			w.ToolCalls = append(w.ToolCalls, o)
		}
		req.Messages[i] = w
	}
	return json.Marshal(req)
}

// Tools are the tools a conversation offers, encoded once, since the same
// descriptions and schemas go with every request.
type Tools struct {
	raw json.RawMessage // the request's "tools" array; nil for none
	err error           // why they could not be encoded, reported by Open
}

// EncodeTools encodes tools for Open (as go-openai's Tool type). A schema
// that is not JSON makes every request that offers it fail.
func EncodeTools(tools []Tool) Tools {
	if len(tools) == 0 {
		return Tools{}
	}
	raw, err := json.Marshal(openaiTools(tools))
	return Tools{raw: raw, err: err}
}

// openaiTools converts our tool list to go-openai's request type.
func openaiTools(tools []Tool) []openai.Tool {
	out := make([]openai.Tool, len(tools))
	for i, t := range tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: schema,
		}}
	}
	return out
}
