package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// hangBound bounds a wait for the page or the server: it is no measure
// of speed, only where a test stops waiting for what never comes. A
// first page, a Chromium and a pyaichat started together on a loaded
// two-CPU machine, once took more than 30 s to show its prompt.
const hangBound = 90 * time.Second

// openPage starts `pyaichat serve -- -q` and a browser on its page, and
// waits for the first prompt.
func openPage(t *testing.T) (*page, serveConn, string) {
	t.Helper()
	exe, err := chromiumPath()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	srv := startServe(t, home, nil, "-q")
	p := &page{t: t, ctx: newBrowser(t, exe, home)}
	p.do("opening the page", chromedp.Navigate(srv.UIBase+"#token="+srv.Token))
	p.waitScreen(`(?m)^py>\s*$`)
	return p, srv, home
}

// settled waits until the page has drawn what it was given: two
// animation frames after the terminal's writes are parsed.
func (p *page) settled() {
	p.t.Helper()
	p.do("waiting for the page to draw", chromedp.Evaluate[chromedp.Void](
		`new Promise((done) => window.__drawn(() => requestAnimationFrame(() => requestAnimationFrame(done))))`,
		chromedp.EvalAsValue, chromedp.EvalAwaitPromise))
}

// screenshot is the page as Chromium draws it.
func (p *page) screenshot() image.Image {
	p.t.Helper()
	shot, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		p.t.Fatalf("decoding the screenshot: %v", err)
	}
	return img
}

// brightPixels counts the pixels in r brighter than a dim grey: the
// terminal's text on its black background.
func brightPixels(img image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if (cr+cg+cb)/3>>8 > 96 {
				n++
			}
		}
	}
	return n
}

// Underscores show at every font size the page offers: a row of them,
// cut from a screenshot, has the text's colour along most of its width.
// (With xterm.js's default line height the underscore falls below the
// row at several sizes and "__init__" reads as "  init  ".)
func TestServeUnderscoresShowAtEverySize(t *testing.T) {
	p, _, _ := openPage(t)
	const n = 20
	p.run(fmt.Sprintf("print('_' * %d)", n))
	p.waitScreen(fmt.Sprintf(`(?m)^_{%d}$`, n))
	bounds := eval[[]int](p, `[window.__fontSizes.min, window.__fontSizes.max]`)
	var missing []int
	for size := bounds[0]; size <= bounds[1]; size++ {
		p.do(fmt.Sprintf("setting the font size %d", size), chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`window.__setFontSize(%d)`, size)))
		p.settled()
		box := eval[[]float64](p, fmt.Sprintf(`(() => {
			const row = [...document.querySelectorAll('.xterm-rows > div')].find((r) => /^_{%d}\s*$/.test(r.textContent));
			if (!row) return [];
			const r = row.getBoundingClientRect();
			return [r.x, r.y, r.x + r.width, r.y + r.height, window.__cellWidth() * %d];
		})()`, n, n))
		if len(box) == 0 {
			t.Fatalf("at size %d no row of underscores is drawn:\n%s", size, p.screen())
		}
		rect := image.Rect(int(box[0]), int(box[1]), int(box[2]+0.5), int(box[3]+0.5))
		if got := brightPixels(p.screenshot(), rect); float64(got) < box[4]/2 {
			missing = append(missing, size)
			t.Logf("size %d: %d bright pixels in the row %v of %.0f px of underscores", size, got, rect, box[4])
		}
	}
	if len(missing) > 0 {
		t.Errorf("underscores do not show at font sizes %v", missing)
	}
}

// grantClipboard lets the page at base read and write the clipboard, as
// a user allows it, so that the test can see what a copy put there and
// put there what a paste takes.
func (p *page) grantClipboard(base string) {
	p.t.Helper()
	origin := strings.TrimSuffix(base, "/")
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(p.ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true},
			Setting:    browser.PermissionSettingGranted, Origin: origin,
		})
		if err != nil {
			p.t.Fatalf("granting %s: %v", name, err)
		}
	}
	if _, err := chromedp.Call(p.ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		p.t.Fatalf("emulating focus: %v", err)
	}
}

func (p *page) clipboard() string {
	p.t.Helper()
	return evalAwait[string](p, `navigator.clipboard.readText()`)
}

