package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chromiumPath is the browser the page test drives: $PYAICHAT_CHROMIUM, or
// Debian's chromium (scripts/deps.sh installs it).
func chromiumPath() (string, error) {
	if p := os.Getenv("PYAICHAT_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium on PATH: install Debian's chromium (scripts/deps.sh --browser, which make test runs) or name one in PYAICHAT_CHROMIUM")
}

// newBrowser starts headless Chromium (as root in CI, hence no sandbox)
// with its profile under home, and fails with the reason when it cannot.
func newBrowser(tb testing.TB, exe, home string) context.Context {
	tb.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(exe),
			chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.WindowSize(760, 420),
			chromedp.UserDataDir(filepath.Join(home, "chromium")),
		)...)
	tb.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(alloc)
	tb.Cleanup(cancel)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	tb.Cleanup(cancelTime)
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("chromium (%s) could not start: %v", exe, err)
	}
	return ctx
}

// page drives one tab of headless Chromium.
type page struct {
	t   testing.TB
	ctx context.Context
}

func (p *page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v\nscreen:\n%s", what, err, p.screen())
	}
}

func eval[T any](p *page, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// screen is the text of xterm's buffer, read by the page itself.
func (p *page) screen() string {
	s, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`window.__screenText ? window.__screenText() : ''`))
	return s
}

