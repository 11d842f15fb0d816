package e2e

import (
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
)

// At ai>, /usage totals the session's tokens, and /compact replaces the
// conversation by the model's summary: the next question's request holds
// the summary and not the old exchange.
func TestPTYUsageAndCompact(t *testing.T) {
	t.Parallel()
	srv := fakemodel.NewFunc(t, func(r fakemodel.Request) fakemodel.Reply {
		if r.JSON()["tools"] == nil { // the request for a summary offers no tools
			return fakemodel.Reply{Text: "SUMMARY-NOTE: the user asked about apples.", Usage: fakeUsage}
		}
		return fakemodel.Reply{Text: "an answer", Usage: fakeUsage}
	})
	s := startREPLNoWait(t, "", []string{"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=sk-e2e-0123456789"})
	s.ExpectString("py> ")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "tell me about APPLES-QUESTION")
	s.ExpectString("an answer")
	s.ExpectString("ai> ")
	enter(s, "/usage")
	s.ExpectString("questions: 1")
	s.ExpectString("tokens: 100 in, 7 out")
	s.ExpectString("ai> ")
	enter(s, "/compact")
	s.ExpectString("1 earlier exchange compacted into a summary")
	s.ExpectString("ai> ")
	enter(s, "and pears?")
	s.ExpectString("an answer")
	s.ExpectString("ai> ")

	reqs := srv.Requests()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "SUMMARY-NOTE") || strings.Contains(last, "APPLES-QUESTION") {
		t.Errorf("the request after /compact:\n%s\nwant the summary, not the old question", last)
	}
}