// waitClipboard waits for the clipboard to hold want (a copy writes it
// asynchronously).
func (p *page) waitClipboard(what, want string) {
	p.t.Helper()
	for deadline := time.Now().Add(hangBound); p.clipboard() != want; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: the clipboard holds %q, want %q", what, p.clipboard(), want)
		}
	}
}

func (p *page) setClipboard(text string) {
	p.t.Helper()
	evalAwait[bool](p, fmt.Sprintf(`navigator.clipboard.writeText(%q).then(() => true)`, text))
}

// evalAwait evaluates js, a promise, and returns what it resolves to.
func evalAwait[T any](p *page, js string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// ctrlKey presses Ctrl (and Shift) with a letter, as a keyboard does.
func (p *page) ctrlKey(letter rune, shift bool) {
	p.t.Helper()
	mods := int64(2) // Ctrl
	key := string(letter)
	if shift {
		mods |= 8 // Shift
		key = strings.ToUpper(key)
	}
	code := "Key" + strings.ToUpper(string(letter))
	vk := int64(unicode.ToUpper(letter))
	err := chromedp.Do(p.ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			ev := input.DispatchKeyEventParams{Type: typ, Modifiers: mods, Key: key, Code: code, WindowsVirtualKeyCode: vk, NativeVirtualKeyCode: vk}
			if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, ev); err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		p.t.Fatalf("pressing Ctrl+%c: %v", letter, err)
	}
}

// selectWord double-clicks the word at the start of the screen row that
// reads text, which selects it.
func (p *page) selectWord(text string) {
	p.t.Helper()
	// run waits for the prompt in the terminal's buffer; the renderer
	// draws the rows a frame or more later.
	find := fmt.Sprintf(`(() => {
		const row = [...document.querySelectorAll('.xterm-rows > div')].find((r) => r.textContent.trimEnd() === %q);
		if (!row) return [];
		const r = row.getBoundingClientRect();
		return [r.x + window.__cellWidth() * 1.5, r.y + r.height / 2];
	})()`, text)
	at := eval[[]float64](p, find)
	for deadline := time.Now().Add(hangBound); len(at) == 0 && time.Now().Before(deadline); at = eval[[]float64](p, find) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(at) == 0 {
		p.t.Fatalf("no row reads %q:\n%s", text, p.screen())
	}
	err := chromedp.Do(p.ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
			ev := input.DispatchMouseEventParams{Type: typ, X: at[0], Y: at[1], Button: input.MouseButtonLeft, ClickCount: 2}
			if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, ev); err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		p.t.Fatalf("double-clicking %q: %v", text, err)
	}
	if got := eval[string](p, `window.__selection()`); got != text {
		p.t.Fatalf("double-clicking %q selected %q", text, got)
	}
}

// The clipboard keys of VS Code's terminal: Ctrl+C copies a selection
// (and sends no interrupt), and interrupts without one; Ctrl+Shift+C
// copies; Ctrl+V and Ctrl+Shift+V paste, bracketed (a TAB in the paste
// stays in the line, where a typed TAB switches to ai>); with "raw
// Ctrl+V" set, Ctrl+V is quoted insert again.
func TestServeClipboardKeys(t *testing.T) {
	p, srv, _ := openPage(t)
	p.grantClipboard(srv.UIBase)

	p.run("print('copy' + 'me')")
	p.selectWord("copyme")
	p.ctrlKey('c', false)
	p.waitClipboard("Ctrl+C with copyme selected", "copyme")
	p.run("'after' + 'copy'")
	p.waitScreen(`(?m)^'aftercopy'$`)
	if p.count(`KeyboardInterrupt`) != 0 {
		t.Errorf("Ctrl+C with a selection interrupted:\n%s", p.screen())
	}

	p.run("print('shift' + 'copy')")
	p.selectWord("shiftcopy")
	p.ctrlKey('c', true)
	p.waitClipboard("Ctrl+Shift+C with shiftcopy selected", "shiftcopy")

	p.keys("import time; time.sleep(60)\r")
	p.waitScreen(`sleep\(60\)\s*$`)
	p.ctrlKey('c', false)
	p.waitScreen(`(?m)^KeyboardInterrupt$`)
	p.waitScreen(`(?m)^py>\s*$`)

	for _, shift := range []bool{false, true} {
		p.setClipboard("'a\tb'")
		p.ctrlKey('v', shift)
		p.waitScreen(`(?m)^py> 'a\s+b'\s*$`)
		p.run("")
		p.waitScreen(`(?m)^'a\\tb'$`)
		p.run("print('pasted' + 'ok')")
		p.waitScreen(`(?m)^pastedok$`)
	}

	// Right-click: a copy with a selection, a paste without one.
	p.run("print('right' + 'click')")
	p.selectWord("rightclick")
	at := eval[[]float64](p, `(() => { const r = document.querySelector('.xterm-screen').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height - 4]; })()`)
	p.rightClick(at[0], at[1])
	p.waitClipboard("a right-click with rightclick selected", "rightclick")
	p.setClipboard("'right' * 2")
	p.rightClick(at[0], at[1])
	p.waitScreen(`(?m)^py> 'right' \* 2\s*$`)
	p.run("")
	p.waitScreen(`(?m)^'rightright'$`)

	p.do("setting raw Ctrl+V", chromedp.Evaluate[chromedp.Void](`document.getElementById('rawctrlv').click()`))
	p.setClipboard("not this")
	p.keys("'x")
	p.ctrlKey('v', false)
	p.keys("\ty'\r")
	p.waitScreen(`(?m)^'x\\ty'$`)
	if p.count(`not this`) != 0 {
		t.Errorf("raw Ctrl+V pasted:\n%s", p.screen())
	}
}

