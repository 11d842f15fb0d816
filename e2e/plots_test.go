package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// mplConfigDir is one matplotlib configuration directory for every test
// here: a fresh one would build matplotlib's font cache (seconds) in each.
var mplConfigDir = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "pyaichat-e2e-mpl-")
	if err != nil {
		panic(err)
	}
	return dir
})

// startPlotting runs pyaichat on a PTY whose terminal answers as answers
// says (ptytest.Options.Answers), at the first prompt.
func startPlotting(t *testing.T, home string, answers map[string]string, extra ...string) *ptytest.Proc {
	t.Helper()
	env := append(testEnv(home, "xterm-256color"), "MPLCONFIGDIR="+mplConfigDir())
	env = append(env, extra...)
	s := ptytest.Start(t, binary, ptytest.Options{Args: []string{"-q"}, Env: env, Dir: home, Answers: answers})
	s.ExpectString("py> ")
	return s
}

const plotLine = "import matplotlib.pyplot as plt; _ = plt.plot([1, 3, 2]); plt.show()"

// A terminal that answers it draws kitty's, iTerm2's or sixel images gets
// plt.show()'s figure in that protocol; the answers never reach the
// screen, and the screen is intact after the image: the next line runs
// and shows its value where it should.
func TestPlotsDrawnInTheTerminal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		answers map[string]string
		start   string // the image's escape sequence starts so
		end     string // and ends so
	}{
		{"kitty", map[string]string{"\x1b_Gi=31,": "\x1b_Gi=31;OK\x1b\\"}, "\x1b_Ga=T,f=100,", "\x1b_Gm=0;"},
		{"iterm2", map[string]string{"\x1b[>q": "\x1bP>|iTerm2 3.5.0\x1b\\"}, "\x1b]1337;File=inline=1;size=", "\a\r\n"},
		{"sixel", map[string]string{"\x1b[c": "\x1b[?62;4;22c"}, "\x1bP", "\x1b\\"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			s := startPlotting(t, home, c.answers)
			enter(s, plotLine)
			s.ExpectString(c.start)
			s.ExpectString(c.end)
			s.ExpectString("py> ")
			typeLine(t, s, "6 * 7", "42")
			screen := s.Screen()
			for _, leak := range []string{"OK", "iTerm2", "62;4", "saved"} {
				if strings.Contains(screen, leak) {
					t.Errorf("%q on the screen:\n%s", leak, screen)
				}
			}
			if !strings.Contains(screen, "py> 6 * 7\n42\npy>") {
				t.Errorf("the screen after the image is not intact:\n%s", screen)
			}
		})
	}
}

// A terminal that draws no images (it answers only the cursor position):
// the figure is a PNG file in the session's directory, and one line gives
// its path.
func TestPlotsSavedWhereNothingDraws(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startPlotting(t, home, nil)
	enter(s, plotLine)
	m := s.ExpectRegexp(regexp.MustCompile(`saved (\S+\.png)\x1b\[0m\r\n`))
	s.ExpectString("py> ")
	path := m[1]
	if !strings.HasPrefix(path, filepath.Join(home, ".local", "state", "pyaichat", "sessions")) {
		t.Errorf("saved as %s, not in the session's directory", path)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(data), "\x89PNG\r\n") {
		t.Errorf("the figure %s is not a PNG (%v)", path, err)
	}
}

