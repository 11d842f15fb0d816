package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

const ordersSetup = "orders = [{'id': 1, 'total': 9.5}, {'id': 2, 'total': 20.25}]\n" +
	"def price(item, qty=1):\n    'Price of qty items.'\n    return item['total'] * qty\n"

// The loop runs against the real capabilities on the live session: the
// tool results sent back carry the session's real values, and a Python
// error in an expression goes back as an error result, not a failure.
func TestRealCapabilitiesOnALiveSession(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAICalls(t,
		[2]string{"get_type", `{"expr":"orders"}`},
		[2]string{"eval_expr", `{"expr":"sum(o['total'] for o in orders)"}`},
		[2]string{"get_doc", `{"expr":"price"}`},
		[2]string{"eval_expr", `{"expr":"undefined_name"}`},
	)
	home := t.TempDir()
	cmd := exec.Command(binary, "-p", "what do my orders add up to?", "-c", ordersSetup)
	cmd.Env = append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=sk-e2e-0123456789")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pyaichat -p: %v\n%s", err, out)
	}
	tools := toolMessages(fake)
	if len(tools) != 4 {
		t.Fatalf("%d tool results sent, want 4: %q", len(tools), tools)
	}
	checks := []struct{ what, want string }{
		{"get_type(orders)", `"type":"list"`},
		{"eval_expr(sum)", `"repr":"29.75"`},
		{"get_doc(price)", "Price of qty items."},
		{"eval_expr(undefined_name)", `"type":"NameError"`},
	}
	for i, c := range checks {
		if !strings.Contains(tools[i], c.want) {
			t.Errorf("%s sent back %q, want %s in it", c.what, tools[i], c.want)
		}
	}
	if !strings.Contains(tools[2], "qty=1") {
		t.Errorf("get_doc(price) sent back %q, without its signature", tools[2])
	}
	if !strings.HasPrefix(tools[3], `{"error":`) {
		t.Errorf("a NameError must come back as an error result: %q", tools[3])
	}
}

// /cap at ai> reaches the same registry without any model.
func TestPTYCapCommand(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "get_repr", `{"expr":"orders"}`)
	s := startREPLNoWait(t, "", []string{"OPENAI_BASE_URL=" + fake.URL, "OPENAI_API_KEY=sk-e2e-0123456789"}, "-c", ordersSetup)
	s.ExpectString("py> ")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "/cap get_repr orders[1]['total']")
	s.ExpectString("repr: 20.25")
	s.ExpectString("ai> ")
	if n := len(fake.requests()); n != 0 {
		t.Errorf("/cap sent %d requests to the model", n)
	}
}