// The token leaves no trace: opened as `--open` opens it (through the
// private file, with a one-time code), the page takes the code out of the
// URL with the first script it runs and exchanges it for the token; once
// the browser has closed, no file of its profile (history, session
// files, favicons, caches) holds the token but sessionStorage's own, and
// the code the records hold is refused.
func TestServeTokenLeavesNoTrace(t *testing.T) {
	exe, err := chromiumPath()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	url, opened, _, _ := startServeOpen(t, home)
	code := url[strings.Index(url, "#code=")+len("#code="):]
	port, _ := strconv.Atoi(regexp.MustCompile(`:(\d+)/`).FindStringSubmatch(url)[1])
	profile := filepath.Join(home, "chromium-trace")
	alloc, closeBrowser := chromedp.NewExecAllocator(context.Background(),
		append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
			chromedp.WindowSize(760, 420), chromedp.UserDataDir(profile))...)
	defer closeBrowser()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelTime()
	p := &page{t: t, ctx: ctx}
	p.do("opening the file --open made", chromedp.Navigate("file://"+opened))
	p.waitScreen(`(?m)^py>\s*$`)
	base := strings.TrimSuffix(url, "#code="+code)
	if got := eval[string](p, `location.href`); got != base {
		t.Errorf("the address bar shows %q, want %q", got, base)
	}
	token := eval[string](p, `sessionStorage.getItem('pyaichat.token')`)
	if !regexp.MustCompile(`^[0-9a-f]{48}$`).MatchString(token) {
		t.Fatalf("sessionStorage holds %q, not a token", token)
	}
	first := eval[string](p, `(() => { const e = document.head.querySelector('script, link'); return e.src || e.href; })()`)
	if !strings.HasSuffix(first, "/token.js") {
		t.Errorf("the page's first script or stylesheet is %s, not token.js", first)
	}
	hist, err := chromedp.Call(p.ctx, cdppage.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hist.Entries {
		if strings.Contains(e.URL, code) || strings.Contains(e.URL, token) {
			t.Errorf("the back/forward list holds the code or the token: %s", e.URL)
		}
	}
	p.run("print(6 * 7)")
	p.waitScreen(`(?m)^42$`)
	if status, _ := exchangeCode(t, port, code); status != 403 {
		t.Errorf("the code in the browser's records, exchanged again: %d, want 403", status)
	}

	// The same link in a new tab (from the history, say) says it was used
	// and where the next one is.
	tab, cancelTab := chromedp.NewContext(ctx)
	q := &page{t: t, ctx: tab}
	q.do("opening the used link in a new tab", chromedp.Navigate(url))
	q.waitEval("the new tab says the link was used", `window.__status() === 'link used'`)
	if got := eval[string](q, bannerJS); !strings.Contains(got, "used already") || !strings.Contains(got, "newest URL") {
		t.Errorf("the banner for a used link says %q", got)
	}
	cancelTab()

	// The browser closes as a user closes it, writing out its records.
	if err := chromedp.Cancel(ctx); err != nil {
		t.Logf("closing the browser: %v", err)
	}
	closeBrowser()
	var files, codeSeen int
	filepath.Walk(profile, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		if info.IsDir() && info.Name() == "Session Storage" {
			// The tab's sessionStorage, which holds the token for a reload
			// and which Chromium saves with the profile for restoring the
			// session (the user's own, never synced).
			return filepath.SkipDir
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		files++
		if bytes.Contains(b, []byte(token)) || bytes.Contains(b, utf16le(token)) {
			t.Errorf("the browser's profile holds the token in %s", strings.TrimPrefix(path, profile))
		}
		if bytes.Contains(b, []byte(code)) {
			codeSeen++
		}
		return nil
	})
	if files == 0 || codeSeen == 0 {
		// The scan would pass vacuously if the profile were elsewhere or
		// the browser had recorded nothing.
		t.Errorf("scanned %d files of the profile, %d with the (used) code: want the browser's records", files, codeSeen)
	}
}

