package app

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInputrcEditingMode(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "emacs",
		"set editing-mode vi\n":   "vi",
		"# set editing-mode vi\n": "emacs",
		"set editing-mode vi\nset editing-mode emacs\n": "emacs",
		"$if Bash\nset editing-mode vi\n$endif\n":       "emacs",
		"SET Editing-Mode VI\n":                         "vi",
		"set editing-mode\n":                            "emacs",
	} {
		if got := inputrcEditingMode(bufio.NewScanner(strings.NewReader(in))); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}

// The config file's editing_mode wins; without it, $INPUTRC is read.
func TestEditingMode(t *testing.T) {
	rc := filepath.Join(t.TempDir(), "inputrc")
	if err := os.WriteFile(rc, []byte("set editing-mode vi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("INPUTRC", rc)
	if got := editingMode(""); got != "vi" {
		t.Errorf("with $INPUTRC setting vi: %s", got)
	}
	if got := editingMode("emacs"); got != "emacs" {
		t.Errorf("with editing_mode = emacs: %s", got)
	}
}
