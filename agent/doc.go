// Package agent is the ai> assistant: a bounded agent loop over any
// OpenAI-compatible chat-completions server, seeing the Python session only
// through a Toolset (the capabilities registry, adapted in cmd/pyaichat).
// It speaks the capabilities' error vocabulary (capabilities/spec) and
// needs no Python: its tests start no interpreter.
//
// Data flow of one question (Session.Handle or Session.Ask):
//
//	question -> history + system prompt (with the capped automatic context)
//	  -> client.open: POST /chat/completions, stream:true; retries
//	     (connection errors that may pass, 408, 409, 429, 5xx; never
//	     400/401/403/404 or insufficient_quota) with backoff, jitter and
//	     capped Retry-After
//	  -> Stream: our SSE reader (sse.go) and tolerant accumulator (wire.go);
//	     text is written to out as it arrives (on a terminal laid out
//	     from its Markdown by agent/markdown, with a status line while
//	     nothing is shown; <think> blocks are thinking, not answer)
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
// Imports flow one way: repl -> agent -> capabilities -> pybridge; this
// package knows of the terminal only what Config says (Terminal, Width,
// Color, StatusLine).
package agent
