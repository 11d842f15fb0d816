package sessionlog

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullDiskChild is set in the environment of the process that writes a
// log under a file size limit (RLIMIT_FSIZE), which fails writes as a
// full disk does: a write that crosses it is cut short, the next fails.
const fullDiskChild = "PYAICHAT_SESSIONS_FULL_DISK_DIR"

// TestMain runs the child's part when the test binary is started as one.
func TestMain(m *testing.M) {
	if dir := os.Getenv(fullDiskChild); dir != "" {
		os.Exit(writeOnFullDisk(dir))
	}
	os.Exit(m.Run())
}

// writeOnFullDisk writes a record that fits, one that crosses the limit
// and one that cannot start, then, the limit lifted (space returned), a
// last one; it prints each warning on stdout.
func writeOnFullDisk(dir string) int {
	signal.Ignore(syscall.SIGXFSZ) // a write past the limit fails instead of killing
	w, err := Create(dir, "full", Options{Warn: func(s string) { fmt.Println("WARN " + s) }})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println(err)
		return 1
	}
	w.Write(Record{Ev: "question", Text: "fits"})
	small := lim
	small.Cur = 600
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &small); err != nil {
		fmt.Println(err)
		return 1
	}
	w.Write(Record{Ev: "answer", Text: strings.Repeat("half of me is written ", 40)})
	w.Write(Record{Ev: "notice", Text: strings.Repeat("no room at all ", 60)})
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println(err)
		return 1
	}
	w.Write(Record{Ev: "question", Text: "after space returned"})
	w.Close()
	return 0
}

// On a full disk a record is written whole or not at all: the record cut
// short is cut off again, so the next record, once there is space, is a
// line of its own and is read back; one warning says so.
func TestWriteIsAllOrNothingOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fullDiskChild+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the writing process: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "WARN "); n != 1 || !strings.Contains(string(out), "could not be written") {
		t.Errorf("%d warnings, want 1:\n%s", n, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "full"+Ext))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	recs, err := Read(filepath.Join(dir, "full"+Ext))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, r := range recs {
		texts = append(texts, r.Text)
	}
	if len(lines) != 2 || len(recs) != 2 || texts[0] != "fits" || texts[1] != "after space returned" {
		t.Errorf("the log holds %q, read back as %q; want the first and last records, whole", lines, texts)
	}
}

// An export replaces a symlink at its destination instead of writing
// through it, and makes the file 0600 whatever mode an existing one had.
func TestExportNeverFollowsASymlink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "out.md")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	recs := []Record{{Ev: "py", Src: "x = 1", Status: "ok"}}
	if err := Export(recs, link); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me" {
		t.Errorf("the export wrote through the symlink: %q", data)
	}
	existing := filepath.Join(dir, "old.py")
	if err := os.WriteFile(existing, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Export(recs, existing); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, existing} {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want a regular 0600 file", p, st.Mode())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%d files in the directory, want 3 (no temporary left)", len(entries))
	}
}
