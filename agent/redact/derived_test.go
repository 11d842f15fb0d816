package redact

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// pyList is a Python list's repr of items.
func pyList(items []string) string { return "[" + strings.Join(items, ", ") + "]" }

func codePoints(s string) string {
	var items []string
	for _, r := range s {
		items = append(items, fmt.Sprint(int(r)))
	}
	return pyList(items)
}

func hexPoints(s string) string {
	var items []string
	for _, r := range s {
		items = append(items, fmt.Sprintf("0x%x", r))
	}
	return pyList(items)
}

func charList(s string) string {
	var items []string
	for _, r := range s {
		items = append(items, "'"+string(r)+"'")
	}
	return pyList(items)
}

// derivedForms are the transformations the red team had the model ask
// for, of a secret the session knows.
func derivedForms(secret string) map[string]string {
	rev := reverseRunes(secret)
	return map[string]string{
		"spaced":          strings.Join(strings.Split(secret, ""), " "),
		"comma-joined":    strings.Join(strings.Split(secret, ""), ","),
		"chars":           charList(secret),
		"reversed":        rev,
		"reversed spaced": strings.Join(strings.Split(rev, ""), " "),
		"hex":             hex.EncodeToString([]byte(secret)),
		"HEX":             strings.ToUpper(hex.EncodeToString([]byte(secret))),
		"hex of reversed": hex.EncodeToString([]byte(rev)),
		"base64":          base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64 urlsafe":  base64.URLEncoding.EncodeToString([]byte(secret)),
		"base64 glued":    base64.StdEncoding.EncodeToString([]byte("key=" + secret)),
		"slice head":      secret[8:14],
		"slice middle":    secret[10:17],
		"slice tail":      secret[len(secret)-8:],
		"ords":            codePoints(secret),
		"ords hex":        hexPoints(secret),
		"bytes of slice":  codePoints(secret[5:13]),
		"hex of slice":    hex.EncodeToString([]byte(secret[3:11])),
	}
}

// A secret the filter knows (the configured key, a secret variable's
// value) is caught in each common encoding, as the whole of a repr and
// inside one.
func TestDerivedFormsOfKnownSecrets(t *testing.T) {
	key := "sk-proj-" + fake(21, 40, alnum)
	token := fake(22, 36, alnum)
	f := New(Policy{Secrets: []Secret{{Kind: "API key", Value: key}}, Environ: []string{"MY_TOKEN=" + token}})
	for _, secret := range []string{key, token} {
		for name, form := range derivedForms(secret) {
			for _, text := range []string{"'" + form + "'", "result: " + form + " (done)"} {
				out, rep := f.Text(text)
				if strings.Contains(out, form) || rep.Count == 0 {
					t.Errorf("%s of %.12s...: %q -> %q", name, secret, text, out)
				}
			}
		}
	}
}

// A value the filter has redacted once (here an AWS secret key in a
// repr) is known from then on: its transformed forms are caught too.
func TestRedactedValuesAreLearned(t *testing.T) {
	f := New(Policy{})
	secret := fake(23, 40, b64std)
	if out, _ := f.Text("aws_secret_access_key = " + secret); strings.Contains(out, secret) {
		t.Fatalf("the AWS secret itself was not redacted: %q", out)
	}
	for name, form := range derivedForms(secret) {
		if out, _ := f.Text(form); strings.Contains(out, form) {
			t.Errorf("%s of a redacted value: %q", name, out)
		}
	}
	// A new Filter has learned nothing: a nil or fresh filter is pure.
	if out, _ := New(Policy{}).Text(hex.EncodeToString([]byte(secret))); strings.Contains(out, "redacted") {
		t.Errorf("a fresh filter redacted %q", out)
	}
}

// Ordinary text around known secrets is left alone: the words of a URL
// password, digits, hex digests, a short secret's slices, a different
// key that shares a short key's prefix. A short secret is still caught
// whole, transformed.
func TestDerivedLeavesOrdinaryText(t *testing.T) {
	f := New(Policy{
		Secrets: []Secret{{Kind: "API key", Value: "sk-abc12345"}},
		Environ: []string{"DATABASE_URL=postgres://app:password123@db/orders", "DB_PASSWORD=correcthorse"},
	})
	for _, text := range []string{
		"the password is set", "sk-abc123456", "abc123", "correct", "horse",
		"sha256 3473379f2c6a1d0e8b9a7c5d4e3f2a1b0c9d8e7f", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]",
		"order_id customer_id 100234 C00871 2023-01-03 SKU-4471-BL",
	} {
		if out, _ := f.Text(text); out != text {
			t.Errorf("Text(%q) = %q", text, out)
		}
	}
	for _, text := range []string{"321drowssap", "p a s s w o r d 1 2 3", "sk-abc12345"[3:] + " reversed: " + reverseRunes("sk-abc12345")} {
		if out, _ := f.Text(text); !strings.Contains(out, "redacted") {
			t.Errorf("Text(%q) = %q: a whole short secret, transformed, survived", text, out)
		}
	}
}

