package repl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHistoryPersistsPerMode(t *testing.T) {
	dir := t.TempDir()
	var warnings []string
	warn := func(s string) { warnings = append(warnings, s) }
	h := loadHistories(dir, warn, nil)
	h.add(ModePy, "x = 1")
	h.add(ModePy, "def f():\n    return 'a\\\\b'")
	h.add(ModeAI, "what is x?")
	h.add(ModePy, "x = 1") // not a repeat of the previous entry
	h.add(ModePy, "x = 1") // a repeat: kept once
	h.add(ModePy, "   ")   // blank: not kept

	again := loadHistories(dir, warn, nil)
	wantPy := []string{"x = 1", "def f():\n    return 'a\\\\b'", "x = 1"}
	if strings.Join(again.py.entries, "|") != strings.Join(wantPy, "|") {
		t.Errorf("py history %q, want %q", again.py.entries, wantPy)
	}
	if strings.Join(again.ai.entries, "|") != "what is x?" {
		t.Errorf("ai history %q", again.ai.entries)
	}
	if len(warnings) != 0 {
		t.Errorf("unexpected warnings %q", warnings)
	}
}

func TestUnusableHistoryWarnsOnceAndIsLeftAlone(t *testing.T) {
	dir := t.TempDir()
	// A directory where the file should be: unreadable as a history.
	if err := os.Mkdir(filepath.Join(dir, "history-py"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A line longer than the scanner accepts: a corrupt file.
	huge := strings.Repeat("x", 5<<20)
	if err := os.WriteFile(filepath.Join(dir, "history-ai"), []byte(huge+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	h := loadHistories(dir, func(s string) { warnings = append(warnings, s) }, nil)
	if len(warnings) != 2 {
		t.Fatalf("warnings %q, want one per unusable file", warnings)
	}
	h.add(ModeAI, "question")
	data, err := os.ReadFile(filepath.Join(dir, "history-ai"))
	if err != nil || string(data) != huge+"\n" {
		t.Fatalf("corrupt history was modified (%d bytes, %v)", len(data), err)
	}
	if len(h.ai.entries) != 1 {
		t.Fatalf("in-memory history %q", h.ai.entries)
	}
}
