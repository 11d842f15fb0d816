package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// ai> transcripts: each file of testdata/ai-transcripts is one session of
// the real binary on a PTY against the fake model (agent/fakemodel): what
// is typed at py> and ai>, the model's scripted replies, and the screen at
// the end, which must match exactly. The format is in that folder's
// README.md.
type aiTranscript struct {
	steps   []aiStep
	replies []fakemodel.Reply
	sent    [][]string // per reply, what its request must carry
	screen  string
}

type aiStep struct {
	mode string // "py", "ai" or "^C"
	text string // the line typed; for ^C, the stalled reply's last line
}

func TestAITranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "ai-transcripts", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts in testdata/ai-transcripts (%v)", err)
	}
	for _, f := range files {
		tr := parseAITranscript(t, f)
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			t.Parallel()
			runAITranscript(t, tr)
		})
	}
}

// aiParser reads one transcript file.
type aiParser struct {
	t      *testing.T
	where  string
	tr     aiTranscript
	reply  *aiReply // the reply being read
	screen []string // the lines from "--- screen" on, once it is read
}

// aiReply is a reply as written, before its repetitions are made.
type aiReply struct {
	repeat int
	status int
	stall  bool
	lines  []string
}

func parseAITranscript(t *testing.T, path string) aiTranscript {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := &aiParser{t: t}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	started := false
	for i, line := range lines {
		p.where = fmt.Sprintf("%s:%d", path, i+1)
		if p.screen != nil {
			p.screen = append(p.screen, line)
			continue
		}
		if !started && (strings.HasPrefix(line, "#") || line == "") {
			continue
		}
		started = true
		p.line(line)
	}
	p.endReply()
	if p.screen == nil {
		t.Fatalf("%s: no --- screen", path)
	}
	p.tr.screen = strings.TrimRight(strings.Join(p.screen[1:], "\n"), "\n")
	return p.tr
}

func (p *aiParser) line(line string) {
	switch {
	case strings.HasPrefix(line, "py> "), strings.HasPrefix(line, "ai> "):
		p.endReply()
		p.tr.steps = append(p.tr.steps, aiStep{mode: line[:2], text: line[4:]})
	case line == "^C":
		p.endReply()
		p.tr.steps = append(p.tr.steps, aiStep{mode: "^C", text: p.stalledLine()})
	case line == "--- screen":
		p.endReply()
		p.screen = []string{line}
	case strings.HasPrefix(line, "--- model"):
		p.endReply()
		p.reply = p.header(strings.Fields(strings.TrimPrefix(line, "--- model")))
	case p.reply != nil:
		p.reply.lines = append(p.reply.lines, line)
	default:
		p.t.Fatalf("%s: %q is neither py>, ai>, ^C, --- model nor --- screen", p.where, line)
	}
}

func (p *aiParser) header(words []string) *aiReply {
	r := &aiReply{repeat: 1}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "stall":
			r.stall = true
		case w == "status" && i+1 < len(words):
			i++
			n, err := strconv.Atoi(words[i])
			if err != nil || n < 300 {
				p.t.Fatalf("%s: status %q", p.where, words[i])
			}
			r.status = n
		case strings.HasPrefix(w, "x"):
			n, err := strconv.Atoi(w[1:])
			if err != nil || n < 1 {
				p.t.Fatalf("%s: repeat %q", p.where, w)
			}
			r.repeat = n
		default:
			p.t.Fatalf("%s: unknown word %q in a --- model line", p.where, w)
		}
	}
	return r
}

// endReply makes the reply being read, repeated as asked.
func (p *aiParser) endReply() {
	if p.reply == nil {
		return
	}
	for n := 1; n <= p.reply.repeat; n++ {
		reply, sent := p.makeReply(p.reply, strconv.Itoa(n))
		p.tr.replies = append(p.tr.replies, reply)
		p.tr.sent = append(p.tr.sent, sent)
	}
	p.reply = nil
}

