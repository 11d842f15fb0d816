package app

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/pyaichat/pyaichat/agent"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/capabilities"
	"github.com/pyaichat/pyaichat/capabilities/spec"
)

// capabilityTools adapts the capabilities registry to the agent's Toolset:
// the seven capabilities keep their names, descriptions and schemas, and a
// capability error goes back to the model as an error result
// {"error":{"type","message"}} rather than a Go error (tool failures are
// the model's to see; Go errors are for infrastructure). It lives here, in
// the composition root, so that the agent needs no Python.
func capabilityTools(r *capabilities.Registry) agent.Toolset { return registryTools{r} }

type registryTools struct{ r *capabilities.Registry }

func (t registryTools) Tools() []llm.Tool {
	specs := t.r.List()
	out := make([]llm.Tool, len(specs))
	for i, s := range specs {
		out[i] = llm.Tool{Name: s.Name, Description: s.Description, Schema: s.Schema}
	}
	// The user's own come after the seven, in the same order.
	user := t.r.User()
	for i := range user {
		out[len(out)-len(user)+i].Module = user[i].Module
	}
	return out
}

// Prepare readies the capabilities for the calls of a question to come; a
// load error is reported by the call itself.
func (t registryTools) Prepare() { _ = t.r.Prepare() }

// Release lets the capabilities' ready copy of the session go.
func (t registryTools) Release() { t.r.Release() }

func (t registryTools) Call(ctx context.Context, name string, args json.RawMessage) (string, bool) {
	res, err := t.r.Call(ctx, name, args)
	if err != nil {
		return capabilityError(err).Result(), true
	}
	return string(res), false
}

// capabilityError is a capability's failure as the model and --capability
// show it: the registry's *spec.Error.
func capabilityError(err error) *spec.Error {
	var cerr *spec.Error
	if errors.As(err, &cerr) {
		return cerr
	}
	return &spec.Error{Type: spec.Internal, Message: err.Error()}
}
