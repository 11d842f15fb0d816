package repl

import (
	"testing"

	"github.com/pyaichat/pyaichat/repl/prompt"
	"github.com/pyaichat/pyaichat/repl/term"
)

// The line editor draws the rows of a block after the first with its own
// constant: it must be the continuation prompt the loop and the session
// log write.
func TestEditorContinuationPromptIsTheLoops(t *testing.T) {
	if term.ContinuationPrompt != prompt.Continuation {
		t.Fatalf("repl/term draws %q, repl/prompt says %q", term.ContinuationPrompt, prompt.Continuation)
	}
}
