package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Transcript tests: every block of testdata/transcripts/*.txt is fed as
// stdin to the real `python3 -q -i` (the oracle) and to pyaichat, each in its
// own process. stdout must be identical; stderr must be identical once the
// prompts are removed (">>> "/"... " for python3, "py> "/"... " for
// pyaichat), the sequence of prompts must match (primary/continuation), and
// so must the exit status. Nothing expected is written down: the interpreter
// decides.
//
// File format: lines before the first header are comments. A header is
//
//	=== NAME [!noeol] [!slow]
//
// and the block's stdin is every line up to the next header, verbatim
// (blank lines included: they end compound statements). !noeol drops the
// final newline, so the input ends in the middle of a line. !slow writes the
// stdin one line at a time, 150 ms apart, as a person or a slow producer
// would: python3 -i reads its lines through C stdio, which swallows the whole
// pipe at once, so input() and sys.stdin only see later lines when they have
// not been written yet (the only deterministic way to feed input() from the
// same pipe to the oracle).
//
// Object addresses (0x7f...) are replaced by 0xADDR on both sides.

type transcript struct {
	file  string
	line  int
	name  string
	input string
	slow  bool
	env   []string // added to the test environment
}

var headerRE = regexp.MustCompile(`^=== (\S+)((?: ![a-z]+)*)\s*$`)

func loadTranscripts(t *testing.T) []transcript {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcript files in testdata/transcripts (%v)", err)
	}
	var all []transcript
	seen := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cur *transcript
		var body []string
		var noeol, slow bool
		flush := func() {
			if cur == nil {
				return
			}
			cur.input = strings.Join(body, "")
			if noeol {
				cur.input = strings.TrimSuffix(cur.input, "\n")
			}
			cur.slow = slow
			all = append(all, *cur)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if m := headerRE.FindStringSubmatch(line); m != nil {
				flush()
				name := strings.TrimSuffix(filepath.Base(f), ".txt") + "/" + m[1]
				if prev, dup := seen[name]; dup {
					t.Fatalf("%s:%d: block %s already defined at %s", f, n, m[1], prev)
				}
				seen[name] = fmt.Sprintf("%s:%d", f, n)
				cur = &transcript{file: f, line: n, name: name}
				body = nil
				noeol, slow = false, false
				for _, opt := range strings.Fields(m[2]) {
					switch opt {
					case "!noeol":
						noeol = true
					case "!slow":
						slow = true
					default:
						t.Fatalf("%s:%d: unknown option %s", f, n, opt)
					}
				}
				continue
			}
			if strings.HasPrefix(line, "===") {
				t.Fatalf("%s:%d: malformed header %q", f, n, line)
			}
			if cur != nil {
				body = append(body, line+"\n")
			}
		}
		flush()
	}
	return all
}

// runResult is what one process did with one stdin.
type runResult struct {
	stdout, stderr string
	status         int
	err            error // could not run or timed out
}

// feedSlowly writes lines to a pipe the way a person types them: each
// line only once the one before has been read from the pipe, and a moment
// later. python3 -i reads its lines through C stdio, which swallows
// whatever the pipe holds: a line written while the one before is still
// unread would go into that buffer, out of input()'s reach, which under load
// made the oracle's answer depend on timing.
// It gives up when done is closed (the program ended without reading).
func feedSlowly(w *os.File, lines []string, delay time.Duration, done <-chan struct{}) {
	defer w.Close()
	for i, line := range lines {
		if i > 0 {
			for {
				n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ) // FIONREAD: bytes in the pipe
				if err != nil || n == 0 {
					break
				}
				select {
				case <-done:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
			time.Sleep(delay)
		}
		if _, err := io.WriteString(w, line); err != nil {
			return // the program is gone
		}
	}
}

func runPiped(dir string, b transcript, argv ...string) runResult {
	stdin := b.input
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(testEnv(dir, ""), b.env...)
	if b.slow {
		r, w, err := os.Pipe()
		if err != nil {
			return runResult{err: err}
		}
		defer r.Close()
		done := make(chan struct{})
		defer close(done)
		cmd.Stdin = r
		go feedSlowly(w, strings.SplitAfter(stdin, "\n"), 150*time.Millisecond, done)
	} else {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	r := runResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.err = fmt.Errorf("timed out after 30s: %v", err)
	case errors.As(err, &ee):
		r.status = ee.ExitCode()
	case err != nil:
		r.err = err
	}
	return r
}

// promptRE finds the prompts in a piped session's stderr. python3 -i writes
// ">>> " and "... "; pyaichat writes "py> " and "... ".
var (
	pythonPromptRE   = regexp.MustCompile(`>>> |\.\.\. `)
	pyaichatPromptRE = regexp.MustCompile(`py> |\.\.\. `)
)

// splitPrompts removes the prompts from stderr and returns what is left and
// the sequence of prompts, "P" for a primary one and "C" for a continuation.
func splitPrompts(stderr string, re *regexp.Regexp) (string, string) {
	var seq strings.Builder
	rest := re.ReplaceAllStringFunc(stderr, func(p string) string {
		if p == "... " {
			seq.WriteByte('C')
		} else {
			seq.WriteByte('P')
		}
		return ""
	})
	return rest, seq.String()
}

func TestTranscripts(t *testing.T) {
	blocks := loadTranscripts(t)
	if len(blocks) < 40 {
		t.Errorf("only %d transcript blocks; the suite holds at least 40", len(blocks))
	}
	for _, b := range blocks {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			pyDir, paDir := t.TempDir(), t.TempDir()
			want := runPiped(pyDir, b, pythonOracle, "-q", "-i")
			got := runPiped(paDir, b, binary)
			// The working directory shows up in some outputs (os.getcwd(),
			// tracebacks of files) and addresses in default reprs: make them
			// the same words on both sides.
			want.stdout, want.stderr = normalise(want.stdout, pyDir), normalise(want.stderr, pyDir)
			got.stdout, got.stderr = normalise(got.stdout, paDir), normalise(got.stderr, paDir)
			compareRuns(t, b, want, got)
		})
	}
}

var addrRE = regexp.MustCompile(`0x[0-9a-f]{6,16}`)

func normalise(s, dir string) string {
	return addrRE.ReplaceAllString(strings.ReplaceAll(s, dir, "$TMP"), "0xADDR")
}

func compareRuns(t *testing.T, b transcript, want, got runResult) {
	t.Helper()
	if want.err != nil {
		t.Fatalf("%s:%d: python3 could not run the block: %v", b.file, b.line, want.err)
	}
	var problems []string
	if got.err != nil {
		problems = append(problems, fmt.Sprintf("pyaichat did not finish: %v", got.err))
	}
	if got.status != want.status {
		problems = append(problems, fmt.Sprintf("exit status: python3 %d, pyaichat %d", want.status, got.status))
	}
	if got.stdout != want.stdout {
		problems = append(problems, "stdout differs (- python3, + pyaichat):\n"+lineDiff(want.stdout, got.stdout))
	}
	wantErr, wantSeq := splitPrompts(want.stderr, pythonPromptRE)
	gotErr, gotSeq := splitPrompts(got.stderr, pyaichatPromptRE)
	if gotErr != wantErr {
		problems = append(problems, "stderr without prompts differs (- python3, + pyaichat):\n"+lineDiff(wantErr, gotErr))
	}
	if gotSeq != wantSeq {
		problems = append(problems, fmt.Sprintf("prompt sequence (P primary, C continuation) differs:\n  python3:  %s\n  pyaichat: %s", wantSeq, gotSeq))
	}
	if len(problems) > 0 {
		t.Errorf("%s:%d: block %s\n--- stdin ---\n%s--- python3 stdout ---\n%s\n--- python3 stderr ---\n%s\n--- pyaichat stdout ---\n%s\n--- pyaichat stderr ---\n%s\n--- problems ---\n%s",
			b.file, b.line, b.name, indent(b.input), indent(want.stdout), indent(want.stderr),
			indent(got.stdout), indent(got.stderr), strings.Join(problems, "\n"))
	}
}

func indent(s string) string {
	if s == "" {
		return "    (empty)\n"
	}
	lines := strings.SplitAfter(s, "\n")
	var sb strings.Builder
	for _, l := range lines {
		if l == "" {
			continue
		}
		sb.WriteString("    | " + l)
		if !strings.HasSuffix(l, "\n") {
			sb.WriteString("⏎(no newline)\n")
		}
	}
	return sb.String()
}
