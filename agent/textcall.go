package agent

import (
	"encoding/json"
	"strings"
)

// textToolCalls recognises a tool call that a small local model printed as
// JSON text instead of calling the tool, e.g.
//
//	{"name": "get_type", "arguments": {"expr": "x"}}
//
// (also in a ```json fence, in <tool_call> tags, as a list, or with
// "parameters"). Only a whole answer that is such JSON naming known tools
// counts; JSON inside prose is left alone. A call to an unknown tool is not
// run: the user is told plainly instead.
func (t *turn) textToolCalls(content string) ([]ToolCall, bool) {
	body := strings.TrimSpace(content)
	if b, ok := strings.CutPrefix(body, "```"); ok {
		if nl := strings.IndexByte(b, '\n'); nl >= 0 && strings.HasSuffix(b, "```") {
			body = strings.TrimSpace(strings.TrimSuffix(b[nl+1:], "```"))
		}
	}
	if b, ok := strings.CutPrefix(body, "<tool_call>"); ok {
		body = strings.TrimSpace(strings.TrimSuffix(b, "</tool_call>"))
	}
	if body == "" || (body[0] != '{' && body[0] != '[') {
		return nil, false
	}
	type textCall struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
		Function   *struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	var list []textCall
	if body[0] == '[' {
		if json.Unmarshal([]byte(body), &list) != nil {
			return nil, false
		}
	} else {
		var one textCall
		if json.Unmarshal([]byte(body), &one) != nil {
			return nil, false
		}
		list = []textCall{one}
	}
	var calls []ToolCall
	for _, c := range list {
		name, args := c.Name, c.Arguments
		if c.Function != nil {
			name, args = c.Function.Name, c.Function.Arguments
		}
		if len(args) == 0 {
			args = c.Parameters
		}
		if name == "" {
			return nil, false
		}
		if !t.s.names[name] {
			t.notify("(the model wrote a call to " + name + " as text, but there is no such tool; nothing was run)")
			return nil, false
		}
		a := strings.TrimSpace(string(args))
		var s string
		if json.Unmarshal(args, &s) == nil {
			a = s // arguments given as a JSON string
		}
		if a == "" || a == "null" {
			a = "{}"
		}
		calls = append(calls, ToolCall{ID: t.s.client.newID(), Type: "function", Name: name, Arguments: a})
	}
	return calls, len(calls) > 0
}

// stripToolMarkup removes the raw tool-call markup that llama.cpp streams
// as text before its parser recognises the call (fixture
// llamacpp-stream-content-leak-then-tool-call.sse), so it is not sent back
// as something the assistant said.
func stripToolMarkup(content string) string {
	if i := strings.Index(content, "<tool_call>"); i >= 0 {
		return strings.TrimRight(content[:i], " \n")
	}
	return content
}