// waitScreen waits until the screen matches re (a failure shows it).
func (p *page) waitScreen(re string) {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(30 * time.Second)
	for !rx.MatchString(p.screen()) {
		if time.Now().After(deadline) {
			p.t.Fatalf("the screen never matched %q:\n%s", re, p.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// run types a line of Python and waits for the prompt after it.
func (p *page) run(line string) {
	p.t.Helper()
	prompts := p.count(`(?m)^py>`)
	p.keys(line + "\r")
	deadline := time.Now().Add(30 * time.Second)
	for p.count(`(?m)^py>`) <= prompts || !regexp.MustCompile(`(?m)^py>\s*\z`).MatchString(strings.TrimRight(p.screen(), "\n")) {
		if time.Now().After(deadline) {
			p.t.Fatalf("no prompt after %q:\n%s", line, p.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// count is how many times re matches the screen.
func (p *page) count(re string) int {
	return len(regexp.MustCompile(re).FindAllStringIndex(p.screen(), -1))
}

func (p *page) keys(k string) { p.t.Helper(); p.do(fmt.Sprintf("typing %q", k), typeKeys(k)) }

// typeKeys types k as a keyboard does: a keyDown that carries the key's
// text, then a keyUp. (chromedp.KeyEvent adds a separate char event, which
// xterm.js, having handled the keydown, would receive again as input.)
func typeKeys(k string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, r := range k {
			events := kb.Encode(r)
			down, up := *events[0], *events[len(events)-1]
			if len(events) == 3 {
				down.Text, down.UnmodifiedText = events[1].Text, events[1].UnmodifiedText
			}
			if r == '\r' {
				down.Text, down.UnmodifiedText = "\r", "\r"
			}
			for _, ev := range []input.DispatchKeyEventParams{down, up} {
				if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, ev); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// The page in a real browser: it starts a pyaichat, runs Python typed at
// it, switches to ai> with TAB, keeps the session through a reload,
// inserts the path of a dropped file, and when pyaichat exits shows its
// status and starts another with Restart. Where Chromium cannot start, this
// fails with the reason. PYAICHAT_SCREENSHOT=FILE saves the page as
// docs/serve.md shows it (docs/serve.png).
func TestServeInChromium(t *testing.T) {
	exe, err := chromiumPath()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	srv := startServe(t, home, nil, "-q")
	p := &page{t: t, ctx: newBrowser(t, exe, home)}
	watch := watchPage(t, p.ctx)
	p.do("opening the page", chromedp.Navigate(srv.UIBase+"#token="+srv.Token))
	p.waitScreen(`(?m)^py>\s*$`)
	if h := eval[string](p, `location.hash`); h != "" {
		t.Errorf("the token stayed in the address bar: %q", h)
	}
	if tok := eval[string](p, `sessionStorage.getItem('pyaichat.token')`); tok != srv.Token {
		t.Errorf("sessionStorage holds %q, not the token", tok)
	}

	p.run("x = 6 * 7")
	p.run("x")
	p.waitScreen(`(?m)^42$`)
	p.keys("\t")
	p.waitScreen(`(?m)^ai>\s*$`)
	p.keys("\t")
	p.waitScreen(`(?m)^py>\s*$`)

	// A reload: the same session, its screen replayed, x still 42.
	before := eval[string](p, `window.__sessionState().sessionId`)
	p.do("reloading", chromedp.Reload())
	p.waitScreen(`(?m)^42$`)
	if after := eval[string](p, `window.__sessionState().sessionId`); after != before || before == "" {
		t.Errorf("session %q before the reload, %q after", before, after)
	}
	p.waitScreen(`(?m)^py>\s*$`)
	p.run("print(x + 1)")
	p.waitScreen(`(?m)^43$`)

	// A file dropped on the terminal, as a desktop drops one: uploaded,
	// and its stored path inserted at the prompt.
	dropped := filepath.Join(home, "data.csv")
	if err := os.WriteFile(dropped, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.keys("print(open(")
	p.waitScreen(`(?m)print\(open\($`)
	p.do("dropping data.csv", dropFile(dropped))
	p.waitScreen(`(?m)data\.csv'$`)
	p.keys(").read())\r")
	p.waitScreen(`(?m)^1,2$`)
	path := regexp.MustCompile(`'(/[^']*data\.csv)'`).FindStringSubmatch(p.screen())
	if path == nil || path[1] == dropped || !strings.Contains(path[1], "pyaichat-serve-") {
		t.Errorf("inserted path %q, want a copy in the session's upload directory", path)
	}
	if p.count(`(?m)^1,2$`) != 1 {
		t.Errorf("the file's contents are shown %d times", p.count(`(?m)^1,2$`))
	}

	// Every request went to the server itself, none had a query string,
	// and nothing went wrong on the page (a script error, a violation of
	// its Content-Security-Policy).
	wsURL := fmt.Sprintf("ws://127.0.0.1:%d/ws", srv.Port)
	if !slices.Contains(watch.urls(), wsURL) {
		t.Errorf("the page's requests %q do not include its WebSocket %s", watch.urls(), wsURL)
	}
	for _, u := range watch.urls() {
		if !strings.HasPrefix(u, srv.UIBase) && !strings.HasPrefix(u, fmt.Sprintf("ws://127.0.0.1:%d/", srv.Port)) {
			t.Errorf("the page asked for %s, not its server", u)
		}
		if strings.Contains(u, "?") || strings.Contains(u, srv.Token) {
			t.Errorf("the page asked for %s: a query string or the token in a URL", u)
		}
	}
	for _, problem := range watch.problems() {
		t.Errorf("on the page: %s", problem)
	}

	shot, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil || !bytes.HasPrefix(shot, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %v (%d bytes)", err, len(shot))
	}
	if out := os.Getenv("PYAICHAT_SCREENSHOT"); out != "" {
		if err := os.WriteFile(out, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// pyaichat exits: the banner says how, and Restart starts another.
	p.keys("raise SystemExit(3)\r")
	banner := `document.getElementById('banner').hidden ? '' : document.getElementById('banner-text').textContent`
	deadline := time.Now().Add(30 * time.Second)
	for eval[string](p, banner) != "pyaichat exited with status 3." {
		if time.Now().After(deadline) {
			t.Fatalf("no exit banner; it says %q", eval[string](p, banner))
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.do("restarting", chromedp.Evaluate[chromedp.Void](`document.getElementById('banner-restart').click()`))
	p.waitScreen(`\A\s*py>\s*\z`)
	if after := eval[string](p, `window.__sessionState().sessionId`); after == before {
		t.Errorf("Restart kept session %s", before)
	}
	p.run("print(x)")
	p.waitScreen(`NameError: name 'x' is not defined`)
}

// dropFile drags file over the terminal and drops it there through the
// browser's own drag and drop (Input.dispatchDragEvent).
func dropFile(file string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		box, err := chromedp.Evaluate[[]float64](`(() => { const r = document.getElementById('term').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)(ctx, t)
		if err != nil {
			return err
		}
		data := &input.DragData{Items: []*input.DragDataItem{}, Files: []string{file}, DragOperationsMask: 1}
		for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
			if _, err := chromedp.Call(ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: box[0], Y: box[1], Data: data}); err != nil {
				return fmt.Errorf("%s: %w", typ, err)
			}
		}
		return nil
	})
}

// pageWatch records what a page requested and what went wrong on it.
type pageWatch struct {
	mu       sync.Mutex
	requests []string
	errors   []string
}

func watchPage(t *testing.T, ctx context.Context) *pageWatch {
	w := &pageWatch{}
	err := chromedp.Listen(ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			w.requests = append(w.requests, ev.Request.URL)
		case *network.EventWebSocketCreated:
			w.requests = append(w.requests, ev.URL)
		case *runtime.EventExceptionThrown:
			w.errors = append(w.errors, fmt.Sprintf("exception: %s %v", ev.ExceptionDetails.Text, ev.ExceptionDetails.Exception))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Source == log.EntrySourceSecurity {
				w.errors = append(w.errors, fmt.Sprintf("%s %s: %s %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *pageWatch) urls() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.requests...)
}

func (w *pageWatch) problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.errors...)
}
