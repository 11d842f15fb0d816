package e2e

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// markdownAnswer has a heading, bold, inline code, a table wider than 60
// columns and a fenced Python block with a line longer than 60 columns.
const markdownAnswer = "<think>\nthe user asks about the frame\n</think>\n\n" +
	"# Summary\n\n" +
	"The frame has **two columns** and `2` rows.\n\n" +
	"| name | price | note |\n" +
	"|------|------:|------|\n" +
	"| apple | 1.25 | a fruit that grows on trees in many countries of the world, often red or green |\n" +
	"| pear | 2.50 | another fruit |\n\n" +
	"```python\n" +
	"import pandas as pd\n" +
	"df = pd.DataFrame({\"name\": [\"apple\", \"pear\"], \"price\": [1.25, 2.5]})  # a comment to pass sixty columns\n" +
	"```\n"

// newMarkdownServer streams answer to every question in pieces of 7 bytes
// (cutting ** and ``` markers), after first waiting for release when it is
// not nil.
func newMarkdownServer(t *testing.T, answer string, release <-chan struct{}) *fakemodel.Server {
	var pieces []string
	for i := 0; i < len(answer); i += 7 {
		pieces = append(pieces, answer[i:min(i+7, len(answer))])
	}
	return fakemodel.NewFunc(t, func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Pieces: pieces, Before: release, Usage: fakeUsage}
	})
}

// startAsking starts pyaichat on a PTY of cols columns with the model at
// baseURL, switches to ai> and asks a question.
func startAsking(t *testing.T, baseURL, term string, cols int, extra ...string) *ptytest.Proc {
	t.Helper()
	home := t.TempDir()
	env := append(testEnv(home, term), "OPENAI_BASE_URL="+baseURL, "OPENAI_API_KEY=sk-x", "PYAICHAT_MODEL=fake")
	s := ptytest.Start(t, binary, ptytest.Options{Env: append(env, extra...), Dir: home, Cols: cols, Rows: 50})
	s.ExpectString("py> ")
	s.Send(ptytest.Tab)
	s.ExpectString("ai> ")
	enter(s, "what is in df?")
	return s
}

var sgrSeq = regexp.MustCompile("\x1b\\[[0-9;]*m")

// outputLines is the output as lines on a terminal: styling dropped, and
// a line erased with \r ESC[K (the status line) removed.
func outputLines(raw string) []string {
	raw = sgrSeq.ReplaceAllString(raw, "")
	var lines []string
	for _, l := range strings.Split(raw, "\n") {
		if i := strings.LastIndex(l, "\r\x1b[K"); i >= 0 {
			l = l[i+len("\r\x1b[K"):]
		}
		lines = append(lines, strings.TrimRight(l, "\r"))
	}
	return lines
}

