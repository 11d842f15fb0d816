package llm

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	s := newSSEReader(r)
	var out []sseEvent
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
}

func TestSSEReaderSpec(t *testing.T) {
	big := strings.Repeat("x", 100_000) // larger than the initial buffer
	body := ": comment\n" +
		"event: error\ndata: a\ndata:b\n\n" + // multi-line data, no space after the colon
		"data: " + big + "\r\n\r\n" + // CRLF, a line that grows the buffer
		"data: c\r\r" + // lone CRs
		"id: 1\nretry: 5\n\n" + // no data: nothing dispatched
		"error: {\"message\":\"llama\"}\n\n" + // llama.cpp's error field
		"data: tail" // no newline at EOF
	// One byte per Read puts every CR at a buffer boundary at least once.
	for name, r := range map[string]io.Reader{"whole": strings.NewReader(body), "bytewise": iotest.OneByteReader(strings.NewReader(body))} {
		t.Run(name, func(t *testing.T) {
			got := readAll(t, r)
			want := []sseEvent{{"error", "a\nb"}, {"message", big}, {"message", "c"}, {"error", `{"message":"llama"}`}, {"message", "tail"}}
			if len(got) != len(want) {
				t.Fatalf("%d events, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("event %d = %.40q, want %.40q", i, got[i], want[i])
				}
			}
		})
	}
}

func TestSSEReaderBoundsAnEndlessLine(t *testing.T) {
	r := newSSEReader(io.MultiReader(strings.NewReader("data: "), endless{}))
	if _, err := r.Next(); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("err = %v, want the size bound", err)
	}
}

// endless is a server that never ends its line.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'y'
	}
	return len(p), nil
}
