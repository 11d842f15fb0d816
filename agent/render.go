package agent

import (
	"context"
	"io"

	"github.com/pyaichat/pyaichat/agent/markdown"
)

// What a question shows on a terminal: the answer laid out from its
// Markdown, <think> blocks as dim thinking, and a status line while
// nothing else is shown. Elsewhere (-p into a pipe) the answer is the
// model's text as it came, less its <think> blocks.

// writers are a question's answer and notice writers, and its status line
// (nil unless Config.StatusLine), through which both write.
func (s *Session) writers(out, notices io.Writer) (o, n *lineWriter, st *statusLine) {
	if s.cfg.StatusLine {
		st = newStatusLine(out, s.cfg.Color, s.cfg.Width)
		out = statusGuard{st, out}
		if notices != nil {
			notices = statusGuard{st, notices}
		}
	}
	o = s.writer(out)
	if s.cfg.Terminal {
		width := 80
		if s.cfg.Width != nil {
			width = s.cfg.Width()
		}
		o.md = markdown.New(out, markdown.Options{Width: width, Color: s.cfg.Color, Colors256: s.cfg.Colors256})
	}
	n = o
	if notices != nil {
		n = s.writer(notices)
	}
	return o, n, st
}

// CodeBlocks are the fenced code blocks of the last answer shown on a
// terminal, in the order of their [N] labels.
func (s *Session) CodeBlocks() []markdown.CodeBlock { return s.code }

// busy shows what the assistant is waiting for on the status line.
func (t *turn) busy(ctx context.Context, label string) { t.status.show(ctx, visible(label)) }

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
