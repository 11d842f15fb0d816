package agent

import (
	"context"
	"encoding/json"

	"github.com/pyaichat/pyaichat/capabilities"
)

// FromRegistry adapts the capabilities registry to the loop's Toolset: the
// seven capabilities keep their names, descriptions and schemas, and a
// capability error ({"type","message"}) goes back to the model as an error
// result {"error":{...}} rather than a Go error (tool failures are the
// model's to see; Go errors are for infrastructure).
func FromRegistry(r *capabilities.Registry) Toolset { return registryTools{r} }

type registryTools struct{ r *capabilities.Registry }

func (t registryTools) Tools() []Tool {
	specs := t.r.List()
	out := make([]Tool, len(specs))
	for i, s := range specs {
		out[i] = Tool{Name: s.Name, Description: s.Description, Schema: s.Schema}
	}
	return out
}

// Prepare readies the capabilities for the calls of a question to come.
func (t registryTools) Prepare() { _ = t.r.Prepare() } // a load error is reported by the call itself

func (t registryTools) Call(ctx context.Context, name string, args json.RawMessage) (string, bool) {
	res, cerr := t.r.Call(ctx, name, args)
	if cerr != nil {
		b, err := json.Marshal(map[string]*capabilities.Error{"error": cerr})
		if err != nil {
			return errorResult("InternalError", cerr.Error()), true
		}
		return string(b), true
	}
	return string(res), false
}
