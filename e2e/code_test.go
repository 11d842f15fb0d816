package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// codeAnswer has a shell block [1] and a Python block [2].
const codeAnswer = "Run it with:\n\n```sh\npython3 sums.py\n```\n\nOr here:\n\n```python\na = 10\nb = 20\nprint('sum is', a + b)\n```\n"

// startWithAnswer starts pyaichat with a model that answers codeAnswer,
// asks it a question at ai> and waits for the next ai> prompt.
func startWithAnswer(t *testing.T) *ptytest.Proc {
	t.Helper()
	srv := newMarkdownServer(t, codeAnswer, nil)
	s := startAsking(t, srv.URL, "xterm", 80, "PYTHONSTARTUP=")
	s.ExpectString("sum is")
	s.ExpectString("ai> ")
	return s
}

// lastRows is the screen's last n non-empty rows.
func lastRows(screen string, n int) string {
	rows := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
	}
	return strings.Join(rows[max(0, len(rows)-n):], "\n")
}

// /code puts the answer's Python block in the py> line, on its rows after
// "... ", running nothing; Enter runs it, and its names exist after.
func TestPTYCodePutsBlockInLine(t *testing.T) {
	t.Parallel()
	s := startWithAnswer(t)
	s.SendLine("/code")
	want := "py> a = 10\n... b = 20\n... print('sum is', a + b)"
	s.ExpectScreen("the block in the py> line", func(screen string) bool { return lastRows(screen, 3) == want })
	s.ExpectCursorAt("... print('sum is', a + b)", len("... print('sum is', a + b)"))
	if strings.Count(s.Output(), "sum is 30") != 0 {
		t.Fatalf("the block ran before Enter\n%s", s.Dump())
	}
	s.Send(ptytest.Enter)
	s.ExpectString("sum is 30\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, "a * b", "200")
}

// Up inside the block moves to the row above, where typing inserts; Enter
// runs the block as edited.
func TestPTYCodeEditInsideBlock(t *testing.T) {
	t.Parallel()
	s := startWithAnswer(t)
	s.SendLine("/code 2")
	s.ExpectCursorAt("... print('sum is', a + b)", len("... print('sum is', a + b)"))
	s.Send(ptytest.Up)
	// Column 26 on the row above is past its end: the cursor goes there.
	s.ExpectCursorAt("... b = 20", len("... b = 20"))
	s.Send("0")
	s.ExpectCursorAt("... b = 200", len("... b = 200"))
	s.Send(ptytest.Up + "1")
	// Up from column 11 of "... b = 200": the end of "py> a = 10".
	s.ExpectCursorAt("py> a = 101", len("py> a = 101"))
	s.ExpectScreen("the edited block", func(screen string) bool {
		return lastRows(screen, 3) == "py> a = 101\n... b = 200\n... print('sum is', a + b)"
	})
	s.Send(ptytest.Enter)
	s.ExpectString("sum is 301\r\n")
	s.ExpectString("py> ")
	typeLine(t, s, "b", "200")
}

// /code N out of range, and the shell block [1] by number.
func TestPTYCodeBlockNumbers(t *testing.T) {
	t.Parallel()
	s := startWithAnswer(t)
	enter(s, "/code 3")
	s.ExpectString("no block [3]; the last answer has 2 blocks")
	s.ExpectString("ai> ")
	s.SendLine("/code 1")
	s.ExpectCursorAt("py> python3 sums.py", len("py> python3 sums.py"))
}

// A pasted block of three lines is one history entry: one Up brings it
// back whole, on its rows, and Enter runs it again.
func TestPTYPastedBlockRecalledWhole(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startREPL(t, home, "-q")
	block := "count = globals().get('count', 0)\ncount += 1\nprint('count is', count)"
	s.Paste(block + "\n")
	s.ExpectString("count is 1\r\n")
	s.ExpectString("py> ")
	s.Send(ptytest.Up)
	want := "py> count = globals().get('count', 0)\n... count += 1\n... print('count is', count)"
	s.ExpectScreen("the block recalled", func(screen string) bool { return lastRows(screen, 3) == want })
	s.Send(ptytest.Enter)
	s.ExpectString("count is 2\r\n")
	s.ExpectString("py> ")
	if got := readFile(t, historyFile(home, "py")); !strings.Contains(got, `count += 1\nprint`) {
		t.Errorf("history file %q: want the block as one entry", got)
	}
}

const keyRight = "\x1b[C"

// The rest of a module's name is suggested dim after the cursor; Right
// takes it into the line.
func TestPTYSuggestsName(t *testing.T) {
	t.Parallel()
	s := startREPL(t, "", "-q")
	typeLine(t, s, "import collections", "")
	s.Send("collec")
	s.ExpectCursorAt("py> collections", len("py> collec"))
	// vt10x keeps no dim attribute: the drawing itself says it.
	if !strings.Contains(s.Output(), "collec\x1b[2mtions\x1b[22m") {
		t.Errorf("the suggestion is not drawn dim\n%s", s.Dump())
	}
	s.Send(keyRight)
	s.ExpectCursorAt("py> collections", len("py> collections"))
	s.Send(".Ord")
	s.ExpectCursorAt("py> collections.OrderedDict", len("py> collections.Ord"))
	s.Send(keyEnd + ptytest.Enter)
	s.ExpectString("<class 'collections.OrderedDict'>\r\n")
}

// Attributes of an instance are suggested from its class's dicts and its
// own __dict__, never by running its code: a property, __getattr__ and
// __dir__ that write files write nothing.
func TestPTYSuggestionRunsNoUserCode(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startREPL(t, home, "-q")
	ran := filepath.Join(home, "ran")
	s.Paste("import os\nRAN = " + pyQuote(ran) + "\n" +
		"class C:\n" +
		"    @property\n" +
		"    def property_writes(self):\n" +
		"        open(RAN + '-property', 'w').close()\n" +
		"        return 1\n" +
		"    def __getattr__(self, name):\n" +
		"        open(RAN + '-getattr', 'w').close()\n" +
		"    def __dir__(self):\n" +
		"        open(RAN + '-dir', 'w').close()\n" +
		"        return []\n\n" +
		"obj = C()\nobj.instance_value = 5\n")
	s.ExpectString("py> ")
	s.Send("obj.pro")
	s.ExpectCursorAt("py> obj.property_writes", len("py> obj.pro"))
	s.Send(keyRight)
	s.ExpectCursorAt("py> obj.property_writes", len("py> obj.property_writes"))
	s.Send(ptytest.CtrlC)
	s.ExpectString("KeyboardInterrupt")
	s.ExpectString("py> ")
	s.Send("obj.inst")
	s.ExpectCursorAt("py> obj.instance_value", len("py> obj.inst"))
	s.Send(ptytest.CtrlC)
	s.ExpectString("py> ")
	typeLine(t, s, "sorted(f for f in os.listdir("+pyQuote(home)+") if f.startswith('ran'))", "[]")
}

// suggest = false in config.toml: no suggestion is drawn.
func TestPTYSuggestionsOff(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeConfig(t, home, "suggest = false\n")
	s := startREPL(t, home, "-q")
	typeLine(t, s, "import collections", "")
	s.Send("collec")
	// The suggestion would be drawn with the key's own redraw.
	s.ExpectCursorAt("py> collec", len("py> collec"))
	s.Send(ptytest.Enter)
	s.ExpectString("NameError")
}
