package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Fake secrets of each kind, built here so that no literal in the
// repository looks like a live token.
var (
	fakeOpenAIKey = "sk-proj-" + strings.Repeat("Ab3x", 8)
	fakeGitHub    = "ghp_" + strings.Repeat("k9Qz", 9)
	fakeAWSID     = "AKIA" + "IOSFODNN7EXAMPLE"
	fakeJWT       = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	fakePassword  = "hunter2-" + "Zx81qQ"
)

// askOnce runs pyaichat -p question with setup code, against a fake
// server whose model makes one tool call; it returns every request body
// the server received, as JSON text.
func askOnce(t *testing.T, env []string, setup, tool, args string) string {
	t.Helper()
	fake := newFakeOpenAI(t, tool, args)
	home := t.TempDir()
	cmd := exec.Command(binary, "-p", "tell me", "-c", setup)
	cmd.Env = append(append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.URL), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat -p: %v\nstderr: %s", err, stderr.String())
	}
	return sentText(t, fake) + stdout.String()
}

// Every path by which session data reaches the provider carries markers,
// never the secrets: an expression on the environment (transformed too),
// a repr, a list_globals preview, an exception's message and its
// traceback line.
func TestSecretsNeverReachTheProvider(t *testing.T) {
	t.Parallel()
	env := []string{"OPENAI_API_KEY=" + fakeOpenAIKey, "GITHUB_TOKEN=" + fakeGitHub}
	cases := []struct {
		name, setup, tool, args string
		secrets                 []string
		marker                  string
	}{
		{"environment", "import os", "eval_expr", `{"expr":"(os.environ['OPENAI_API_KEY'], os.getenv('GITHUB_TOKEN'))"}`,
			[]string{fakeOpenAIKey, fakeGitHub}, "secret environment value"},
		{"transformed", "import os, base64", "eval_expr",
			`{"expr":"(os.environ['GITHUB_TOKEN'][::-1], ' '.join(os.environ['OPENAI_API_KEY']), base64.b64encode(os.environb[b'GITHUB_TOKEN']))"}`,
			[]string{reverse(fakeGitHub), strings.Join(strings.Split(fakeOpenAIKey, ""), " "), "Z2hwX2s5UXp"},
			reverse("secret environment value")},
		{"repr", "aws = {'id': '" + fakeAWSID + "'}", "get_repr", `{"expr":"aws"}`,
			[]string{fakeAWSID}, "AWS access key"},
		{"preview", "ids = ['" + fakeAWSID + "']\nauth = '" + fakeJWT + "'", "list_globals", `{}`,
			[]string{fakeAWSID, fakeJWT}, "AWS access key"},
		{"jwt", "auth = '" + fakeJWT + "'", "eval_expr", `{"expr":"auth"}`,
			[]string{fakeJWT}, "JWT"},
		{"exception", "dsn = 'postgres://app:" + fakePassword + "@db/orders'\nraise ValueError('cannot connect to ' + dsn)",
			"get_last_exception", `{}`, []string{fakePassword}, "password"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sent := askOnce(t, env, c.setup, c.tool, c.args)
			for _, s := range c.secrets {
				if strings.Contains(sent, s) {
					t.Errorf("%q reached the provider:\n%s", s, sent)
				}
			}
			if !strings.Contains(sent, "<redacted: ") || !strings.Contains(sent, c.marker) {
				t.Errorf("no %q marker in what was sent:\n%s", c.marker, sent)
			}
		})
	}
}

// A secret on a traceback's source line is redacted too.
func TestSecretOnTracebackLineIsRedacted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "job.py")
	src := "key = '" + fakeGitHub + "'; 1 / 0\n"
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	sent := askOnce(t, nil, "exec(compile(open("+quote(script)+").read(), "+quote(script)+", 'exec'))",
		"get_last_exception", `{}`)
	if strings.Contains(sent, fakeGitHub) {
		t.Errorf("the token on the traceback line reached the provider:\n%s", sent)
	}
	if !strings.Contains(sent, "GitHub") {
		t.Errorf("no GitHub marker in what was sent:\n%s", sent)
	}
}

// A dummy key (local servers are often given "x") redacts nothing: the
// answer's every x is shown.
func TestDummyKeyRedactsNothing(t *testing.T) {
	t.Parallel()
	sent := askOnce(t, []string{"OPENAI_API_KEY=x"}, "fox = 'the quick brown fox'", "get_repr", `{"expr":"fox"}`)
	if strings.Contains(sent, "[key]") || !strings.Contains(sent, "the quick brown fox") {
		t.Errorf("a one-letter key changed the answer:\n%s", sent)
	}
}

// sentText is every request body the fake server received, as JSON text
// without HTML escapes, so that markers read <redacted: ...>.
func sentText(t *testing.T, fake *fakeOpenAI) string {
	t.Helper()
	var body strings.Builder
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fake.requests()); err != nil {
		t.Fatal(err)
	}
	return body.String()
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The automatic py> context passes the same filter: a secret printed at
// py> reaches the provider only as a marker, and the summary line and
// /privacy say what was redacted.
func TestPTYContextIsRedacted(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "get_type", `{"expr":"dsn"}`)
	home := t.TempDir()
	s := startREPLNoWait(t, home, []string{
		"OPENAI_BASE_URL=" + fake.URL,
		"OPENAI_API_KEY=" + fakeOpenAIKey,
		"PYAICHAT_MODEL=fake-model",
	})
	s.ExpectString("py> ")
	typeLine(t, s, "dsn = 'postgres://app:"+fakePassword+"@db/orders'; dsn", "@db/orders'")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "why can't I connect?")
	s.ExpectString("The tool said: ")
	s.ExpectString("redacted")
	s.ExpectString("ai> ")
	enter(s, "/privacy")
	s.ExpectString("last question: 2 values (2 password in URL) redacted")
	s.ExpectString("ai> ")
	sent := sentText(t, fake)
	if strings.Contains(sent, fakePassword) || strings.Contains(sent, fakeOpenAIKey) {
		t.Errorf("a secret reached the provider:\n%s", sent)
	}
	if !strings.Contains(sent, "postgres://app:<redacted: password in URL") {
		t.Errorf("the context carries no marker:\n%s", sent)
	}
	s.Send("\x04")
	assertExit(t, s, 0)
}