// On a terminal the answer is laid out from its Markdown: no markers, the
// table in columns, the code labelled; coloured under TERM=xterm-256color
// and not at all under NO_COLOR; no line wider than the terminal.
func TestPTYAnswerRendered(t *testing.T) {
	t.Parallel()
	srv := newMarkdownServer(t, markdownAnswer, nil)
	for _, c := range []struct {
		cols    int
		noColor bool
	}{{60, false}, {120, false}, {60, true}, {120, true}} {
		t.Run(fmt.Sprintf("%d-nocolor=%v", c.cols, c.noColor), func(t *testing.T) {
			t.Parallel()
			var extra []string
			if c.noColor {
				extra = append(extra, "NO_COLOR=1")
			}
			s := startAsking(t, srv.URL, "xterm-256color", c.cols, extra...)
			answer := s.ExpectString("[tokens: 100 in, 7 out]")
			s.ExpectString("ai> ")
			screen := s.Screen()
			for _, marker := range []string{"**", "```", "|---", "<think>"} {
				if strings.Contains(screen, marker) {
					t.Errorf("the screen shows %q:\n%s", marker, screen)
				}
			}
			for _, line := range strings.Split(screen, "\n") {
				if strings.HasPrefix(line, "#") {
					t.Errorf("a heading keeps its #: %q", line)
				}
			}
			for _, want := range []string{"\nSummary\n", "The frame has two columns and 2 rows.", "┌", "│ apple │", "[1] python\nimport pandas as pd"} {
				if !strings.Contains(screen, want) {
					t.Errorf("the screen lacks %q:\n%s", want, screen)
				}
			}
			// What stands out: the heading, the bold words, the inline
			// code, the table's header, highlighted Python; nothing at
			// all under NO_COLOR.
			styled := s.StyledText()
			if c.noColor && styled != "" {
				t.Errorf("styled text under NO_COLOR: %q", styled)
			}
			if !c.noColor {
				for _, want := range []string{"Summary", "two columns", "2", "name", "import", `"apple"`} {
					if !strings.Contains(styled, want) {
						t.Errorf("%q does not stand out; what does: %q", want, styled)
					}
				}
			}
			if c.noColor && strings.Contains(answer, "\x1b[") && sgrSeq.MatchString(answer) {
				t.Errorf("SGR styling under NO_COLOR: %q", answer)
			}
			for _, line := range outputLines(answer) {
				if w := runewidth.StringWidth(line); w > c.cols {
					t.Errorf("a line of %d columns on a terminal of %d: %q", w, c.cols, line)
				}
			}
		})
	}
}

// While the model has not yet answered, a status line shows it thinking;
// it is gone once the answer comes.
func TestPTYStatusLineWhileWaiting(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := newMarkdownServer(t, "The answer is **42**.\n", release)
	s := startAsking(t, srv.URL, "xterm", 80)
	s.ExpectScreen("the status line", func(screen string) bool {
		return regexp.MustCompile(`⠋|⠙|⠹|⠸|⠼|⠴|⠦|⠧|⠇|⠏`).MatchString(screen) && strings.Contains(screen, "thinking")
	})
	close(release)
	s.ExpectString("[tokens: 100 in, 7 out]")
	s.ExpectString("ai> ")
	screen := s.Screen()
	if strings.Contains(screen, "thinking") || regexp.MustCompile(`⠋|⠙|⠹|⠸|⠼|⠴|⠦|⠧|⠇|⠏`).MatchString(screen) {
		t.Errorf("the status line is left on the screen:\n%s", screen)
	}
	if !strings.Contains(screen, "ai> what is in df?\nThe answer is 42.\n[tokens: 100 in, 7 out]\nai>") {
		t.Errorf("the answer is not where the status line was:\n%s", screen)
	}
}

// A reasoning model's reasoning_content is shown dim, and the answer starts
// on a line of its own after it.
func TestPTYAnswerAfterReasoning(t *testing.T) {
	t.Parallel()
	srv := fakemodel.NewFunc(t, func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Thinking: "Let me think carefully.", Text: "The answer is 42.", Usage: fakeUsage}
	})
	s := startAsking(t, srv.URL, "xterm", 80)
	s.ExpectString("[tokens: 100 in, 7 out]")
	s.ExpectString("ai> ")
	if screen := s.Screen(); !strings.Contains(screen, "ai> what is in df?\nLet me think carefully.\nThe answer is 42.\n[tokens: 100 in, 7 out]\nai>") {
		t.Errorf("want the thinking, then the answer on a line of its own:\n%s", screen)
	}
}

