package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// fake builds a deterministic random string from alphabet; tokens are made
// in code rather than written out so no literal in the repository looks
// like a live credential to a secret scanner.
func fake(seed uint64, n int, alphabet string) string {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64url  = alnum + "-_"
	b64std  = alnum + "+/"
	upperD  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	pemBody = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\nLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n"
)

var (
	openAIKey    = "sk-" + "proj-" + fake(1, 48, b64url)
	openAIOld    = "sk-" + fake(2, 48, alnum)
	anthropicKey = "sk-" + "ant-api03-" + fake(3, 93, b64url) + "AA"
	githubPAT    = "gh" + "p_" + fake(4, 36, alnum)
	githubFine   = "github" + "_pat_" + fake(5, 22, alnum) + "_" + fake(6, 59, alnum)
	awsKeyID     = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSecret    = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	slackToken   = "xo" + "xb-" + fake(7, 12, "0123456789") + "-" + fake(8, 13, "0123456789") + "-" + fake(9, 24, alnum)
	googleKey    = "AI" + "za" + fake(10, 35, b64url)
	jwt          = "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" + "." + fake(11, 43, b64url)
	pemKey       = "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "-----END RSA PRIVATE KEY-----"
	bearer       = fake(12, 40, alnum)
	highEntropy  = fake(13, 32, alnum)
)

// redacted asserts that out no longer holds secret and carries a marker of
// the kind.
func redacted(t *testing.T, out, secret, kind string) {
	t.Helper()
	if strings.Contains(out, secret) {
		t.Errorf("secret %q survived in %q", secret, out)
	}
	if !strings.Contains(out, "<redacted: "+kind+", ") {
		t.Errorf("no %q marker in %q", kind, out)
	}
}

func TestKinds(t *testing.T) {
	f := New(Policy{
		Secrets: []Secret{{Kind: "API key", Value: "my-configured-key-123"}},
		Environ: []string{
			"HOME=/home/alice",
			"MY_SERVICE_TOKEN=abcd1234efgh",
			"DATABASE_URL=postgres://app:s3cr3tpass@db:5432/orders",
		},
	})
	pyPEM := strings.ReplaceAll(pemKey, "\n", `\n`)
	cases := []struct {
		name, in, secret, kind string
	}{
		{"policy secret", "openai.AuthenticationError: Incorrect API key provided: my-configured-key-123.", "my-configured-key-123", "API key"},
		{"environment value", "environ({'HOME': '/home/alice', 'MY_SERVICE_TOKEN': 'abcd1234efgh'})", "abcd1234efgh", "value of $MY_SERVICE_TOKEN"},
		{"environment URL password", "password is s3cr3tpass here", "s3cr3tpass", "password in URL"},
		{"OpenAI project key", "{'api_key': '" + openAIKey + "', 'model': 'gpt-4o'}", openAIKey, "OpenAI API key"},
		{"OpenAI key", "OPENAI_API_KEY=" + openAIOld, openAIOld, "OpenAI API key"},
		{"Anthropic key", "client = Anthropic(api_key='" + anthropicKey + "')", anthropicKey, "Anthropic API key"},
		{"GitHub token", `  File "deploy.py", line 3, in <module>: token = "` + githubPAT + `"`, githubPAT, "GitHub token"},
		{"GitHub fine-grained", "GH_TOKEN=" + githubFine, githubFine, "GitHub token"},
		{"AWS key id", "{'key': '" + awsKeyID + "'}", awsKeyID, "AWS access key"},
		{"AWS secret ini", "aws_secret_access_key = " + awsSecret, awsSecret, "AWS secret key"},
		{"AWS secret repr", "environ({'AWS_SECRET_ACCESS_KEY': '" + awsSecret + "', 'HOME': '/root'})", awsSecret, "AWS secret key"},
		{"Slack token", "slack_sdk.errors.SlackApiError: token " + slackToken + " revoked", slackToken, "Slack token"},
		{"Google key", "https://maps.googleapis.com/maps/api/geocode/json?key=" + googleKey, googleKey, "Google API key"},
		{"JWT", "{'id_token': '" + jwt + "'}", jwt, "JWT"},
		{"PEM", "key = '''" + pemKey + "'''", "MIIEowIBAAKCAQEA", "private key"},
		{"PEM in repr", "{'private_key': '" + pyPEM + "', 'type': 'service_account'}", "MIIEowIBAAKCAQEA", "private key"},
		{"PEM truncated", "-----BEGIN PRIVATE KEY-----\n" + pemBody + "...[truncated]", "MIIEowIBAAKCAQEA", "private key"},
		{"Authorization header", "> Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "authorization value"},
		{"Bearer in repr", "{'headers': {'X-Auth': 'Bearer " + bearer + "'}}", bearer, "bearer token"},
		{"URL password", "sqlalchemy.exc.OperationalError: (psycopg2) connection to postgres://scott:tiger42@localhost:5432/test failed", "tiger42", "password in URL"},
		{"mysql URL", "engine = create_engine('mysql+pymysql://root:Pa55w0rd!@127.0.0.1/shop')", "Pa55w0rd!", "password in URL"},
		{"ODBC password", "DRIVER={ODBC Driver 18 for SQL Server};SERVER=db;UID=sa;PWD=Hunter2Hunter2;Encrypt=yes", "Hunter2Hunter2", "password"},
		{"ODBC braces", "Server=db;User Id=sa;Password={p;a=ss};", "p;a=ss", "password"},
		{"quoted password", "{'user': 'admin', 'password': 'correct horse battery'}", "correct horse battery", "password"},
		{"high entropy", "session cookie: " + highEntropy + " (expires 2024-07-01)", highEntropy, "high-entropy string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, rep := f.Text(c.in)
			redacted(t, out, c.secret, c.kind)
			if rep.Count == 0 || rep.Kinds[c.kind] == 0 {
				t.Errorf("report %v lacks %q", rep, c.kind)
			}
			again, rep2 := f.Text(out)
			if again != out || rep2.Count != 0 {
				t.Errorf("second pass changed %q to %q (%v)", out, again, rep2)
			}
		})
	}
}

