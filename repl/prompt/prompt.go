// Package prompt holds the REPL's prompts. It is a leaf, so that the
// loop (repl), the line editor (repl/term), the session log's viewer
// (cmd/pyaichat/sessionlog) and resume write the same words without the
// log importing the terminal.
package prompt

const (
	// Py is the prompt of py>, where Python runs.
	Py = "py> "
	// AI is the prompt of ai>, where the assistant answers.
	AI = "ai> "
	// Continuation starts each line of an input after the first, as
	// python3's sys.ps2.
	Continuation = "... "
)
