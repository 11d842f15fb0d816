package main

import (
	"fmt"
	"io"
	"os"

	"github.com/pyaichat/pyaichat/pybridge"
)

// colorWanted says whether pyaichat may colour what it draws, by the
// conventions users set: PYTHON_COLORS (1 or 0, as Python 3.13 reads it,
// before the others), NO_COLOR, FORCE_COLOR, and otherwise a terminal
// that can show colour.
func colorWanted(terminal bool) bool {
	switch os.Getenv("PYTHON_COLORS") {
	case "1":
		return true
	case "0":
		return false
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	if os.Getenv("FORCE_COLOR") != "" {
		return true
	}
	return terminal && os.Getenv("TERM") != "dumb"
}

// banner is what python3 -i prints before its first prompt on a terminal,
// and a line on how to reach the assistant, dim when color is set.
func banner(w io.Writer, color bool) {
	fmt.Fprintf(w, "Python %s on %s\n", pybridge.Version(), pybridge.Platform())
	fmt.Fprintln(w, `Type "help", "copyright", "credits" or "license" for more information.`)
	hint := "pyaichat: press TAB to ask the assistant about this session (and /help there for its commands)."
	if color {
		hint = "\x1b[2m" + hint + "\x1b[0m"
	}
	fmt.Fprintln(w, hint)
}