func (p *aiParser) makeReply(r *aiReply, n string) (reply fakemodel.Reply, sent []string) {
	reply.Status = r.status
	var text []string
	for _, line := range r.lines {
		line = strings.ReplaceAll(line, "{n}", n)
		word, rest, _ := strings.Cut(line, " ")
		switch word {
		case "|":
			text = append(text, rest)
		case "call":
			name, args, _ := strings.Cut(rest, " ")
			reply.Calls = append(reply.Calls, fakemodel.Call{Name: name, Args: args})
		case "usage":
			reply.Usage = &fakemodel.Usage{}
			if _, err := fmt.Sscan(rest, &reply.Usage.Prompt, &reply.Usage.Completion); err != nil {
				p.t.Fatalf("%s: usage %q: %v", p.where, rest, err)
			}
		case "error":
			reply.Error = rest
		case "sent":
			sent = append(sent, rest)
		default:
			p.t.Fatalf("%s: %q is not a line of a reply (|, call, usage, error, sent)", p.where, line)
		}
	}
	if len(text) > 0 {
		reply.Text = strings.Join(text, "\n") + "\n"
	}
	if r.stall {
		reply.Pause = len(strings.SplitAfter(reply.Text, " "))
	}
	return reply, sent
}

// stalledLine is the last line of the last reply written, which must stall.
func (p *aiParser) stalledLine() string {
	if len(p.tr.replies) == 0 || p.tr.replies[len(p.tr.replies)-1].Pause == 0 {
		p.t.Fatalf("%s: ^C without a --- model stall before it", p.where)
	}
	lines := strings.Split(strings.TrimSpace(p.tr.replies[len(p.tr.replies)-1].Text), "\n")
	return lines[len(lines)-1]
}

var retryWait = regexp.MustCompile(`retrying in [0-9.]+(ns|µs|ms|s)`)

func runAITranscript(t *testing.T, tr aiTranscript) {
	srv := fakemodel.New(t, tr.replies...)
	home := t.TempDir()
	env := append(testEnv(home, "xterm"), "OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY=sk-transcript-0123456789abcdef", "PYAICHAT_MODEL=fake-model")
	s := ptytest.Start(t, binary, ptytest.Options{Args: []string{"-q"}, Env: env, Dir: home, Rows: 50, Cols: 120})
	s.ExpectString("py> ")
	mode := "py"
	for i, st := range tr.steps {
		if st.mode == "^C" {
			s.ExpectScreen(fmt.Sprintf("the stalled answer %q", st.text), func(screen string) bool { return strings.Contains(screen, st.text) })
			s.Send(ptytest.CtrlC)
			s.ExpectString("ai> ")
			continue
		}
		if st.mode != mode {
			s.Send(ptytest.Tab)
			s.ExpectString(st.mode + "> ")
			mode = st.mode
		}
		enter(s, st.text)
		switch {
		case i+1 < len(tr.steps) && tr.steps[i+1].mode == "^C":
		case mode == "py":
			s.ExpectRegexp(regexp.MustCompile(`py> |\.\.\. `))
		default:
			s.ExpectString("ai> ")
		}
	}
	screen := strings.ReplaceAll(s.Screen(), srv.URL, "{url}")
	screen = retryWait.ReplaceAllString(screen, "retrying in {wait}")
	if screen != tr.screen {
		t.Errorf("the screen:\n%s\n\nwant:\n%s", screen, tr.screen)
	}
	reqs := srv.Requests()
	if len(reqs) != len(tr.replies) {
		t.Errorf("the model was asked %d times; the transcript has %d replies", len(reqs), len(tr.replies))
	}
	for i, r := range reqs[:min(len(reqs), len(tr.sent))] {
		var carried strings.Builder
		for _, m := range r.Messages() {
			carried.WriteString(m.Content + "\n")
		}
		for _, want := range tr.sent[i] {
			if !strings.Contains(carried.String(), want) {
				t.Errorf("request %d does not carry %q:\n%s", i+1, want, carried.String())
			}
		}
	}
}
