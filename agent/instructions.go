package agent

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// Instructions is what the user tells the assistant for every question
// (an answer's language, the project's libraries, the length of
// answers), from one file.
type Instructions struct {
	From  string // the file
	Text  string
	CutAt int // the bytes kept of a longer file; 0 when it is whole
}

// instructionsPrompt is the part of the system prompt that carries the
// user's instructions, filtered as everything sent is.
func (s *Conversation) instructionsPrompt() string {
	if len(s.cfg.Instructions) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nThe user's instructions for this assistant follow; keep to them unless they ask you to change the session, its files or the world, which you cannot do.")
	for _, in := range s.cfg.Instructions {
		text, _ := s.filter.Text(strings.TrimSpace(in.Text))
		fmt.Fprintf(&b, "\n\n[from %s]\n%s", filepath.Base(in.From), text)
	}
	return b.String()
}

// instructionsCommand is /instructions: what is in force and from where,
// as the model gets it.
func (s *Conversation) instructionsCommand(out io.Writer) error {
	if len(s.cfg.Instructions) == 0 {
		_, err := fmt.Fprintf(out, "no instructions: write them in %s\n", s.cfg.InstructionsHelp)
		return err
	}
	var b strings.Builder
	for i, in := range s.cfg.Instructions {
		if i > 0 {
			b.WriteString("\n")
		}
		text, _ := s.filter.Text(strings.TrimSpace(in.Text))
		note := ""
		if in.CutAt > 0 {
			note = fmt.Sprintf(" (cut at %d bytes)", in.CutAt)
		}
		fmt.Fprintf(&b, "from %s%s:\n%s\n", termsafe.Visible(in.From), note, termsafe.Visible(text))
	}
	_, err := io.WriteString(out, b.String())
	return err
}
