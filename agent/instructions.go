package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyaichat/pyaichat/agent/termsafe"
)

// MaxInstructionBytes bounds each instructions file: they go with every
// request, so a large one would crowd out the conversation.
const MaxInstructionBytes = 16 << 10

// ProjectInstructionsFile is the project's instructions, in the working
// directory or a directory above it, up to the repository's root.
const ProjectInstructionsFile = ".pyaichat.md"

// Instructions is what the user tells the assistant for every question
// (an answer's language, the project's libraries, the length of
// answers), from one file.
type Instructions struct {
	From string // the file
	Text string
	Cut  bool // the file was longer than MaxInstructionBytes
}

// LoadInstructions reads the user's instructions file (userFile, which
// may not exist) and the project's, the nearest ProjectInstructionsFile
// from workDir up to the repository root (the directory holding .git;
// workDir alone outside a repository). What cannot be read is an error
// each, one line naming the file; the other file still counts.
func LoadInstructions(userFile, workDir string) ([]Instructions, []error) {
	var out []Instructions
	var errs []error
	for _, path := range []string{userFile, projectInstructions(workDir)} {
		if path == "" {
			continue
		}
		in, err := readInstructions(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, fmt.Errorf("instructions %s: %w", path, err))
		case strings.TrimSpace(in.Text) != "":
			out = append(out, in)
		}
	}
	return out, errs
}

// projectInstructions is the path of the project's instructions file, or
// "" when there is none.
func projectInstructions(workDir string) string {
	if workDir == "" {
		return ""
	}
	root := repositoryRoot(workDir)
	for dir := workDir; ; dir = filepath.Dir(dir) {
		path := filepath.Join(dir, ProjectInstructionsFile)
		if _, err := os.Lstat(path); err == nil {
			return path
		}
		if root == "" || dir == root || filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// repositoryRoot is the nearest directory at or above dir that holds
// .git, or "".
func repositoryRoot(dir string) string {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// readInstructions reads one file, a regular one (openRegular), cut at
// MaxInstructionBytes on a line's end where one is near.
func readInstructions(path string) (Instructions, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return Instructions{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxInstructionBytes+1))
	if err != nil {
		return Instructions{}, err
	}
	in := Instructions{From: path}
	if len(data) > MaxInstructionBytes {
		data, in.Cut = data[:MaxInstructionBytes], true
		if i := strings.LastIndexByte(string(data), '\n'); i > MaxInstructionBytes/2 {
			data = data[:i+1]
		}
	}
	in.Text = strings.ToValidUTF8(string(data), "\uFFFD")
	return in, nil
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
		_, err := fmt.Fprintf(out, "no instructions: write them in %s or in %s of the project\n", s.cfg.InstructionsFile, ProjectInstructionsFile)
		return err
	}
	var b strings.Builder
	for i, in := range s.cfg.Instructions {
		if i > 0 {
			b.WriteString("\n")
		}
		text, _ := s.filter.Text(strings.TrimSpace(in.Text))
		note := ""
		if in.Cut {
			note = fmt.Sprintf(" (cut at %d bytes)", MaxInstructionBytes)
		}
		fmt.Fprintf(&b, "from %s%s:\n%s\n", termsafe.Visible(in.From), note, termsafe.Visible(text))
	}
	_, err := io.WriteString(out, b.String())
	return err
}
