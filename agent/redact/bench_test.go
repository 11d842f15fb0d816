package redact

import (
	"fmt"
	"strings"
	"testing"
)

// benchPolicy is a realistic policy: one configured key and ~40
// environment entries, a few of them secret.
func benchPolicy() Policy {
	env := []string{
		"HOME=/home/alice", "USER=alice", "SHELL=/bin/bash", "LANG=en_US.UTF-8", "TERM=xterm-256color",
		"PWD=/home/alice/projects/app", "OLDPWD=/home/alice", "PATH=/usr/local/bin:/usr/bin:/bin",
		"EDITOR=vim", "PAGER=less", "LOGNAME=alice", "HOSTNAME=workstation", "TZ=Europe/Berlin",
		"VIRTUAL_ENV=/home/alice/.venv", "PYTHONPATH=/home/alice/projects/app/src", "PYTHONUNBUFFERED=1",
		"XDG_SESSION_TYPE=wayland", "XDG_RUNTIME_DIR=/run/user/1000", "DISPLAY=:0", "WAYLAND_DISPLAY=wayland-0",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", "SSH_AUTH_SOCK=/run/user/1000/keyring/ssh",
		"GIT_AUTHOR_NAME=Alice Example", "GIT_AUTHOR_EMAIL=alice@example.com", "COLORTERM=truecolor",
		"LESS=-R", "MAIL=/var/mail/alice", "SHLVL=1", "CONDA_DEFAULT_ENV=base", "JUPYTER_PORT=8888",
		"OPENAI_BASE_URL=https://api.openai.com/v1", "OPENAI_API_KEY=" + openAIKey,
		"GITHUB_TOKEN=" + githubPAT, "AWS_ACCESS_KEY_ID=" + awsKeyID, "AWS_SECRET_ACCESS_KEY=" + awsSecret,
		"DATABASE_URL=postgres://app:s3cr3tpass@db:5432/orders", "SENTRY_DSN=https://abc@o1.ingest.sentry.io/1",
		"HF_TOKEN=hf_" + fake(50, 34, alnum), "DB_PASSWORD=Tr0ub4dor&3x", "TOKENIZERS_PARALLELISM=false",
	}
	return Policy{Secrets: []Secret{{Kind: "API key", Value: openAIKey}}, Environ: env}
}

// benchText is 1 KiB of mixed tool-result text with nothing secret in it,
// the common case.
func benchText() string {
	parts := []string{
		">>> df.head()\n   order_id customer_id        date  product_code  quantity  unit_price\n",
		"0    100234      C00871  2023-01-03   SKU-4471-BL         3       19.99\n",
		"1    100235      C01442  2023-01-03   SKU-1180-RD         1      249.00\n",
		"Traceback (most recent call last):\n  File \"/usr/lib/python3.11/site-packages/pandas/io/parsers/readers.py\", line 912, in read_csv\n",
		"KeyError: 'revenue'\n>>> os.environ.get('HOME')\n'/home/alice'\n",
		"{'model': 'gpt-4o-mini', 'temperature': 0.2, 'url': 'https://api.openai.com/v1/chat/completions'}\n",
		"commit 3473379f2c6a1d0e8b9a7c5d4e3f2a1b0c9d8e7f\nAuthor: Alice Example <alice@example.com>\n",
		"The function returns a new list containing all items from the iterable in ascending order.\n",
		"array([[ 0.30471708, -1.03998411,  0.7504512 ],\n       [ 0.94056472, -1.95103519, -1.30217951]])\n",
	}
	var b strings.Builder
	for b.Len() < 1024 {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	return b.String()[:1024]
}

func BenchmarkTextPerKB(b *testing.B) {
	f := New(benchPolicy())
	s := benchText()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		f.Text(s)
	}
}

// BenchmarkTextPerKBSecrets is the same kilobyte with secrets in it.
func BenchmarkTextPerKBSecrets(b *testing.B) {
	f := New(benchPolicy())
	s := benchText()
	s = s[:1024-300] + fmt.Sprintf("\nkey=%s token=%s id=%s %s\n", openAIKey, githubPAT, awsKeyID, jwt)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		f.Text(s)
	}
}

func BenchmarkJSONPerKB(b *testing.B) {
	f := New(benchPolicy())
	var doc strings.Builder
	doc.WriteString(`{"tool":"run_python","ok":true,"lines":[`)
	for i := 0; doc.Len() < 1000; i++ {
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"n":%d,"text":"row %d: SKU-4471-BL 19.99 /usr/lib/python3.11/x.py"}`, i, i)
	}
	doc.WriteString(`]}`)
	d := []byte(doc.String())
	b.SetBytes(int64(len(d)))
	for b.Loop() {
		if _, _, err := f.JSON(d); err != nil {
			b.Fatal(err)
		}
	}
}
