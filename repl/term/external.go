package term

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// editExternally is C-x C-e (and v in vi mode): the line goes to a file,
// $VISUAL or $EDITOR (vi if neither is set) edits it on the terminal,
// cooked as it is for any program, and the file's text comes back into
// the line to edit on; a failing editor leaves the line as it was, with a
// line that says why.
func (ed *editing) editExternally() {
	e := ed.e
	// The line as it is, then the editor below it.
	e.drawFrame(e.view.redrawPlain(ed.line))
	e.out.flush()
	io.WriteString(e.out, "\r\n"+bracketedPasteOff)
	e.raw.exit()
	text, err := runEditor(e.term, string(ed.line))
	io.WriteString(e.out, bracketedPasteOn)
	e.raw.enter()
	e.view.reset()
	e.out.forget()
	ed.stale = true
	// The editor's own Ctrl-C reached pyaichat too.
	e.interrupted.Store(false)
	if err != nil {
		fmt.Fprintf(e.out, "pyaichat: %v\r\n", err)
		return
	}
	ed.set([]rune(text), len([]rune(text)), editOther)
}

// runEditor has the user's editor edit text in a file of its own, with
// the terminal in the mode it had before the prompt, and returns the
// file's text, without the line feed editors end a file with.
func runEditor(t *Terminal, text string) (string, error) {
	f, err := os.CreateTemp("", "pyaichat-*.py")
	if err != nil {
		return "", fmt.Errorf("editing the line: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = io.WriteString(f, text+"\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("editing the line: %w", err)
	}
	editor := cmp.Or(os.Getenv("VISUAL"), os.Getenv("EDITOR"), "vi")
	// As a shell would run it: the variable may hold options.
	cmd := exec.Command("/bin/sh", "-c", editor+` "$1"`, "sh", f.Name())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = t.in, t.in, t.in
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("the editor (%s) failed: %v", editor, err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return "", fmt.Errorf("reading the edited line: %w", err)
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}
