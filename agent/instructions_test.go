package agent

import (
	"context"
	"strings"
	"testing"
)

// /instructions shows each file in force and its text as the model gets
// it, secrets filtered; with none it says where to write them.
func TestInstructionsCommand(t *testing.T) {
	f := newFake(t)
	cfg := f.config()
	cfg.InstructionsHelp = "/home/u/.config/pyaichat/instructions.md or in .pyaichat.md of the project"
	s := NewConversation(cfg, &fakeTools{}, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "/instructions", out); err != nil {
		t.Fatal(err)
	}
	if want := "no instructions: write them in /home/u/.config/pyaichat/instructions.md or in .pyaichat.md of the project\n"; out.String() != want {
		t.Errorf("/instructions without any: %q", out.String())
	}
	cfg.Instructions = []Instructions{{From: "/p/.pyaichat.md", Text: "Use polars. token AKIA" + "IOSFODNN7EXAMPLE\n", CutAt: 16384}}
	s = NewConversation(cfg, &fakeTools{}, nil)
	out = newSyncBuffer()
	if err := s.Handle(context.Background(), "/instructions", out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.HasPrefix(got, "from /p/.pyaichat.md (cut at 16384 bytes):\nUse polars. token <redacted: AWS access key") {
		t.Errorf("/instructions: %q", got)
	}
}