// Values with IPython's display protocol are drawn (_repr_png_) or saved
// (_repr_html_); a value with its own repr besides _repr_html_ (a pandas
// DataFrame) keeps its text, and ordinary values are python3's.
func TestRichValuesAtThePrompt(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startPlotting(t, home, map[string]string{"\x1b_Gi=31,": "\x1b_Gi=31;OK\x1b\\"})
	typeLine(t, s, "import base64", "")
	// A 1x1 PNG.
	typeLine(t, s, `png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")`, "")
	typeLine(t, s, `Pic = type("Pic", (), {"_repr_png_": lambda self: png})`, "")
	enter(s, "Pic()")
	s.ExpectString("\x1b_Ga=T,f=100,")
	s.ExpectString("py> ")
	typeLine(t, s, "_.__class__.__name__", "'Pic'")
	typeLine(t, s, `Page = type("Page", (), {"_repr_html_": lambda self: "<b>hi</b>"})`, "")
	enter(s, "Page()")
	m := s.ExpectRegexp(regexp.MustCompile(`saved (\S+\.html)`))
	if data, err := os.ReadFile(m[1]); err != nil || string(data) != "<b>hi</b>" {
		t.Errorf("the HTML saved as %s: %q, %v", m[1], data, err)
	}
	s.ExpectString("py> ")
	typeLine(t, s, `Table = type("Table", (), {"_repr_html_": lambda self: "<table/>", "__repr__": lambda self: "a table"})`, "")
	typeLine(t, s, "Table()", "a table")
	// SVG is drawn as PNG (cairosvg), and so is a PIL image.
	typeLine(t, s, `Svg = type("Svg", (), {"_repr_svg_": lambda self: '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>'})`, "")
	enter(s, "Svg()")
	s.ExpectString("\x1b_Ga=T,f=100,")
	s.ExpectString("py> ")
	enter(s, `__import__("PIL.Image").Image.new("RGB", (8, 8))`)
	s.ExpectString("\x1b_Ga=T,f=100,")
	s.ExpectString("py> ")
	typeLine(t, s, "[1, 'two']", "[1, 'two']")
	if n := strings.Count(s.Screen(), "saved "); n != 1 {
		t.Errorf("%d files saved, want the HTML's alone:\n%s", n, s.Screen())
	}
}

// The assistant's automatic context says a figure was shown and what it
// holds, not its pixels.
func TestPlotsInTheAutomaticContext(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "get_repr", `{"expr":"1"}`)
	home := t.TempDir()
	s := startPlotting(t, home, map[string]string{"\x1b_Gi=31,": "\x1b_Gi=31;OK\x1b\\"},
		"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=sk-e2e-secret-key", "PYAICHAT_MODEL=fake-model")
	enter(s, plotLine)
	s.ExpectString("py> ")
	typeLine(t, s, "fig, ax = plt.subplots(); _ = ax.bar([1, 2], [3, 4])", "")
	enter(s, "fig") // a Figure at the prompt is drawn, not its repr
	s.ExpectString("\x1b_Gm=0;")
	s.ExpectString("py> ")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "what did I plot?")
	s.ExpectString("The tool said: ")
	s.ExpectString("ai> ")
	reqs := fake.requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the model")
	}
	body, _ := json.Marshal(reqs[0])
	want := ">>> import matplotlib.pyplot as plt; _ = plt.plot([1, 3, 2]); plt.show()\n" +
		"    figure shown: 1 axes, line plot, 3 points\n" +
		">>> fig, ax = plt.subplots(); _ = ax.bar([1, 2], [3, 4])\n" +
		">>> fig\n    -> <matplotlib.figure.Figure object>\n    figure shown: 1 axes, 2 bars"
	if !strings.Contains(string(body), strings.NewReplacer("\n", `\n`, "<", `\u003c`, ">", `\u003e`).Replace(want)) {
		t.Errorf("the first request does not say\n%s\nin:\n%s", want, body)
	}
	if strings.Contains(string(body), "iVBOR") {
		t.Error("the request carries the image's bytes")
	}
}

