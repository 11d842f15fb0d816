package app

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// editingMode is the line editor's mode: the config file's editing_mode,
// or else the editing-mode that GNU readline's init file sets (python3's
// line editor reads it): $INPUTRC, or ~/.inputrc, or /etc/inputrc.
func editingMode(configured string) string {
	if configured != "" {
		return configured
	}
	for _, path := range inputrcPaths() {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		defer f.Close()
		return inputrcEditingMode(bufio.NewScanner(f))
	}
	return "emacs"
}

// inputrcPaths are the init files GNU readline would read, in the order
// it looks for them; it reads the first that exists.
func inputrcPaths() []string {
	if p := os.Getenv("INPUTRC"); p != "" {
		return []string{p}
	}
	var paths []string
	if home, err := os.UserHomeDir(); err == nil {
		paths = append(paths, filepath.Join(home, ".inputrc"))
	}
	return append(paths, "/etc/inputrc")
}

// inputrcEditingMode is the editing mode an init file sets last, outside
// $if blocks (which apply to other programs or terminals), "emacs" if
// none.
func inputrcEditingMode(lines *bufio.Scanner) string {
	mode, depth := "emacs", 0
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) == 0:
		case f[0] == "$if":
			depth++
		case f[0] == "$endif" && depth > 0:
			depth--
		case depth == 0 && len(f) >= 3 && strings.EqualFold(f[0], "set") && strings.EqualFold(f[1], "editing-mode"):
			if m := strings.ToLower(f[2]); m == "vi" || m == "emacs" {
				mode = m
			}
		}
	}
	return mode
}
