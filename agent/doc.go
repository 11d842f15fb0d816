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
//	  -> the response's text pieces are written to out as they arrive (on
//	     a terminal laid out from its Markdown by agent/markdown, with a
//	     status line while nothing is shown; <think> blocks are thinking,
//	     not answer)
//	  -> tool calls? run each through the Toolset (unknown tool, bad
//	     arguments, repeats become error results; results filtered and
//	     capped; under share = "ask", each result sent only if
//	     Config.Confirm agrees, else a Declined error), answer every id,
//	     and loop; else the answer is done
//	  -> one summary line: calls made and tokens used.
//
// Bounds: MaxSteps tool rounds, QuestionTimeout wall clock, repeated
// identical calls, ToolResultBytes per result, HistoryTokens for the
// conversation, ContextBytes for the automatic context; connect, first-byte
// and idle-stream timeouts. Every ending (answer, bound, failure, Ctrl-C)
// leaves the conversation valid for the next question.
//
// The loop speaks to the provider only through the small model and
// response interfaces of model.go, in the provider's own types (Message,
// ToolCall, Tool, Usage are agent/llm's); it never sees the wire format.
// This package knows of the terminal only what Config says (Terminal,
// Width, Color, StatusLine), and nothing of repl or Python.
package agent
