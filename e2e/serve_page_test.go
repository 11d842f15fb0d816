package e2e

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"testing"

	"github.com/chromedp/chromedp"
)

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
