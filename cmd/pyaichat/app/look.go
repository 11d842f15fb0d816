package app

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/pyaichat/pyaichat/agent/markdown"
	"github.com/pyaichat/pyaichat/agent/view"
	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/repl/term"
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
	hint := prose(w, "pyaichat: press TAB to ask the assistant about this session (and /help there for its commands).")
	if color {
		hint = "\x1b[2m" + hint + "\x1b[0m"
	}
	fmt.Fprintln(w, hint)
}

// lookOf is how the assistant's answers look on out: laid out from
// their Markdown when out is a terminal, in colour or not (color), to its
// width at the time of each question; a status line where the terminal is
// known to erase a line (TERM set, and not dumb).
func lookOf(out *os.File, color bool) view.Options {
	opts := view.Options{Color: color}
	if !term.IsTerminal(out) {
		return opts
	}
	opts.Terminal = true
	opts.Width = func() int { return columns(out) }
	t, ct := os.Getenv("TERM"), os.Getenv("COLORTERM")
	opts.Colors256 = strings.Contains(t, "256") || ct == "truecolor" || ct == "24bit"
	opts.StatusLine = t != "" && t != "dumb"
	return opts
}

// columns is the terminal's width (80 if it cannot be read).
func columns(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 80
	}
	return int(ws.Col)
}

// prose is a message of pyaichat's own for w, broken at words to its
// width when w is a terminal (which would break it mid-word).
func prose(w io.Writer, text string) string {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(f) {
		return text
	}
	return markdown.Wrap(text, columns(f))
}
