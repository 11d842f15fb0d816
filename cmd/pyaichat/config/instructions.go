package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyaichat/pyaichat/agent"
)

// MaxInstructionBytes bounds each instructions file: they go with every
// request, so a large one would crowd out the conversation.
const MaxInstructionBytes = 16 << 10

// ProjectInstructionsFile is the project's instructions, in the working
// directory or a directory above it, up to the repository's root.
const ProjectInstructionsFile = ".pyaichat.md"

// InstructionsHelp says where instructions go, for /instructions when
// there are none: userFile, or the project's file.
func InstructionsHelp(userFile string) string {
	return userFile + " or in " + ProjectInstructionsFile + " of the project"
}

// LoadInstructions reads the user's instructions file (userFile, which
// may not exist) and the project's, the nearest ProjectInstructionsFile
// from workDir up to the repository root (the directory holding .git;
// workDir alone outside a repository). What cannot be read is an error
// each, one line naming the file; the other file still counts.
func LoadInstructions(userFile, workDir string) ([]agent.Instructions, []error) {
	var out []agent.Instructions
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
func readInstructions(path string) (agent.Instructions, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return agent.Instructions{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxInstructionBytes+1))
	if err != nil {
		return agent.Instructions{}, err
	}
	in := agent.Instructions{From: path}
	if len(data) > MaxInstructionBytes {
		data, in.CutAt = data[:MaxInstructionBytes], MaxInstructionBytes
		if i := strings.LastIndexByte(string(data), '\n'); i > MaxInstructionBytes/2 {
			data = data[:i+1]
		}
	}
	in.Text = strings.ToValidUTF8(string(data), "\uFFFD")
	return in, nil
}
