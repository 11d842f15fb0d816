package agent

import (
	"context"
	"encoding/json"

	"github.com/pyaichat/pyaichat/agent/llm"
)

// Toolset is what the loop needs from the capabilities: their descriptions
// and a way to call one. It is defined here, not in capabilities, so that the
// loop and its tests do not depend on the Python side (cmd/pyaichat adapts
// the real registry).
type Toolset interface {
	Tools() []llm.Tool
	// Call runs one tool. A failure the model should see (bad expression,
	// NameError, timeout) is a result with isError set, not a Go error.
	Call(ctx context.Context, name string, args json.RawMessage) (result string, isError bool)
}