// startServePrinting runs `pyaichat serve --addr addr -- -q` as a user
// does, and returns the URL it prints (with a one-time code).
func startServePrinting(t *testing.T, home, addr string) string {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--addr", addr, "--", "-q")
	cmd.Env = testEnv(home, "")
	cmd.Dir = home
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "pyaichat serve: open ")
	if err != nil || !ok || !strings.Contains(url, "/#code=") {
		t.Fatalf("serve printed %q (%v), want the URL to open", line, err)
	}
	return url
}

// bannerJS reads the banner above the terminal (” when hidden).
const bannerJS = `document.getElementById('banner').hidden ? '' : document.getElementById('banner-text').textContent`

// stopServe ends the serve of pid and waits until its port is free.
func stopServe(t *testing.T, pid, port int) {
	t.Helper()
	syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(hangBound)
	for {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			ln.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("port %d still taken %v after SIGTERM to serve", port, hangBound)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitEval waits until js is true on the page (a failure shows the
// screen and the status line).
func (p *page) waitEval(what, js string) {
	p.t.Helper()
	deadline := time.Now().Add(hangBound)
	for !eval[bool](p, js) {
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: not within %v; status %q, screen:\n%s", what, hangBound, eval[string](p, `window.__status()`), p.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// After serve restarts (a new token), the page says its token is refused
// and how to get a new URL, keeps Restart disabled while it is not
// connected, and takes the new URL pasted into the same tab without a
// reload.
func TestServeRecoversAfterARestartWithANewToken(t *testing.T) {
	p, srv, home := openPage(t)
	p.run("x = 1")
	if eval[bool](p, `document.getElementById('restart').disabled`) {
		t.Errorf("Restart is disabled while connected")
	}
	stopServe(t, srv.pid, srv.Port)
	p.waitEval("the page notes the lost connection", `!window.__sessionState().connected`)
	p.waitEval("the banner says why the session ended", `document.getElementById('banner-text').textContent.includes('ended: pyaichat serve stopped')`)
	if !eval[bool](p, `document.getElementById('restart').disabled && document.getElementById('restart').title.includes('not connected')`) {
		t.Errorf("Restart is not disabled with a reason while disconnected: %q", eval[string](p, `document.getElementById('restart').title`))
	}
	session := eval[string](p, `window.__sessionState().sessionId`)

	again := startServePrinting(t, home, fmt.Sprintf("127.0.0.1:%d", srv.Port))
	p.waitEval("the page says its token is refused", `window.__status() === 'token refused'`)
	banner := eval[string](p, bannerJS)
	if !strings.Contains(banner, "token was refused") || !strings.Contains(banner, "URL it printed") {
		t.Errorf("the banner says %q, want that the token was refused and how to get a new URL", banner)
	}
	// Restart, clicked while disconnected, does nothing: the screen and
	// the session stay.
	p.do("clicking Restart", chromedp.Evaluate[chromedp.Void](`document.getElementById('restart').click()`))
	if got := p.screen(); !strings.Contains(got, "py> x = 1") {
		t.Errorf("Restart while disconnected cleared the screen:\n%s", got)
	}
	if got := eval[string](p, `window.__sessionState().sessionId`); got != session {
		t.Errorf("Restart while disconnected dropped session %s for %q", session, got)
	}

	p.do("marking the document", chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))
	p.do("pasting the new URL", chromedp.Navigate(again))
	p.waitEval("the page connects with the new token", `window.__sessionState().connected && window.__status() === 'connected'`)
	if h := eval[string](p, `location.hash`); h != "" {
		t.Errorf("the new token stayed in the address bar: %q", h)
	}
	if eval[bool](p, `document.getElementById('restart').disabled`) {
		t.Errorf("Restart is still disabled once connected")
	}
	p.waitScreen(`(?m)^py>\s*$`)
	if !eval[bool](p, `window.__sameDocument === true`) {
		t.Errorf("the new URL reloaded the page")
	}
	p.run("print(6 * 7)")
	p.waitScreen(`(?m)^42$`)
}

// sessionCount asks serve how many sessions it has (GET /sessions).
func sessionCount(t *testing.T, srv serveConn) int {
	t.Helper()
	var list struct{ Sessions []any }
	if err := json.Unmarshal([]byte(sessionsJSON(t, srv)), &list); err != nil {
		t.Fatalf("GET /sessions: %v", err)
	}
	return len(list.Sessions)
}

// A page that comes back to a session the idle timeout ended says so on
// the new session's screen, rather than showing a blank one.
func TestServeSaysWhyASessionEnded(t *testing.T) {
	exe, err := chromiumPath()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	srv := startServe(t, home, []string{"--idle-timeout", "1s"}, "-q")
	p := &page{t: t, ctx: newBrowser(t, exe, home)}
	p.do("opening the page", chromedp.Navigate(srv.UIBase+"#token="+srv.Token))
	p.waitScreen(`(?m)^py>\s*$`)
	p.run("x = 1")
	p.do("leaving the page", chromedp.Navigate("about:blank"))
	deadline := time.Now().Add(hangBound)
	for sessionCount(t, srv) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the session outlived its idle timeout of 1 s by %v", hangBound)
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.do("coming back", chromedp.Navigate(srv.UIBase))
	p.waitScreen(`(?s)it has ended \(no page showed it for 1s, the idle.*this is a new session\]`)
	p.waitScreen(`(?m)^py>\s*$`)
	p.run("print('x' in dir())")
	p.waitScreen(`(?m)^False$`)
}

// The tab's title follows the mode (py>, ai>) and the session; when
// pyaichat exits, the banner above the terminal leaves its last rows in
// the window (the terminal is fitted again to the smaller area).
func TestServeTitleAndExitBanner(t *testing.T) {
	p, _, _ := openPage(t)
	id := eval[string](p, `window.__sessionState().sessionId`)
	p.waitEval("the title names py> and the session", fmt.Sprintf(`document.title === 'pyaichat py> · %s'`, id[:6]))
	p.keys("\t")
	p.waitScreen(`(?m)^ai>\s*$`)
	p.waitEval("the title follows ai>", fmt.Sprintf(`document.title === 'pyaichat ai> · %s'`, id[:6]))
	p.keys("\t")
	p.waitScreen(`(?m)^py>\s*$`)
	p.waitEval("the title follows py>", `document.title.startsWith('pyaichat py> ')`)

	// The prompt on the bottom row, then the exit below it.
	p.run(`print('\n' * 60)`)
	p.keys("raise SystemExit(3)\r")
	p.waitEval("the exit banner", `document.getElementById('banner').hidden === false`)
	p.waitEval("the title says exited", `document.title.startsWith('pyaichat exited')`)
	p.settled()
	p.waitEval("the terminal refitted below the banner", `(() => {
		const screen = document.querySelector('.xterm-screen').getBoundingClientRect();
		return screen.bottom <= window.innerHeight + 0.5;
	})()`)
	p.waitEval("the exit's row is drawn", `[...document.querySelectorAll('.xterm-rows > div')].some((r) => r.textContent.includes('SystemExit(3)'))`)
	bottom := eval[float64](p, `(() => {
		const row = [...document.querySelectorAll('.xterm-rows > div')].findLast((r) => r.textContent.includes('SystemExit(3)'));
		return row ? row.getBoundingClientRect().bottom - window.innerHeight : 1e9;
	})()`)
	if bottom > 0.5 {
		t.Errorf("the row with the exit is %.0f px below the window", bottom)
	}
}

// rightClick clicks the right mouse button at (x, y).
func (p *page) rightClick(x, y float64) {
	p.t.Helper()
	err := chromedp.Do(p.ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
			ev := input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: input.MouseButtonRight, ClickCount: 1}
			if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, ev); err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		p.t.Fatalf("right-clicking at %.0f,%.0f: %v", x, y, err)
	}
}

// mouseAt moves the mouse to (x, y) and, with click, clicks there.
func (p *page) mouseAt(x, y float64, click bool) {
	p.t.Helper()
	types := []input.DispatchMouseEventType{input.DispatchMouseEventTypeMouseMoved}
	if click {
		types = append(types, input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased)
	}
	err := chromedp.Do(p.ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range types {
			ev := input.DispatchMouseEventParams{Type: typ, X: x, Y: y}
			if typ != input.DispatchMouseEventTypeMouseMoved {
				ev.Button, ev.ClickCount = input.MouseButtonLeft, 1
			}
			if _, err := chromedp.Call(ctx, input.DispatchMouseEvent, ev); err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		p.t.Fatalf("the mouse at %.0f,%.0f: %v", x, y, err)
	}
}

// A URL in the output is a link that a click opens; Ctrl+Shift+F
// searches the scrollback and brings a match far up into view.
func TestServeLinksAndSearch(t *testing.T) {
	p, srv, _ := openPage(t)
	link := srv.UIBase + "favicon.svg"
	p.run(fmt.Sprintf("print('see ' + '%s' + ' here')", link))
	// The screen (the terminal's buffer) holds the row before the DOM
	// renderer has drawn it.
	p.waitEval("the link's row is drawn", `[...document.querySelectorAll('.xterm-rows > div')].some((r) => r.textContent.startsWith('see http'))`)
	at := eval[[]float64](p, `(() => {
		const row = [...document.querySelectorAll('.xterm-rows > div')].find((r) => r.textContent.startsWith('see http'));
		if (!row) return [];
		const r = row.getBoundingClientRect();
		return [r.x + window.__cellWidth() * 8.5, r.y + r.height / 2];
	})()`)
	if len(at) == 0 {
		t.Fatalf("no row shows the link:\n%s", p.screen())
	}
	deadline := time.Now().Add(hangBound)
	for eval[string](p, `window.__lastLink()`) != link {
		if time.Now().After(deadline) {
			t.Fatalf("clicking the link did not open %s (opened %q)", link, eval[string](p, `window.__lastLink()`))
		}
		p.mouseAt(at[0], at[1]-1, false) // hovering makes it a link
		p.mouseAt(at[0], at[1], true)
		time.Sleep(50 * time.Millisecond)
	}

	p.run("print('needle-' + '7'); print('\\n'.join(f'line {i}' for i in range(300)))")
	p.waitScreen(`(?m)^line 299$`)
	bottom := eval[float64](p, `window.__viewportY()`)
	p.ctrlKey('f', true)
	p.waitEval("the search box opens, focused", `!document.getElementById('search').hidden && document.activeElement.id === 'search-text'`)
	p.keys("needle-7\r")
	p.waitEval("the match is selected", `window.__selection() === 'needle-7'`)
	if y := eval[float64](p, `window.__viewportY()`); y >= bottom {
		t.Errorf("the view stayed at row %v, the match is far above it", y)
	}
	if got := eval[string](p, `document.getElementById('search-count').textContent`); got != "1 of 1" {
		t.Errorf("the search box counts %q, want 1 of 1", got)
	}
}

// A session whose tab was closed keeps running, and a new tab offers it
// (from GET /sessions) before starting another: attached, it shows its
// screen and keeps its variables.
func TestServeNewTabReattachesAClosedTabsSession(t *testing.T) {
	p, srv, _ := openPage(t)
	p.run("x = 5")
	id := eval[string](p, `window.__sessionState().sessionId`)
	p.do("closing the page", chromedp.Navigate("about:blank"))
	deadline := time.Now().Add(hangBound)
	for !strings.Contains(sessionsJSON(t, srv), `"attached":0`) {
		if time.Now().After(deadline) {
			t.Fatalf("the session is still attached %v after its page went: %s", hangBound, sessionsJSON(t, srv))
		}
		time.Sleep(50 * time.Millisecond)
	}
	tab, cancel := chromedp.NewContext(p.ctx)
	defer cancel()
	q := &page{t: t, ctx: tab}
	q.do("opening the URL in a new tab", chromedp.Navigate(srv.UIBase+"#token="+srv.Token))
	button := fmt.Sprintf(`[...document.querySelectorAll('#sessions button')].find((b) => b.textContent === 'attach %s')`, id[:6])
	q.waitEval("the new tab offers the session", `!document.getElementById('sessions').hidden && !!`+button)
	if n := eval[float64](q, `document.querySelectorAll('#sessions button').length`); n != 2 {
		t.Errorf("the offer has %v buttons, want the session's and a new session's", n)
	}
	q.do("attaching", chromedp.Evaluate[chromedp.Void](button+`.click()`))
	q.waitScreen(`(?m)^py> x = 5$`)
	q.waitEval("attached", fmt.Sprintf(`window.__sessionState().sessionId === %q && window.__sessionState().connected`, id))
	q.waitScreen(`(?m)^py>\s*$`)
	q.run("print(x * 2)")
	q.waitScreen(`(?m)^10$`)
}

// sessionsJSON is GET /sessions as serve answers it.
func sessionsJSON(t *testing.T, srv serveConn) string {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.UIBase+"sessions", nil)
	req.Header.Set("Authorization", "Bearer "+srv.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return b.String()
}

// Two pages on one session of different sizes: the session takes the
// size of the page last used, rather than the pages resizing it in turn.
func TestServeLastUsedPageSetsTheSize(t *testing.T) {
	p, srv, _ := openPage(t)
	id := eval[string](p, `window.__sessionState().sessionId`)
	tab, cancel := chromedp.NewContext(p.ctx)
	defer cancel()
	q := &page{t: t, ctx: tab}
	q.do("a smaller window", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 520, Height: 300, DeviceScaleFactor: 1})
		return err
	}))
	q.do("opening the page", chromedp.Navigate(srv.UIBase+"#token="+srv.Token))
	q.waitScreen(`(?m)^py>\s*$`)
	// The same session as the first page, as after a reload of it.
	q.do("showing the first page's session", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`sessionStorage.setItem('pyaichat.session', %q)`, id)), chromedp.Reload())
	q.waitEval("the second page attaches", fmt.Sprintf(`window.__sessionState().sessionId === %q && window.__sessionState().connected`, id))
	size := func(pg *page) (int, int) {
		s := eval[map[string]any](pg, `window.__sessionState()`)
		return int(s["cols"].(float64)), int(s["rows"].(float64))
	}
	aCols, aRows := size(p)
	bCols, bRows := size(q)
	if aCols == bCols {
		t.Fatalf("both pages are %d columns wide; the test needs two sizes", aCols)
	}
	for i, pg := range []*page{p, q, p} {
		cols, rows := size(pg)
		// The other page set the size last: this one has been told.
		pg.waitEval("the page learns another set the size", `!window.__sessionState().sizeOwner`)
		pg.run(fmt.Sprintf("import os; print('size', %d, *os.get_terminal_size())", i))
		pg.waitScreen(fmt.Sprintf(`(?m)^size %d \d+ \d+$`, i))
		got := regexp.MustCompile(fmt.Sprintf(`(?m)^size %d (\d+) (\d+)$`, i)).FindStringSubmatch(pg.screen())
		if got[1] != fmt.Sprint(cols) || got[2] != fmt.Sprint(rows) {
			t.Errorf("typed on the page of %dx%d (step %d): the session is %sx%s (the pages are %dx%d and %dx%d)", cols, rows, i, got[1], got[2], aCols, aRows, bCols, bRows)
		}
	}
}