// The user's choice of backend wins (MPLBACKEND, matplotlib.use); with
// none, plt.show() and, in interactive mode, each input that changed a
// figure show it (here, with no terminal, saved).
func TestPlotsBackendChoice(t *testing.T) {
	t.Parallel()
	run := func(input string, extra ...string) string {
		home := t.TempDir()
		cmd := exec.Command(binary, "-q")
		cmd.Env = append(append(testEnv(home, ""), "MPLCONFIGDIR="+mplConfigDir()), extra...)
		cmd.Stdin = strings.NewReader(input)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%q: %v\n%s", input, err, out)
		}
		return string(out)
	}
	const show = "import matplotlib.pyplot as plt\n_ = plt.plot([1, 3, 2])\nplt.show()\nplt.get_backend()\n"
	if out := run(show); strings.Count(out, "saved ") != 1 || !strings.Contains(out, "'module://_pyaichat_mpl'") {
		t.Errorf("by default, want the figure saved by pyaichat's backend:\n%s", out)
	}
	if out := run(show, "MPLBACKEND=agg"); strings.Contains(out, "saved ") || !strings.Contains(out, "'agg'") {
		t.Errorf("with MPLBACKEND=agg, want agg and nothing saved:\n%s", out)
	}
	if out := run("import matplotlib\nmatplotlib.use('agg')\n" + show); strings.Contains(out, "saved ") || !strings.Contains(out, "'agg'") {
		t.Errorf("after matplotlib.use('agg'), want agg and nothing saved:\n%s", out)
	}
	ion := "import matplotlib.pyplot as plt\n_ = plt.ion()\n_ = plt.plot([1, 3, 2])\nx = 1\n"
	if out := run(ion); strings.Count(out, "saved ") != 1 {
		t.Errorf("in interactive mode, want the figure saved once, after its input:\n%s", out)
	}
}

// Keys typed while the terminal is asked what it draws (here they come
// among its answers) are neither lost nor shown twice: they are the next
// prompt's.
func TestPlotsKeepKeysTypedDuringTheQuery(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	s := startPlotting(t, home, map[string]string{"\x1b_Gi=31,": "6 * 7\x1b_Gi=31;OK\x1b\\"})
	enter(s, plotLine)
	s.ExpectString("\x1b_Gm=0;")
	// On the screen: the output holds it in colour.
	s.ExpectCursorLine("py> 6 * 7")
	s.Send("\r")
	s.ExpectString("42\r\n")
	s.ExpectString("py> ")
	if n := strings.Count(s.Screen(), "6 * 7"); n != 1 {
		t.Errorf("the keys typed during the query are on the screen %d times, want 1:\n%s", n, s.Screen())
	}
}

// BenchmarkPlotShow is the cost of plt.show() of a 640x480 figure (one
// line of three points) drawn on a terminal, per protocol: from Enter to
// the next prompt, the PNG made by matplotlib's Agg, the escape sequence
// written by Go (sixel: decoded and quantized by go-sixel) and read by the
// test's terminal emulator. The terminal query is made before the timing,
// by a first figure. Run it with
//
//	go test ./e2e -run '^$' -bench PlotShow -benchtime 20x
func BenchmarkPlotShow(b *testing.B) {
	for _, c := range []struct {
		name    string
		answers map[string]string
		end     string
	}{
		{"kitty", map[string]string{"\x1b_Gi=31,": "\x1b_Gi=31;OK\x1b\\"}, "\x1b_Gm=0;"},
		{"iterm2", map[string]string{"\x1b[>q": "\x1bP>|iTerm2 3.5.0\x1b\\"}, "\a\r\n"},
		{"sixel", map[string]string{"\x1b[c": "\x1b[?62;4;22c"}, "\x1b\\\r\n"},
		{"saved", nil, ".png"},
	} {
		b.Run(c.name, func(b *testing.B) {
			home := b.TempDir()
			env := append(testEnv(home, "xterm-256color"), "MPLCONFIGDIR="+mplConfigDir())
			s := ptytest.Start(b, binary, ptytest.Options{Args: []string{"-q"}, Env: env, Dir: home, Answers: c.answers, Timeout: time.Minute})
			s.ExpectString("py> ")
			s.SendLine(plotLine)
			s.ExpectString(c.end)
			s.ExpectString("py> ")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.SendLine("_ = plt.plot([1, 3, 2]); plt.show()")
				s.ExpectString(c.end)
				s.ExpectString("py> ")
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/show")
		})
	}
}
