package agent

import (
	"encoding/json"
	"strings"

	"github.com/pyaichat/pyaichat/agent/llm"
)

// textToolCalls recognises a tool call that a small local model printed as
// JSON text instead of calling the tool, e.g.
//
//	{"name": "get_type", "arguments": {"expr": "x"}}
//
// (also in a ```json fence, in <tool_call> tags, as a list, or with
// "parameters"). Only a whole answer that is such JSON naming known tools
// counts; JSON inside prose is left alone. A call to an unknown tool is not
// run: its name is returned, for the user to be told plainly.
func (t *turn) textToolCalls(content string) (calls []llm.ToolCall, unknown string) {
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
		return nil, ""
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
			return nil, ""
		}
	} else {
		var one textCall
		if json.Unmarshal([]byte(body), &one) != nil {
			return nil, ""
		}
		list = []textCall{one}
	}
	for _, c := range list {
		name, args := c.Name, c.Arguments
		if c.Function != nil {
			name, args = c.Function.Name, c.Function.Arguments
		}
		if len(args) == 0 {
			args = c.Parameters
		}
		if name == "" {
			return nil, ""
		}
		if !t.s.names[name] {
			return nil, name
		}
		a := strings.TrimSpace(string(args))
		var s string
		if json.Unmarshal(args, &s) == nil {
			a = s // arguments given as a JSON string
		}
		if a == "" || a == "null" {
			a = "{}"
		}
		calls = append(calls, llm.ToolCall{ID: t.s.model.NewCallID(), Type: "function", Name: name, Arguments: a})
	}
	return calls, ""
}

// stripToolMarkup removes the raw tool-call markup that llama.cpp streams
// as text before its parser recognises the call (fixture
// llamacpp-stream-content-leak-then-tool-call.sse), so it is not sent back
// as something the assistant said.
func stripToolMarkup(content string) string {
	if i := strings.Index(content, textCallTag); i >= 0 {
		return strings.TrimRight(content[:i], " \n")
	}
	return content
}

const textCallTag, textCallEnd = "<tool_call>", "</tool_call>"

// couldBeTextCall reports whether an answer that begins with s could still
// be a whole tool call in <tool_call> tags, the form textToolCalls accepts
// that no ordinary answer starts with. (A bare JSON object or a ```json
// fence is also accepted there, but answers often start that way, so they
// are not held back.)
func couldBeTextCall(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	if len(s) <= len(textCallTag) {
		return strings.HasPrefix(textCallTag, s)
	}
	if !strings.HasPrefix(s, textCallTag) {
		return false
	}
	if i := strings.Index(s, textCallEnd); i >= 0 {
		return strings.TrimSpace(s[i+len(textCallEnd):]) == ""
	}
	return true
}
