package agent

import "github.com/pyaichat/pyaichat/agent/markdown"

// What a question shows is its view's (Config.View, agent/view): the loop
// only splits the answer's <think> blocks from it, as thinking, and emits
// both.

// CodeBlocks are the fenced code blocks of the last answer, in the order
// of the [N] labels its view showed.
func (s *Conversation) CodeBlocks() []markdown.CodeBlock { return s.code }

// answerText splits a delta of answer text into thinking and answer.
func (t *turn) answerText(text string) {
	t.split.push(text, t.answerPiece)
}

func (t *turn) answerPiece(think bool, text string) {
	if think {
		t.think(text)
		return
	}
	t.endThinking()
	t.answer(text)
}
