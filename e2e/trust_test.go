package e2e

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// Secrets the red team piped to -p, built here so that no literal looks
// live.
var (
	trustAWSSecret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	trustBearer    = "Qx7kPz9mLw3vRt5u" + "eyJ0eXAiOiJKV1Qi"
	trustURLPass   = "Zq8-pw-" + "Kd81rT"
)

// Text piped to -p is part of the question, and is filtered like all the
// rest under every policy: the configured key, an AWS secret, a bearer
// token and a URL password never reach the provider.
func TestPipedQuestionIsFiltered(t *testing.T) {
	t.Parallel()
	stdin := fakeOpenAIKey + " is my key\naws_secret_access_key=" + trustAWSSecret +
		"\ncurl -H 'Authorization: Bearer " + trustBearer + "' https://api.example.com\n" +
		"DATABASE_URL=postgres://app:" + trustURLPass + "@db:5432/orders\n"
	for _, share := range []string{"redacted", "off", "ask"} {
		t.Run(share, func(t *testing.T) {
			t.Parallel()
			fake := newFakeOpenAI(t, "list_globals", `{}`)
			home := t.TempDir()
			writeConfig(t, home, "share = \""+share+"\"\n")
			cmd := exec.Command(binary, "-p", "explain")
			cmd.Env = append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY="+fakeOpenAIKey)
			cmd.Stdin = strings.NewReader(stdin)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("pyaichat -p: %v\nstderr: %s", err, stderr.String())
			}
			sent := sentText(t, fake)
			for _, s := range []string{fakeOpenAIKey, trustAWSSecret, trustBearer, trustURLPass} {
				if strings.Contains(sent, s) {
					t.Errorf("%q reached the provider:\n%s", s, sent)
				}
			}
			for _, m := range []string{"API key", "AWS secret key", "password in URL"} {
				if !strings.Contains(sent, m) {
					t.Errorf("no %q marker in what was sent:\n%s", m, sent)
				}
			}
		})
	}
}

// A question typed at ai> is filtered too.
func TestPTYTypedQuestionIsFiltered(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "list_globals", `{}`)
	s := startREPLNoWait(t, t.TempDir(), []string{"OPENAI_BASE_URL=" + fake.URL, "OPENAI_API_KEY=" + fakeOpenAIKey, "PYAICHAT_MODEL=fake-model"})
	s.ExpectString("py> ")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "is "+fakeGitHub+" or "+fakeOpenAIKey+" valid?")
	s.ExpectString("The tool said")
	s.ExpectString("ai> ")
	s.Send("\x04")
	assertExit(t, s, 0)
	sent := sentText(t, fake)
	for _, secret := range []string{fakeGitHub, fakeOpenAIKey} {
		if strings.Contains(sent, secret) {
			t.Errorf("%q reached the provider:\n%s", secret, sent)
		}
	}
	if !strings.Contains(sent, "GitHub token") {
		t.Errorf("no GitHub marker in what was sent:\n%s", sent)
	}
}

// A conversation resumed under share = "off" or "ask" sends none of the
// earlier session's tool values, to another provider as to the same one;
// under "redacted" it is filtered again.
func TestPTYResumeHoldsTodaysShare(t *testing.T) {
	t.Parallel()
	const orchard = "plum-orchard-" + "5519"
	for _, share := range []string{"off", "ask", "redacted"} {
		t.Run(share, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			first := newChatFake(t)
			s := startREPLNoWait(t, home, first.env())
			s.ExpectString("py> ")
			typeLine(t, s, "a = '"+orchard+"'", "")
			s.Send("\t")
			s.ExpectString("ai> ")
			enter(s, "what is in a?")
			s.ExpectString("Answer 1")
			s.ExpectString("ai> ")
			s.Send("\x04")
			assertExit(t, s, 0)
			if !strings.Contains(strings.Join(toolMessagesOf(first.requests()[1]), ""), orchard) {
				t.Fatalf("the first session's provider never saw the value: the test proves nothing")
			}

			writeConfig(t, home, "share = \""+share+"\"\n")
			second := newChatFake(t) // another provider
			s = startREPLNoWait(t, home, second.env(), "--continue")
			s.ExpectString("run them again now? [y/N] ")
			s.Send("n")
			s.ExpectString("py> ")
			s.Send("\t")
			s.ExpectString("ai> ")
			enter(s, "and b?")
			if share == "ask" {
				s.ExpectString(askQuestion)
				s.Send("n")
			}
			s.ExpectString("Answer 1")
			s.ExpectString("ai> ")
			s.Send("\x04")
			assertExit(t, s, 0)
			sent, _ := json.Marshal(second.requests())
			leaked := strings.Contains(string(sent), orchard)
			if share != "redacted" && (leaked || !strings.Contains(string(sent), "withheld")) {
				t.Errorf("share = %s: the earlier tool value went to the new provider:\n%s", share, sent)
			}
			if share == "redacted" && !leaked {
				t.Errorf("share = redacted: the earlier result was not replayed:\n%s", sent)
			}
		})
	}
}