// Names that are not judged secret but whose values are (a URL with a
// password, a token under an ordinary name) are wiped in the copy; PW and
// DSN names are judged secret.
func TestSecretVarJudgesValues(t *testing.T) {
	f := New(Policy{Environ: []string{
		"DATABASE_URL=postgres://app:s3cr3t-Pass99@db/orders", "MYAPP_CONF=" + "gh" + "p_" + fake(24, 36, alnum),
		"HOME=/home/alice", "EDITOR=vim", "MYAPP_PW=hunter2-Zx81qQ", "SENTRY_DSN=https://abc@o1.ingest.sentry.io/1",
		"LANG=en_US.UTF-8", "NPWD=1",
	}})
	for name, want := range map[string]bool{
		"DATABASE_URL": true, "MYAPP_CONF": true, "MYAPP_PW": true, "SENTRY_DSN": true, "PW": true,
		"HOME": false, "EDITOR": false, "LANG": false, "PWM_MODE": false,
	} {
		if got := f.SecretVar(name); got != want {
			t.Errorf("SecretVar(%s) = %v, want %v", name, got, want)
		}
	}
	if out, _ := f.Text(reverseRunes("s3cr3t-Pass99")); strings.Contains(out, reverseRunes("s3cr3t-Pass99")) {
		t.Errorf("the reversed URL password survived: %q", out)
	}
	if out, _ := f.Text("hunter2-Zx81qQ"); strings.Contains(out, "hunter2-Zx81qQ") {
		t.Errorf("the MYAPP_PW value survived: %q", out)
	}
}

// BenchmarkDerivedPerKB is the cost of looking for transformed secrets in
// ordinary text, with the bench policy's secrets and 200 learned values.
func BenchmarkDerivedPerKB(b *testing.B) {
	f := New(benchPolicy())
	for i := range 200 {
		f.known.add("learned", fake(uint64(100+i), 40, alnum), true)
	}
	s := benchText()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		f.findDerived(s, nil)
	}
}

// A variable named as a secret has its value redacted whatever it looks
// like, as a frame's local and as a list_globals entry; password=VALUE
// in a message is redacted; ordinary names and code are left alone.
func TestSecretNamedValues(t *testing.T) {
	f := New(Policy{})
	doc := `{"frames":[{"locals":{"password":"'hunter2x'","db_password":"'Tr0ub4dor'","apiKey":"'abc-def'","key":"'name'","session":"3","pw":"None"}}],` +
		`"globals":[{"name":"API_TOKEN","type":"str","preview":"'plain words here'"},{"name":"keys","type":"list","preview":"['a', 'b']"}]}`
	out, _, err := f.JSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2x", "Tr0ub4dor", "abc-def", "plain words here"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("%q survived: %s", secret, out)
		}
	}
	for _, kept := range []string{`"key":"'name'"`, `"session":"3"`, `"pw":"None"`, `"preview":"['a', 'b']"`} {
		if !strings.Contains(string(out), kept) {
			t.Errorf("%s was changed: %s", kept, out)
		}
	}
	for text, want := range map[string]bool{
		"ValueError: login failed: password=hunter2x for admin": true,
		"connect(host=db, passwd = s3cretZZ)":                   true,
		"password=None":                                         false,
		"conn = connect(password=os.environ['PGPASSWORD'])":     false,
		"password=settings.DB_PASSWORD":                         false,
		"password=****":                                         false,
	} {
		out, _ := f.Text(text)
		if got := out != text; got != want {
			t.Errorf("Text(%q) = %q, redacted %v, want %v", text, out, got, want)
		}
	}
	for name, want := range map[string]bool{"password": true, "DB_PASSWORD": true, "apiKey": true, "private_key": true,
		"client_secret": true, "key": false, "keys": false, "session": false, "pwd": false, "tokenizer": false, "passed": false} {
		if got := SecretVariableName(name); got != want {
			t.Errorf("SecretVariableName(%q) = %v, want %v", name, got, want)
		}
	}
}

// An AWS secret key inside a file path is redacted whole, its 40
// characters, though a slash follows it.
func TestAWSSecretInAPath(t *testing.T) {
	for _, text := range []string{
		"/data/aws_secret_access_key=" + awsSecret + "/x.csv",
		`File "/srv/AWS_SECRET_ACCESS_KEY=` + awsSecret + `/run.py", line 3`,
	} {
		out, _ := New(Policy{}).Text(text)
		if strings.Contains(out, awsSecret[:14]) || strings.Contains(out, awsSecret[14:]) || !strings.Contains(out, "AWS secret key, 40 chars") {
			t.Errorf("Text(%q) = %q", text, out)
		}
	}
}