// On a touch screen (a coarse pointer) the page shows a row of the keys
// an on-screen keyboard lacks: Tab switches modes, the arrows recall a
// line, Ctrl applies to the next key, ^C interrupts. Elsewhere it is
// hidden.
func TestServeKeyRowOnTouchScreens(t *testing.T) {
	p, _, _ := openPage(t)
	if !eval[bool](p, `document.getElementById('keys').hidden`) {
		t.Errorf("the key row shows with a fine pointer")
	}
	p.do("a touch screen", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 5})
		return err
	}), chromedp.Reload())
	p.waitScreen(`(?m)^py>\s*$`)
	p.waitEval("the key row shows", `!document.getElementById('keys').hidden`)
	press := func(key string) { // a real click, which would move the focus
		p.t.Helper()
		at := eval[[]float64](p, fmt.Sprintf(`(() => { const r = document.querySelector('#keys [data-key=%q]').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`, key))
		p.mouseAt(at[0], at[1], true)
	}
	press("tab")
	p.waitScreen(`(?m)^ai>\s*$`)
	press("tab")
	p.waitScreen(`(?m)^py>\s*$`)
	p.run("print('row' + 'keys')")
	p.waitScreen(`(?m)^rowkeys$`)
	press("up")
	p.waitScreen(`(?m)^py> print\('row' \+ 'keys'\)\s*$`)
	press("ctrl")
	p.keys("u") // Ctrl-U: the line is killed
	p.waitScreen(`(?m)^py>\s*\z`)
	if eval[string](p, `document.querySelector('#keys [data-key=ctrl]').getAttribute('aria-pressed')`) != "false" {
		t.Errorf("Ctrl stays pressed after the key it applied to")
	}
	p.keys("import time; time.sleep(60)\r")
	p.waitScreen(`sleep\(60\)\s*$`)
	press("ctrl-c")
	p.waitScreen(`(?m)^KeyboardInterrupt$`)
	p.waitScreen(`(?m)^py>\s*$`)
	if eval[string](p, `document.activeElement.className`) != "xterm-helper-textarea" {
		t.Errorf("the key row took the focus from the terminal: %q", eval[string](p, `document.activeElement.outerHTML.slice(0, 80)`))
	}
}

