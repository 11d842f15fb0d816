package repl

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// historyLimit is how many entries each mode keeps.
const historyLimit = 1000

// history is one mode's list of entered lines, persisted one per line.
type history struct {
	path    string
	entries []string
}

// histories holds the py> and ai> histories.
type histories struct {
	py, ai history
	warn   func(string) // one warning per unusable file
	// saveAI is what an ai> line becomes in its file (Options.SaveAI).
	saveAI func(string) string
}

func loadHistories(dir string, warn func(string), saveAI func(string) string) *histories {
	h := &histories{warn: warn, saveAI: saveAI}
	if dir == "" {
		return h
	}
	h.py = h.load(filepath.Join(dir, "history-py"))
	h.ai = h.load(filepath.Join(dir, "history-ai"))
	return h
}

func (h *histories) of(m Mode) *history {
	if m == ModeAI {
		return &h.ai
	}
	return &h.py
}

// load reads a history file. A missing file is an empty history; an
// unreadable or corrupt one gives one warning and an empty history, and is
// not written to, so nothing the user had is overwritten.
func (h *histories) load(path string) history {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return history{path: path}
	}
	if err != nil {
		h.warn(fmt.Sprintf("history %s is unreadable (%v); history is not saved this session", path, err))
		return history{}
	}
	defer f.Close()
	var entries []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20) // grown from 4 KB as long entries need
	for sc.Scan() {
		entries = append(entries, unescapeHistory(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		h.warn(fmt.Sprintf("history %s is corrupt (%v); history is not saved this session", path, err))
		return history{}
	}
	if len(entries) > historyLimit {
		entries = entries[len(entries)-historyLimit:]
	}
	return history{path: path, entries: entries}
}

// add records an entered line in memory and appends it to the file.
func (h *histories) add(m Mode, line string) {
	hist := h.of(m)
	if strings.TrimSpace(line) == "" {
		return
	}
	if n := len(hist.entries); n > 0 && hist.entries[n-1] == line {
		return
	}
	hist.entries = append(hist.entries, line)
	if len(hist.entries) > historyLimit {
		hist.entries = hist.entries[len(hist.entries)-historyLimit:]
	}
	if hist.path == "" {
		return
	}
	if m == ModeAI && h.saveAI != nil {
		line = h.saveAI(line)
	}
	if err := appendLine(hist.path, escapeHistory(line)); err != nil {
		h.warn(fmt.Sprintf("cannot save history to %s: %v", hist.path, err))
		hist.path = "" // warn once
	}
}

func appendLine(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, werr := io.WriteString(f, line+"\n")
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// A pasted block is one entry: its newlines are stored escaped.
func escapeHistory(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func unescapeHistory(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