// TestOnlySecretPart checks that the text around a password stays.
func TestOnlySecretPart(t *testing.T) {
	cases := []struct{ in, want string }{
		{"postgres://scott:tiger42@localhost/test", "postgres://scott:" + Marker("password in URL", 7) + "@localhost/test"},
		{"UID=sa;PWD=Hunter2;", "UID=sa;PWD=" + Marker("password", 7) + ";"},
		{"{'key': '" + awsKeyID + "'}", "{'key': '" + Marker("AWS access key", 20) + "'}"},
		{"Authorization: Bearer " + bearer, "Authorization: Bearer " + Marker("authorization value", 40)},
	}
	for _, c := range cases {
		if got, _ := (*Filter)(nil).Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPolicySecretWholeToken(t *testing.T) {
	f := New(Policy{Secrets: []Secret{{Kind: "API key", Value: "x"}, {Kind: "API key", Value: "sk-abc12345"}}})
	cases := []struct{ in, want string }{
		{"fox", "fox"},
		{"api_key='x'", "api_key='x'"},
		{"key=sk-abc12345.", "key=" + Marker("API key", 11) + "."},
		{"sk-abc123456", "sk-abc123456"},
		{"xsk-abc12345", "xsk-abc12345"},
		{"sk-abc12345_v2", "sk-abc12345_v2"},
		{`'line\nsk-abc12345'`, `'line\n` + Marker("API key", 11) + `'`},
	}
	for _, c := range cases {
		if got, _ := f.Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSecretName(t *testing.T) {
	f := New(Policy{Hide: []string{"MY_DSN"}, Allow: []string{"PUBLIC_KEY_ID", "MY_DSN_SECRET"}})
	cases := []struct {
		name string
		want bool
	}{
		{"OPENAI_API_KEY", true}, {"GITHUB_TOKEN", true}, {"DB_PASSWORD", true}, {"PGPASS", true},
		{"DB_PWD", true}, {"AWS_SECRET_ACCESS_KEY", true}, {"GOOGLE_CREDENTIALS", true},
		{"HTTP_AUTHORIZATION", true}, {"SESSION_COOKIE", true}, {"PRIVATE_KEY", true}, {"api_key", true},
		{"PWD", false}, {"OLDPWD", false}, {"KEYBOARD_LAYOUT", false}, {"XKB_KEYMAP", false},
		{"GIT_AUTHOR_NAME", false}, {"GIT_AUTHOR_EMAIL", false}, {"XDG_SESSION_TYPE", false},
		{"DBUS_SESSION_BUS_ADDRESS", false}, {"SESSION_MANAGER", false}, {"DESKTOP_SESSION", false},
		{"GNOME_KEYRING_CONTROL", false}, {"SSH_AUTH_SOCK", false}, {"XAUTHORITY", false},
		{"PASSWORD_STORE_DIR", false}, {"HOME", false}, {"PATH", false}, {"TOKENIZERS_PARALLELISM", false},
		{"POSTGRES_PASSWORD_FILE", false},
		{"MY_DSN", true}, {"PUBLIC_KEY_ID", false}, {"MY_DSN_SECRET", false},
	}
	for _, c := range cases {
		if got := f.SecretName(c.name); got != c.want {
			t.Errorf("SecretName(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	if (*Filter)(nil).SecretName("PUBLIC_KEY_ID") != true {
		t.Error("nil filter should apply the built-in rule")
	}
}

func TestEnvironPolicy(t *testing.T) {
	f := New(Policy{
		Environ: []string{
			"PWD=/home/alice/projects/app", "GIT_AUTHOR_NAME=Alice Example", "SHORT_TOKEN=abc",
			"SSH_KEY_PATH=/home/alice/.ssh/id_ed25519", "SERVICE_PASSWORD=Tr0ub4dor&3x",
			"PUBLIC_KEY_ID=kid-2024-000001", "EXTRA=visible-value-1",
		},
		Hide:  []string{"EXTRA"},
		Allow: []string{"PUBLIC_KEY_ID"},
	})
	in := "cd /home/alice/projects/app; author Alice Example; abc; /home/alice/.ssh/id_ed25519; " +
		"pw Tr0ub4dor&3x; kid-2024-000001; visible-value-1"
	out, rep := f.Text(in)
	want := "cd /home/alice/projects/app; author Alice Example; abc; /home/alice/.ssh/id_ed25519; " +
		"pw " + Marker("value of $SERVICE_PASSWORD", 12) + "; kid-2024-000001; " + Marker("value of $EXTRA", 15)
	if out != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
	if got := rep.String(); got != "2 values (1 value of $EXTRA, 1 value of $SERVICE_PASSWORD)" {
		t.Errorf("report %q", got)
	}
}

func TestOverlapLongestWins(t *testing.T) {
	// The configured key is also an OpenAI-format key and a high-entropy
	// string: it must be replaced once, under the policy's kind.
	f := New(Policy{Secrets: []Secret{{Kind: "API key", Value: openAIOld}}})
	out, rep := f.Text("key " + openAIOld + " end")
	if want := "key " + Marker("API key", len(openAIOld)) + " end"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
	if rep.Count != 1 {
		t.Errorf("report %v, want one value", rep)
	}
	// A PEM block holds long base64 lines: one marker for the whole block.
	out, rep = f.Text(pemKey)
	if rep.Count != 1 || out != Marker("private key", len(pemKey)) {
		t.Errorf("PEM: %q %v", out, rep)
	}
}

func TestJSON(t *testing.T) {
	doc := `{"b": 1.50, "a": [true, null, "` + awsKeyID + `"], "creds": {"private_key": ` +
		jsonString(pemKey) + `, "aws_secret_access_key": "` + awsSecret + `"}, "html": "<a&b>", "` + githubPAT + `": 0}`
	out, rep, err := New(Policy{}).JSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":1.50,"a":[true,null,"` + Marker("AWS access key", 20) + `"],"creds":{"private_key":"` +
		Marker("private key", len(pemKey)) + `","aws_secret_access_key":"` + Marker("AWS secret key", 40) +
		`"},"html":"<a&b>","` + Marker("GitHub token", len(githubPAT)) + `":0}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if rep.Count != 4 {
		t.Errorf("report %v, want 4 values", rep)
	}
	for _, bad := range []string{"", "{", `{"a":1} {"b":2}`, "[1,]", "nul"} {
		if _, _, err := New(Policy{}).JSON([]byte(bad)); err == nil {
			t.Errorf("JSON(%q): no error", bad)
		}
	}
	if out, _, err := (*Filter)(nil).JSON([]byte(` "plain" `)); err != nil || string(out) != `"plain"` {
		t.Errorf("scalar document: %s %v", out, err)
	}
}

// jsonString quotes s as JSON by hand, newlines as \n, as a tool's output
// would hold it.
func jsonString(s string) string {
	return `"` + strings.ReplaceAll(s, "\n", `\n`) + `"`
}

func TestReport(t *testing.T) {
	var r Report
	if r.String() != "" {
		t.Errorf("zero report %q", r.String())
	}
	r.Add(Report{Count: 1, Kinds: map[string]int{"API key": 1}})
	if r.String() != "1 value (1 API key)" {
		t.Errorf("got %q", r.String())
	}
	r.Add(Report{Count: 3, Kinds: map[string]int{"AWS access key": 2, "JWT": 1}})
	if got := r.String(); got != "4 values (2 AWS access key, 1 API key, 1 JWT)" {
		t.Errorf("got %q", got)
	}
	if Marker("API key", 51) != "<redacted: API key, 51 chars>" {
		t.Error(Marker("API key", 51))
	}
	if out, _ := (*Filter)(nil).Text("pw=" + "\u00e9t\u00e9" + " postgres://u:\u00e9t\u00e9@h"); !strings.Contains(out, Marker("password in URL", 3)) {
		t.Errorf("marker length should count runes: %q", out)
	}
}

func TestNothingToFind(t *testing.T) {
	var f *Filter
	for _, s := range []string{"", "hello", strings.Repeat("a", 10000)} {
		out, rep := f.Text(s)
		if out != s || rep.Count != 0 || rep.Kinds != nil {
			t.Errorf("Text(%.20q) = %.20q, %v", s, out, rep)
		}
	}
}
