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
	list, ok := parseTextCalls(unwrapTextCall(content))
	if !ok {
		return nil, ""
	}
	for _, c := range list {
		name, args := c.nameAndArguments()
		if name == "" {
			return nil, ""
		}
		if !t.s.offered().names[name] {
			return nil, name
		}
		calls = append(calls, llm.ToolCall{ID: t.s.model.NewCallID(), Type: "function", Name: name, Arguments: args})
	}
	return calls, ""
}

// textCall is one tool call as small models print it: the OpenAI shape
// with "function", or flat with "arguments" or "parameters".
type textCall struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
	Function   *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// unwrapTextCall takes an answer out of a ``` fence and <tool_call> tags.
func unwrapTextCall(content string) string {
	body := strings.TrimSpace(content)
	if b, ok := strings.CutPrefix(body, "```"); ok {
		if nl := strings.IndexByte(b, '\n'); nl >= 0 && strings.HasSuffix(b, "```") {
			body = strings.TrimSpace(strings.TrimSuffix(b[nl+1:], "```"))
		}
	}
	if b, ok := strings.CutPrefix(body, textCallTag); ok {
		body = strings.TrimSpace(strings.TrimSuffix(b, textCallEnd))
	}
	return body
}

// parseTextCalls decodes body as one call or a list of calls; ok is false
// when body is not wholly such JSON.
func parseTextCalls(body string) (list []textCall, ok bool) {
	switch {
	case strings.HasPrefix(body, "["):
		ok = json.Unmarshal([]byte(body), &list) == nil
	case strings.HasPrefix(body, "{"):
		var one textCall
		ok = json.Unmarshal([]byte(body), &one) == nil
		list = []textCall{one}
	}
	return list, ok
}

// nameAndArguments returns the tool's name and its arguments as a JSON
// object's text, "{}" when there are none.
func (c textCall) nameAndArguments() (name, args string) {
	name, raw := c.Name, c.Arguments
	if c.Function != nil {
		name, raw = c.Function.Name, c.Function.Arguments
	}
	if len(raw) == 0 {
		raw = c.Parameters
	}
	args = strings.TrimSpace(string(raw))
	var s string
	if json.Unmarshal(raw, &s) == nil {
		args = s // arguments given as a JSON string
	}
	if args == "" || args == "null" {
		args = "{}"
	}
	return name, args
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
