// Package spec is what the model is told about pyaichat's capabilities,
// apart from running them: their names, descriptions and argument schemas,
// and the one vocabulary of errors that everything the model sees uses
// (the capabilities themselves, and the agent loop around them). It needs
// no Python and no cgo, so the agent and its tests can use the real
// schemas without starting an interpreter.
package spec

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/sashabaranov/go-openai/jsonschema"
)

// Kind names what went wrong, as the model reads it in an error result
// {"error":{"type":Kind,"message":...}}. One spelling per event: a Python
// exception raised by the user's code is reported under its own name
// (NameError, KeyError) instead.
type Kind = string

// The kinds pyaichat itself reports.
const (
	// InvalidArguments: a malformed call (unknown tool arguments, a
	// missing or empty expression, arguments that are not an object); no
	// Python ran.
	InvalidArguments Kind = "InvalidArguments"
	// UnknownTool: the model named a tool that does not exist.
	UnknownTool Kind = "UnknownTool"
	// Refused: the read-only policy stopped the call.
	Refused Kind = "Refused"
	// Timeout: the call's deadline passed; what ran it was stopped.
	Timeout Kind = "Timeout"
	// Canceled: the user stopped the question (Ctrl-C) before the call
	// ended or ran.
	Canceled Kind = "Canceled"
	// Crashed: the copy of the session that ran the call died.
	Crashed Kind = "Crashed"
	// Repeated: the same call was already made for this question.
	Repeated Kind = "Repeated"
	// TooManyCalls: over the calls allowed in one step; not run.
	TooManyCalls Kind = "TooManyCalls"
	// NotRun: the loop ended before the call ran.
	NotRun Kind = "NotRun"
	// Declined: the user chose not to send the result (share = "ask").
	Declined Kind = "Declined"
	// Hidden: the result is not sent under the privacy policy.
	Hidden Kind = "Hidden"
	// Internal: pyaichat itself failed (a bug, or the interpreter's
	// helper could not load).
	Internal Kind = "InternalError"
)

// Error is a failure reported to the model as a result rather than as a
// Go error: {"type", "message"}.
type Error struct {
	Type    Kind   `json:"type"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

// Result is e as a tool result: {"error":{"type":...,"message":...}}.
func (e *Error) Result() string {
	b, err := json.Marshal(map[string]*Error{"error": e})
	if err != nil { // a string and a string always marshal
		panic(err)
	}
	return string(b)
}

// ErrorResult is the tool result for an error of kind with msg.
func ErrorResult(kind Kind, msg string) string { return (&Error{Type: kind, Message: msg}).Result() }

// NoParams is the parameter struct of capabilities that take no arguments.
type NoParams struct{}

// ExprParams is the parameter struct of capabilities that look at the value
// of one expression.
type ExprParams struct {
	Expr string `json:"expr" description:"A Python expression evaluated in the session's namespace, e.g. df.shape, items[0] or type(x).__mro__. An expression, not a statement."`
}

// Capability is one row of the table: its name, its arguments, and how
// the session may be touched while it answers.
type Capability struct {
	Name string
	// Summary is a short line for people (/tools); the model reads the
	// whole description.
	Summary string
	Params  any // NoParams or ExprParams
	// ReadsSource says the answer may read source files into linecache,
	// a change to the session that a copy made before it would miss: it
	// runs in the session itself, not beside a ready copy.
	ReadsSource bool
}

// TakesExpr reports whether c takes an expression.
func (c Capability) TakesExpr() bool {
	_, ok := c.Params.(ExprParams)
	return ok
}

// Table is in the order a model should consider the capabilities.
var Table = []Capability{
	{Name: "list_globals", Summary: "the names you defined, with previews", Params: NoParams{}},
	{Name: "get_type", Summary: "the type of an expression's value", Params: ExprParams{}},
	{Name: "get_repr", Summary: "an expression's repr, bounded", Params: ExprParams{}},
	{Name: "get_dir", Summary: "an expression's attributes, as dir()", Params: ExprParams{}},
	{Name: "get_doc", Summary: "an expression's docstring, signature", Params: ExprParams{}},
	{Name: "eval_expr", Summary: "one expression, run in a copy", Params: ExprParams{}},
	{Name: "get_last_exception", Summary: "the last exception and its frames", Params: NoParams{}, ReadsSource: true},
}

// Find is the capability named name.
func Find(name string) (Capability, bool) {
	for _, c := range Table {
		if c.Name == name {
			return c, true
		}
	}
	return Capability{}, false
}

// Names lists the capabilities' names, in Table's order.
func Names() []string {
	names := make([]string, len(Table))
	for i, c := range Table {
		names[i] = c.Name
	}
	return names
}

// Spec describes a capability to a model.
type Spec struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON schema of the arguments object
}

//go:embed desc/*.md
var descriptions embed.FS

// List describes every capability, in Table's order. The specs are
// computed once: they depend only on the table.
var List = sync.OnceValue(func() []Spec {
	out := make([]Spec, 0, len(Table))
	for _, c := range Table {
		desc, err := descriptions.ReadFile("desc/" + c.Name + ".md")
		if err != nil {
			panic(fmt.Sprintf("capabilities: no description for %s: %v", c.Name, err))
		}
		def, err := jsonschema.GenerateSchemaForType(c.Params)
		if err != nil {
			panic(fmt.Sprintf("capabilities: schema for %s: %v", c.Name, err))
		}
		def.AdditionalProperties = false
		schema, err := json.Marshal(def)
		if err != nil {
			panic(fmt.Sprintf("capabilities: schema for %s: %v", c.Name, err))
		}
		out = append(out, Spec{Name: c.Name, Description: strings.TrimSpace(string(desc)), Schema: schema})
	}
	return out
})
