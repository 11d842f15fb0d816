//go:build cgo

package pybridge

import (
	"os"
	"path/filepath"
	"testing"
)

// A helper's compiled copy is kept, used by the next load of the same
// source, and ignored when it is not a copy this Python made.
func TestCodeCache(t *testing.T) {
	dir := t.TempDir()
	cache := codeCache{dir: dir}

	const answerA = "def answer(_):\n    return 'compiled from A'\n"
	const answerB = "def answer(_):\n    return 'compiled from B'\n"
	load := func(source string) string {
		t.Helper()
		if err := testInterp.loadModule("_cc_test", source, cache); err != nil {
			t.Fatal(err)
		}
		out, err := helperCall("_cc_test", "answer", "")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	if got := load(answerA); got != "compiled from A" {
		t.Fatalf("first load: %q", got)
	}
	pathA, pathB := cache.path("_cc_test", []byte(answerA)), cache.path("_cc_test", []byte(answerB))
	copyA, err := os.ReadFile(pathA)
	if err != nil {
		t.Fatalf("no compiled copy kept: %v", err)
	}
	// Loading B leaves B's copy only.
	if got := load(answerB); got != "compiled from B" {
		t.Fatalf("second source: %q", got)
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, "*")); len(kept) != 1 || kept[0] != pathB {
		t.Errorf("kept %v, want only %s", kept, pathB)
	}

	// Put A's code where B's copy belongs: loading B runs what is kept.
	if err := os.WriteFile(pathB, copyA, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := load(answerB); got != "compiled from A" {
		t.Fatalf("the kept copy was not used: %q", got)
	}

	// A copy from another Python (magic number) or a damaged one is
	// ignored: B is compiled again and its copy replaced.
	for name, bad := range map[string][]byte{
		"other magic": append([]byte{0, 0, 0, 0}, copyA[4:]...),
		"damaged":     copyA[:len(copyA)/2],
		"empty":       {},
	} {
		if err := os.WriteFile(pathB, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := load(answerB); got != "compiled from B" {
			t.Errorf("%s copy: loading B gave %q", name, got)
		}
		if again, _ := os.ReadFile(pathB); len(again) < 5 || string(again[:4]) != string(copyA[:4]) {
			t.Errorf("%s copy was not replaced by a good one", name)
		}
	}
}