// utf16le is s as UTF-16LE, the way Chromium stores some strings
// (sessionStorage and localStorage values among them).
func utf16le(s string) []byte {
	b := make([]byte, 0, 2*len(s))
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8))
	}
	return b
}

// An image a program writes with the iTerm2 inline image protocol is
// drawn in the terminal, within the page's Content-Security-Policy.
func TestServeShowsImages(t *testing.T) {
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
	img := image.NewRGBA(image.Rect(0, 0, 24, 24))
	for i := range img.Pix {
		img.Pix[i] = 0xff // white, opaque
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	data := base64.StdEncoding.EncodeToString(b.Bytes())
	p.run(fmt.Sprintf(`import sys; sys.stdout.write('\x1b]1337;File=inline=1;size=%d:%s\x07\n'); sys.stdout.flush()`, b.Len(), data))
	p.waitEval("the image is drawn", `window.__imageCells() > 0`)
	for _, problem := range watch.problems() {
		t.Errorf("on the page: %s", problem)
	}
}

// plt.show() in the serve page: the page's image add-on answers the
// device attributes with sixel, pyaichat draws the figure so, and the
// screenshot shows it: far more bright pixels (the figure's white) in the
// terminal's area than its few lines of text could light.
func TestServeShowsPlots(t *testing.T) {
	p, _, _ := openPage(t)
	box := eval[[]float64](p, `(() => { const r = document.querySelector('.xterm-screen').getBoundingClientRect(); return [r.x, r.y, r.right, r.bottom]; })()`)
	rect := image.Rect(int(box[0]), int(box[1]), int(box[2]), int(box[3]))
	p.run(fmt.Sprintf("import os; os.environ['MPLCONFIGDIR'] = %q", mplConfigDir()))
	p.settled()
	before := brightPixels(p.screenshot(), rect)
	p.run(plotLine)
	p.waitEval("the figure is drawn", `window.__imageCells() > 0`)
	p.settled()
	after := brightPixels(p.screenshot(), rect)
	// A line of text lights a few thousand; the figure's white, hundreds
	// of thousands (fewer where the window makes it smaller).
	if after-before < 30000 {
		t.Errorf("%d bright pixels in the terminal's area %v after plt.show(), %d before: no figure", after, rect, before)
	}
	if strings.Contains(p.screen(), "saved") {
		t.Errorf("the figure was saved, not drawn:\n%s", p.screen())
	}
}
