package agent

import (
	"context"
	"testing"
)

// A Config whose base URL cannot work fails at the first question, with
// the error the config package gives at start-up, and sends nothing.
func TestUncheckedBaseURLFailsAtOnce(t *testing.T) {
	for base, want := range map[string]string{
		"notaurl":    `base URL "notaurl" must start with http:// or https://`,
		"http:///v1": `base URL "http:///v1" has no host`,
		testKey:      `base URL "[key]" must start with http:// or https://`,
	} {
		s := NewConversation(Config{BaseURL: base, APIKey: testKey, Model: "m"}, &fakeTools{}, nil)
		out := newSyncBuffer()
		if err := s.Handle(context.Background(), "q", out); err == nil || err.Error() != want || out.String() != "" {
			t.Errorf("%q at ai>: err = %v, out %q", base, err, out.String())
		}
		if _, err := (Config{BaseURL: base, APIKey: testKey}).Check(); err == nil || err.Error() != want {
			t.Errorf("Check of %q: %v, want %s", base, err, want)
		}
	}
}
