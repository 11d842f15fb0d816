package redact

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// ordinaryPolicy is what a typical local setup holds: a dummy key and an
// environment with nothing secret in it.
func ordinaryPolicy() Policy {
	return Policy{
		Secrets: []Secret{{Kind: "API key", Value: "x"}, {Kind: "API key", Value: "ollama"}},
		Environ: []string{
			"HOME=/home/alice", "PWD=/home/alice/projects/dataPipeline2024", "OLDPWD=/home/alice",
			"SHELL=/bin/bash", "LANG=en_US.UTF-8", "OPENAI_API_KEY=ollama", "GIT_AUTHOR_NAME=Tim Peters",
			"XDG_SESSION_TYPE=wayland", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
			"SSH_AUTH_SOCK=/run/user/1000/keyring/ssh", "XAUTHORITY=/run/user/1000/.mutter-Xwaylandauth.ABC123",
			"SESSION_MANAGER=local/host:@/tmp/.ICE-unix/2345,unix/host:/tmp/.ICE-unix/2345",
			"GOOGLE_APPLICATION_CREDENTIALS=/home/alice/.config/gcloud/application_default_credentials.json",
		},
	}
}

// TestOrdinaryCorpus: every line of ordinary output passes unchanged.
func TestOrdinaryCorpus(t *testing.T) {
	data, err := os.ReadFile("testdata/ordinary.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) < 300 {
		t.Fatalf("corpus has only %d lines", len(lines))
	}
	f := New(ordinaryPolicy())
	changed := 0
	for i, line := range lines {
		if out, rep := f.Text(line); out != line {
			changed++
			t.Errorf("line %d changed (%v):\n  in:  %s\n  out: %s", i+1, rep, line, out)
		}
	}
	// The whole file at once too: findings must not span lines.
	if out, rep := f.Text(string(data)); out != string(data) {
		t.Errorf("whole corpus changed: %v", rep)
	}
	t.Logf("false positives: %d of %d lines (%.2f%%)", changed, len(lines), 100*float64(changed)/float64(len(lines)))
}

// secretSamples returns realistic fake secrets of every kind, each inside
// a line of the output it would appear in, with the secret itself.
func secretSamples() []struct{ kind, line, secret string } {
	var out []struct{ kind, line, secret string }
	add := func(kind, line, secret string) {
		out = append(out, struct{ kind, line, secret string }{kind, line, secret})
	}
	for i := uint64(0); i < 20; i++ {
		s := 100 * (i + 1)
		k := "sk-" + fake(s, 48, alnum)
		add("OpenAI API key", fmt.Sprintf("openai.api_key = '%s'", k), k)
		k = "sk-" + "proj-" + fake(s+1, 120, b64url)
		add("OpenAI API key", fmt.Sprintf(`{"Authorization": "Bearer %s"}`, k), k)
		k = "sk-" + "ant-api03-" + fake(s+2, 93, b64url) + "AA"
		add("Anthropic API key", "ANTHROPIC_API_KEY="+k, k)
		k = "gh" + "o_" + fake(s+3, 36, alnum)
		add("GitHub token", "remote: https://x-access-token:"+k+"@github.com/org/repo.git", k)
		k = "gh" + "s_" + fake(s+4, 36, alnum)
		add("GitHub token", "  GITHUB_TOKEN: "+k, k)
		k = "ASIA" + fake(s+5, 14, upperD) + "7Q"
		add("AWS access key", fmt.Sprintf("{'AccessKeyId': '%s', 'Expiration': datetime.datetime(2024, 6, 1)}", k), k)
		k = fake(s+6, 40, b64std)
		add("AWS secret key", fmt.Sprintf("'aws_secret_access_key': '%s'", k), k)
		k = "xo" + "xp-" + fake(s+7, 11, "0123456789") + "-" + fake(s+8, 11, "0123456789") + "-" + fake(s+9, 32, "0123456789abcdef")
		add("Slack token", "SLACK_BOT_TOKEN="+k, k)
		k = "AI" + "za" + fake(s+10, 35, b64url)
		add("Google API key", "genai.configure(api_key=\""+k+"\")", k)
		k = "eyJ" + fake(s+11, 30, b64url) + ".eyJ" + fake(s+12, 80, b64url) + "." + fake(s+13, 43, b64url)
		add("JWT", "Cookie: session="+k+"; Path=/", k)
		k = fake(s+14, 32, alnum)
		add("authorization value", "Authorization: Token "+k, k)
		k = fake(s+15, 14, alnum) + "!x"
		add("password in URL", "redis://default:"+k+"@cache.internal:6379/0", k)
		k = fake(s+16, 28, alnum)
		add("high-entropy string", "    'client_secret': '"+k+"',", k)
		k = fake(s+17, 40, b64url)
		add("high-entropy string", "X-Api-Key: "+k, k)
		k = fake(s+18, 40, alnum)
		add("authorization value", "curl -H 'Authorization: Bearer "+k+"' https://api.example.com", k)
		add("bearer token", "requests.get(url, headers={'X-Token': 'Bearer "+k+"'})", k)
		k = fake(s+19, 16, alnum)
		add("password", "Server=tcp:db.example.com,1433;Database=shop;User ID=app;Password="+k+";Encrypt=True;", k)
		label := []string{"RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED "}[i%5]
		body := fake(s+20, 64, b64std) + "\n" + fake(s+21, 64, b64std) + "\n" + fake(s+22, 20, b64std) + "=="
		k = "-----BEGIN " + label + "PRIVATE KEY-----\n" + body + "\n-----END " + label + "PRIVATE KEY-----"
		add("private key", "{'type': 'service_account', 'private_key': '"+k+"\\n', 'client_email': 'svc@proj.iam.gserviceaccount.com'}", body[:64])
	}
	return out
}

// TestSecretCorpus: recall over the samples, per kind.
func TestSecretCorpus(t *testing.T) {
	f := New(ordinaryPolicy())
	found, total := 0, 0
	missed := map[string]int{}
	for _, c := range secretSamples() {
		total++
		out, _ := f.Text(c.line)
		if strings.Contains(out, c.secret) || !strings.Contains(out, markerPrefix+c.kind+", ") {
			missed[c.kind]++
			t.Logf("%s missed: %s -> %s", c.kind, c.line, out)
			continue
		}
		found++
	}
	t.Logf("recall: %d of %d (%.1f%%), missed by kind: %v", found, total, 100*float64(found)/float64(total), missed)
	// Known formats must all be found; the entropy rule is a heuristic
	// (a random draw may have too few digits to qualify) and may miss a few.
	for kind, n := range missed {
		if kind != kindEntropy || n > 2 {
			t.Errorf("missed %d %s", n, kind)
		}
	}
}

// TestEntropyRecall measures the high-entropy rule alone on random tokens
// of the shapes generated secrets have; a few low-entropy draws may slip.
func TestEntropyRecall(t *testing.T) {
	hit, n := 0, 0
	for _, size := range []int{24, 32, 40, 64} {
		for _, alphabet := range []string{alnum, b64url, b64std} {
			for i := uint64(0); i < 50; i++ {
				tok := fake(uint64(size)*1000+i, size, alphabet)
				if !strings.ContainsAny(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") || strings.Count(tok, "")-1 < size {
					continue
				}
				n++
				if generated(tok) {
					hit++
				}
			}
		}
	}
	rate := float64(hit) / float64(n)
	t.Logf("entropy rule recall on random tokens: %d of %d (%.1f%%)", hit, n, 100*rate)
	if rate < 0.9 {
		t.Errorf("entropy recall %.2f below 0.9", rate)
	}
}
