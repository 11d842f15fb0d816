package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/capabilities"
	"github.com/pyaichat/pyaichat/pybridge"
)

// testRegistry is the real capabilities registry on the one interpreter
// this test binary may start.
var testRegistry *capabilities.Registry

func TestMain(m *testing.M) {
	in, err := pybridge.Start(pybridge.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent tests: starting Python:", err)
		os.Exit(1)
	}
	testRegistry = capabilities.New(in, capabilities.Options{})
	// The request-size figures use the real schemas and descriptions.
	benchTools = func() Toolset { return FromRegistry(testRegistry) }
	if _, err := in.RunCommand("orders = [{'id': 1, 'total': 9.5}, {'id': 2, 'total': 20.25}]\ndef price(item, qty=1):\n    'Price of qty items.'\n    return item['total'] * qty\n"); err != nil {
		fmt.Fprintln(os.Stderr, "agent tests: setup code:", err)
		os.Exit(1)
	}
	code := m.Run()
	in.Close(5e9)
	os.Exit(code)
}

// TestRealCapabilitiesOnALiveSession runs the loop against the real
// registry and interpreter and checks that the tool results sent back to
// the server carry the session's real values.
func TestRealCapabilitiesOnALiveSession(t *testing.T) {
	f := newFake(t,
		toolReply("", fcall{"c1", "get_type", `{"expr":"orders"}`}, fcall{"c2", "eval_expr", `{"expr":"sum(o['total'] for o in orders)"}`}),
		toolReply("", fcall{"c3", "get_doc", `{"expr":"price"}`}, fcall{"c4", "eval_expr", `{"expr":"undefined_name"}`}),
		textReply("The total is 29.75."),
	)
	tools := FromRegistry(testRegistry)
	if got := len(tools.Tools()); got != 7 {
		t.Fatalf("registry has %d tools", got)
	}
	s := NewSession(f.config(), tools, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "what do my orders add up to?", out); err != nil {
		t.Fatalf("Handle: %v", err)
	}
	reqs := f.requests()
	r1, r2 := toolResults(reqs[1]), toolResults(reqs[2])
	var typ struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal([]byte(r1["c1"]), &typ); err != nil || typ.Type != "list" {
		t.Errorf("get_type(orders) sent back %q", r1["c1"])
	}
	var ev struct {
		Repr string `json:"repr"`
	}
	if err := json.Unmarshal([]byte(r1["c2"]), &ev); err != nil || ev.Repr != "29.75" {
		t.Errorf("eval_expr(sum) sent back %q", r1["c2"])
	}
	if !strings.Contains(r2["c3"], "Price of qty items.") || !strings.Contains(r2["c3"], "qty=1") {
		t.Errorf("get_doc(price) sent back %q", r2["c3"])
	}
	if !strings.Contains(r2["c4"], `"error"`) || !strings.Contains(r2["c4"], "NameError") {
		t.Errorf("a NameError must come back as an error result: %q", r2["c4"])
	}
	for _, r := range reqs {
		checkValid(t, r)
	}
	if names := fmt.Sprint(reqs[0].Tools); !strings.Contains(names, "get_last_exception") {
		t.Errorf("tools sent: %s", names)
	}
	// /cap reaches the same registry without any LLM.
	out = newSyncBuffer()
	if err := s.Handle(context.Background(), "/cap get_repr orders[1]['total']", out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "repr: 20.25\n") {
		t.Errorf("/cap get_repr: %q", out.String())
	}
	if len(f.requests()) != 3 {
		t.Errorf("/cap talked to the server")
	}
}
