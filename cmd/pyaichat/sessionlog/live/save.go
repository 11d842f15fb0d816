package live

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyaichat/pyaichat/cmd/pyaichat/sessionlog"
	"github.com/pyaichat/pyaichat/repl"
)

// SaveCommand is /save FILE, at py> and at ai>.
func SaveCommand(w *sessionlog.Writer) repl.Command {
	return repl.Command{Name: "/save", Args: "FILE", Help: "write this session as FILE.ipynb, FILE.py or FILE.md", AtPy: true,
		Run: func(_ context.Context, path string, out io.Writer) (repl.Action, error) {
			save(w, path, out)
			return repl.Action{}, nil
		}}
}

// save is /save FILE: this session so far, exported.
func save(w *sessionlog.Writer, path string, out io.Writer) {
	switch {
	case w == nil:
		fmt.Fprintln(out, "this session is not logged (--no-log or log = false), so there is nothing to save")
		return
	case path == "":
		fmt.Fprintln(out, "usage: /save FILE (.ipynb, .py or .md)")
		return
	}
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	recs, err := sessionlog.Read(w.Path)
	if err == nil {
		err = sessionlog.Export(recs, path)
	}
	if err != nil {
		fmt.Fprintf(out, "could not save: %v\n", err)
		return
	}
	fmt.Fprintf(out, "saved this session to %s\n", path)
}
