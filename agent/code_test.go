package agent

import (
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/markdown"
)

func TestCodeBlock(t *testing.T) {
	s := &Conversation{}
	if _, err := s.CodeBlock(""); err == nil || !strings.Contains(err.Error(), "no code block") {
		t.Errorf("no answer: %v", err)
	}
	s.code = []markdown.CodeBlock{
		{Lang: "python", Text: "a = 1\n"},
		{Lang: "sh", Text: "ls\n"},
		{Lang: "Python", Text: "b = 2\nprint(b)\n\n"},
		{Lang: "", Text: "plain\n"},
	}
	for arg, want := range map[string]string{
		"":  "b = 2\nprint(b)", // the last Python block, without its final line feeds
		"1": "a = 1",
		"2": "ls",
		"4": "plain",
	} {
		if got, err := s.CodeBlock(arg); err != nil || got != want {
			t.Errorf("CodeBlock(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	for _, arg := range []string{"0", "5", "x"} {
		if _, err := s.CodeBlock(arg); err == nil || !strings.Contains(err.Error(), "the last answer has 4 blocks") {
			t.Errorf("CodeBlock(%q): %v", arg, err)
		}
	}
	s.code = s.code[1:2]
	if _, err := s.CodeBlock(""); err == nil || !strings.Contains(err.Error(), "no Python block") {
		t.Errorf("no Python block: %v", err)
	}

}
