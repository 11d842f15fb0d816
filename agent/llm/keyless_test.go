package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
)

// TestErrorsNeverHoldTheKey: a server that echoes the key in its errors,
// HTTP or inside the stream, in every attempt, reaches neither the Client's
// errors nor its retry notices; errors.As still finds the server's error.
func TestErrorsNeverHoldTheKey(t *testing.T) {
	cases := []struct {
		name  string
		reply fakemodel.Reply
	}{
		{"HTTP 400", fakemodel.Reply{Status: 400, Error: "bad request from Bearer " + testKey}},
		{"HTTP 500, retried", fakemodel.Reply{Status: 500, Error: testKey + " is overloaded"}},
		{"inside the stream", fakemodel.Reply{Text: "partial ", Error: "stream died for " + testKey}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := fakemodel.New(t, c.reply, c.reply, c.reply)
			client := New(Options{BaseURL: f.URL, APIKey: testKey, Limits: Limits{RetryBaseDelay: 1, RetryMaxDelay: 1}})
			var notices []string
			st, err := client.Open(context.Background(), "m", []Message{{Role: "user", Content: "q"}}, Tools{}, func(n string) { notices = append(notices, n) })
			if err == nil {
				for st.Next() {
				}
				st.Close()
				err = st.Err()
			}
			if err == nil {
				t.Fatal("no error")
			}
			var ae *APIError
			if !errors.As(err, &ae) || !strings.Contains(ae.Message, testKey) {
				t.Errorf("the server's error is lost behind %v", err)
			}
			for _, line := range append(notices, err.Error()) {
				if strings.Contains(line, testKey) || !strings.Contains(line, "[key]") {
					t.Errorf("not redacted: %q", line)
				}
			}
			if c.reply.Status == 500 && len(notices) != 2 {
				t.Errorf("%d retry notices, want 2: %q", len(notices), notices)
			}
		})
	}
}
