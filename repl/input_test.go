package repl

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/pybridge"
)

// feed writes each piece to the pump as a separate read, the way a terminal
// delivers input in arbitrary chunks.
func feed(t *testing.T, pieces ...string) *pump {
	t.Helper()
	r, w := io.Pipe()
	p := newPump(r, false)
	go func() {
		for _, s := range pieces {
			w.Write([]byte(s))
		}
		w.Close()
	}()
	return p
}

// readEditor collects what the line editor would read until the pump ends,
// taking each paste when the editor meets its marker, as the REPL does.
func readEditor(p *pump) (typed string, pastes []string) {
	p.setEditor(true)
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := editorReader{p}.Read(buf)
		b.Write(buf[:n])
		if strings.HasSuffix(string(buf[:n]), string(pasteRune)) {
			s, ok := p.takePaste()
			if !ok {
				return b.String() + "<marker without paste>", pastes
			}
			pastes = append(pastes, s)
		}
		if err != nil {
			return b.String(), pastes
		}
	}
}

func TestPumpLiftsPastesOutOfTypedInput(t *testing.T) {
	cases := []struct {
		name   string
		pieces []string
		typed  string
		pastes []string
	}{
		{"whole", []string{"ab\x1b[200~x = 1\ry = 2\r\x1b[201~cd"}, "ab\ue000cd", []string{"x = 1\ny = 2\n"}},
		{"markers split across reads", []string{"a\x1b[20", "0~pas", "ted\x1b[2", "01~b"}, "a\ue000b", []string{"pasted"}},
		{"tab inside a paste is text", []string{"\x1b[200~\tx\x1b[201~"}, "\ue000", []string{"\tx"}},
		{"CRLF becomes LF", []string{"\x1b[200~a\r\nb\x1b[201~"}, "\ue000", []string{"a\nb"}},
		{"lone escape is typed", []string{"\x1b", "[A"}, "\x1b[A", nil},
		{"two pastes", []string{"\x1b[200~1\x1b[201~\x1b[200~2\x1b[201~"}, "\ue000\ue000", []string{"1", "2"}},
		{"keys right after a paste wait for it", []string{"\x1b[200~u = 1\x1b[201~\rlen\r"}, "\ue000\rlen\r", []string{"u = 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := feed(t, tc.pieces...)
			got, pastes := readEditor(p)
			if got != tc.typed {
				t.Errorf("editor read %q, want %q", got, tc.typed)
			}
			if strings.Join(pastes, "|") != strings.Join(tc.pastes, "|") {
				t.Errorf("pastes %q, want %q", pastes, tc.pastes)
			}
		})
	}
}

func TestPumpLargePasteIsOneEvent(t *testing.T) {
	big := strings.Repeat("a", 20000)
	pieces := []string{"\x1b[200~"}
	for i := 0; i < len(big); i += 4096 {
		pieces = append(pieces, big[i:min(i+4096, len(big))])
	}
	pieces = append(pieces, "\x1b[201~")
	p := feed(t, pieces...)
	got, pastes := readEditor(p)
	if got != "\ue000" {
		t.Fatalf("editor read %q, want the paste marker alone", got)
	}
	if len(pastes) != 1 || pastes[0] != big {
		t.Fatalf("%d pastes, want one of %d bytes", len(pastes), len(big))
	}
}

func TestEditorReadsStopAtLineEnds(t *testing.T) {
	// Input typed ahead of an input() call must stay in the pump, not in
	// the editor's own buffer.
	r, w := io.Pipe()
	p := newPump(r, false)
	go w.Write([]byte("first\rsecond\n"))
	p.setEditor(true)
	buf := make([]byte, 100)
	n, _ := editorReader{p}.Read(buf)
	if got := string(buf[:n]); got != "first\r" {
		t.Fatalf("editor read %q, want %q", got, "first\r")
	}
	p.setEditor(false)
	line, err := p.readLine("", false, io.Discard)
	if err != nil || line != "second\n" {
		t.Fatalf("readLine = %q, %v; want %q", line, err, "second\n")
	}
}

func TestReadLineIsInterruptible(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	p := newPump(r, false)
	done := make(chan error, 1)
	go func() {
		_, err := p.readLine("", false, io.Discard)
		done <- err
	}()
	// Ctrl-C may come before the read starts waiting; like a user, press
	// it until the read gives up.
	for {
		p.interruptRead()
		select {
		case err := <-done:
			if !errors.Is(err, pybridge.ErrInterrupted) {
				t.Fatalf("readLine after interrupt: %v", err)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
