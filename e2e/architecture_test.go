package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The import graph in docs/architecture.md is what `go list` says, so
// that the map a newcomer reads cannot drift from the code. The block
// between these markers is generated; PYAICHAT_UPDATE_DOCS=1 rewrites it.
const (
	graphBegin = "<!-- import graph: generated from go list by e2e's TestArchitectureGraph; PYAICHAT_UPDATE_DOCS=1 rewrites it -->"
	graphEnd   = "<!-- end of import graph -->"
	modulePath = "github.com/pyaichat/pyaichat/"
)

func TestArchitectureGraph(t *testing.T) {
	list := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	list.Dir = ".."
	var stderr bytes.Buffer
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := importGraph(string(out))

	path := filepath.Join("..", "docs", "architecture.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), graphBegin+"\n")
	_, after, ok2 := strings.Cut(rest, graphEnd)
	if !ok || !ok2 {
		t.Fatalf("%s has no generated import graph between %q and %q", path, graphBegin, graphEnd)
	}
	current, _, _ := strings.Cut(rest, graphEnd)
	if current == graph {
		return
	}
	if os.Getenv("PYAICHAT_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(before+graphBegin+"\n"+graph+graphEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the import graph in %s", path)
		return
	}
	t.Errorf("the import graph in %s is not what go list says; update the prose around it and rerun with PYAICHAT_UPDATE_DOCS=1.\ndocs:\n%s\ngo list:\n%s", path, current, graph)
}

// importGraph turns go list's lines (a package, then its imports) into the
// fenced block the docs show: each of the module's packages with the
// module's packages it imports, then the outside modules' ones after a
// "|", and "cgo" where it imports C. The standard library is left out.
func importGraph(goList string) string {
	type entry struct{ pkg, text string }
	var entries []entry
	for _, line := range strings.Split(strings.TrimSpace(goList), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], modulePath)
		var ours, theirs []string
		cgo := false
		for _, imp := range fields[1:] {
			switch {
			case imp == "C":
				cgo = true
			case strings.HasPrefix(imp, modulePath):
				ours = append(ours, strings.TrimPrefix(imp, modulePath))
			case strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
				theirs = append(theirs, imp)
			}
		}
		sort.Strings(ours)
		sort.Strings(theirs)
		text := pkg
		if cgo {
			text += " (cgo)"
		}
		text += ":"
		if len(ours) > 0 {
			text += " " + strings.Join(ours, " ")
		}
		if len(theirs) > 0 {
			text += " | " + strings.Join(theirs, " ")
		}
		entries = append(entries, entry{pkg, text})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].pkg < entries[j].pkg })
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = e.text
	}
	return fmt.Sprintf("```text\n%s\n```\n", strings.Join(lines, "\n"))
}
