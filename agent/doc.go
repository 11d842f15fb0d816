// Package agent is the ai> assistant: a bounded agent loop over any
// OpenAI-compatible chat-completions server, seeing the Python session only
// through a Toolset (the capabilities registry, adapted in cmd/pyaichat).
// It speaks the capabilities' error vocabulary (capabilities/spec) and
// needs no Python: its tests start no interpreter.
//
// Data flow of one question (Session.Handle or Session.Ask):
//
//	question -> history + system prompt (with the capped automatic context)
//	  -> model.Open (model.go): the provider, agent/llm, in production:
//	     POST /chat/completions, stream:true, with its retries, its SSE
//	     reader and its tolerant decoding of what servers send
//	  -> the response's text pieces are emitted as they arrive (events.go;
//	     <think> blocks as thinking, not answer; the key filtered out
//	     across pieces)
//	  -> tool calls? run each through the Toolset (unknown tool, bad
//	     arguments, repeats become error results; results filtered and
//	     capped; under share = "ask", each result sent only if
//	     Config.Confirm agrees, else a Declined error), answer every id,
//	     and loop; else the answer is done
//	  -> the answer, usage, error or cancellation, and last a summary:
//	     calls made and tokens used.
//
// The loop draws nothing. Every event goes to Config.Events (the session
// log, -p's JSON) and to the question's View (Config.View: agent/view on
// a terminal or a pipe), which also draws around the question under
// share = "ask" and shows Ctrl-C; a slash command's output goes to a View
// too, as Output events. The event types are agent/event's (event.Event,
// event.Text...).
//
// Bounds (bounds.go, the one place that decides whether a question goes
// on): MaxSteps tool rounds, MaxCallsPerStep, QuestionTimeout wall clock,
// repeated identical calls, ToolResultBytes per result; besides them
// HistoryTokens for the conversation, ContextBytes for the automatic
// context, and the provider's connect, first-byte and idle-stream
// timeouts and response cap. Every ending (answer, bound, failure,
// Ctrl-C) leaves the conversation valid for the next question.
//
// The loop speaks to the provider only through the small model and
// response interfaces of model.go, in the provider's own types (Message,
// ToolCall, Tool, Usage are agent/llm's); it never sees the wire format.
// This package knows nothing of the terminal, of repl or of Python.
package agent