// pyaichat's own long messages are broken at spaces to the terminal's
// width, where the terminal would break them mid-word: /tools is one
// short line per capability, /tools NAME the whole description, /privacy
// and the line of an assistant that is not configured.
func TestPTYOwnMessagesWrapAtWords(t *testing.T) {
	t.Parallel()
	const cols = 60
	run := func(env []string, lines ...string) string {
		home := t.TempDir()
		s := ptytest.Start(t, binary, ptytest.Options{Args: []string{"-q"}, Env: append(testEnv(home, "xterm"), env...), Dir: home, Cols: cols, Rows: 60})
		s.ExpectString("py> ")
		s.Send(ptytest.Tab)
		s.ExpectString("ai> ")
		var out strings.Builder
		for _, line := range lines {
			enter(s, line)
			out.WriteString(strings.TrimSuffix(s.ExpectString("ai> "), "ai> "))
		}
		return out.String()
	}
	csi := regexp.MustCompile("\x1b\\[[?0-9;]*[A-Za-z]")
	checkWidth := func(what, raw string) []string {
		lines := outputLines(csi.ReplaceAllString(raw, ""))
		for _, line := range lines {
			if i := strings.LastIndexByte(line, '\r'); i >= 0 {
				line = line[i+1:]
			}
			if w := runewidth.StringWidth(line); w > cols {
				t.Errorf("%s: a line of %d columns on a terminal of %d: %q", what, w, cols, line)
			}
		}
		return lines
	}
	out := run([]string{"OPENAI_API_KEY=k"}, "/tools")
	checkWidth("/tools", out)
	if n := strings.Count(out, "\n"); n != 8 || !strings.Contains(out, "get_last_exception") {
		t.Errorf("/tools: %d lines, want one per capability and one on /tools NAME:\n%s", n, out)
	}
	out = run([]string{"OPENAI_API_KEY=k"}, "/tools eval_expr", "/privacy")
	checkWidth("/tools eval_expr and /privacy", out)
	joined := strings.Join(strings.Fields(sgrSeq.ReplaceAllString(out, "")), " ")
	for _, want := range []string{
		"Evaluate one Python expression (not a statement) in the session's namespace and return its bounded repr and type.",
		"passwords in URLs and connection strings); long random-looking strings",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("a word was broken or lost; want %q in:\n%s", want, out)
		}
	}
	out = run(nil, "hello?")
	checkWidth("not configured", out)
	if joined := strings.Join(strings.Fields(out), " "); !strings.Contains(joined, "the assistant (ai>) is not configured: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server") {
		t.Errorf("not configured:\n%s", out)
	}
}

// Ctrl-C while the status line is up cancels the question as before: ^C,
// then (cancelled), each on its own line, in colour or not.
func TestPTYCancelWhileThinking(t *testing.T) {
	t.Parallel()
	for _, extra := range [][]string{nil, {"NO_COLOR=1"}} {
		t.Run(strings.Join(append([]string{"env"}, extra...), " "), func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			srv := newMarkdownServer(t, "never shown\n", release)
			s := startAsking(t, srv.URL, "xterm", 80, extra...)
			s.ExpectScreen("the status line", func(screen string) bool { return strings.Contains(screen, "thinking") })
			s.Send(ptytest.CtrlC)
			s.ExpectString("(cancelled)\r\n")
			s.ExpectString("ai> ")
			if screen := s.Screen(); !strings.Contains(screen, "ai> what is in df?\n^C\n(cancelled)\nai>") {
				t.Errorf("want ^C then (cancelled), each on its own line:\n%s", screen)
			}
		})
	}
}

// pyaichat -p into a pipe prints the model's Markdown as it came, without
// its <think> block, and no status line.
func TestOneShotPipedMarkdown(t *testing.T) {
	t.Parallel()
	srv := newMarkdownServer(t, markdownAnswer, nil)
	cmd := exec.Command(binary, "-p", "what is in df?")
	cmd.Env = append(testEnv(t.TempDir(), "xterm-256color"), "OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY=k")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat -p: %v\nstderr: %s", err, stderr.String())
	}
	want := strings.TrimPrefix(markdownAnswer, "<think>\nthe user asks about the frame\n</think>\n\n")
	if stdout.String() != want {
		t.Errorf("stdout %q\nwant %q", stdout.String(), want)
	}
}
