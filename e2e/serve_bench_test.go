package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
)

// streamClient reads one session's output over the WebSocket on a
// goroutine of its own, so that a benchmark can wait with a deadline (a
// deadline on the WebSocket read itself would close the connection).
type streamClient struct {
	conn *websocket.Conn
	ctx  context.Context
	id   string
	data chan []byte
	buf  []byte
}

func dialStream(b *testing.B, c serveConn) *streamClient {
	b.Helper()
	s := dialServe(b, c)
	s.open()
	sc := &streamClient{conn: s.conn, ctx: s.ctx, id: s.id, data: make(chan []byte, 1024)}
	go func() {
		defer close(sc.data)
		for {
			_, msg, err := sc.conn.Read(sc.ctx)
			if err != nil {
				return
			}
			var m struct {
				Type       string `json:"type"`
				DataBase64 string `json:"dataBase64"`
			}
			if json.Unmarshal(msg, &m) != nil || m.Type != "stdout" {
				continue
			}
			d, _ := base64.StdEncoding.DecodeString(m.DataBase64)
			sc.data <- d
		}
	}()
	if _, err := sc.waitFor(0, "py> ", 30*time.Second); err != nil {
		b.Fatal(err)
	}
	return sc
}

func (sc *streamClient) keys(k string) error {
	msg, _ := json.Marshal(map[string]any{"type": "stdin", "sessionId": sc.id, "dataBase64": base64.StdEncoding.EncodeToString([]byte(k))})
	return sc.conn.Write(sc.ctx, websocket.MessageText, msg)
}

// waitFor reads until want appears after offset from; it returns the
// offset after it.
func (sc *streamClient) waitFor(from int, want string, timeout time.Duration) (int, error) {
	deadline := time.After(timeout)
	for {
		if i := bytes.Index(sc.buf[from:], []byte(want)); i >= 0 {
			return from + i + len(want), nil
		}
		select {
		case d, ok := <-sc.data:
			if !ok {
				return 0, fmt.Errorf("connection closed waiting for %q", want)
			}
			sc.buf = append(sc.buf, d...)
		case <-deadline:
			return 0, fmt.Errorf("timed out after %v waiting for %q; output ends %q", timeout, want, sc.buf[max(0, len(sc.buf)-300):])
		}
	}
}

// settle reads until the output has been quiet for d.
func (sc *streamClient) settle(d time.Duration) {
	for {
		select {
		case data, ok := <-sc.data:
			if !ok {
				return
			}
			sc.buf = append(sc.buf, data...)
		case <-time.After(d):
			return
		}
	}
}

// serveKeyEcho types a short line into a session of `pyaichat serve`, then
// times 20 single keys typed at its end, each from sending the stdin
// message to the key showing in a stdout message, as measureKeyEcho does
// on a plain PTY; it returns the median in microseconds.
func serveKeyEcho(b *testing.B, srv serveConn) float64 {
	sc := dialStream(b, srv)
	defer sc.conn.CloseNow()
	off := len(sc.buf)
	if err := sc.keys("#aaaaaaaa#"); err != nil {
		b.Fatal(err)
	}
	if _, err := sc.waitFor(off, "aaaaaaaa#", 30*time.Second); err != nil {
		b.Fatal(err)
	}
	sc.settle(200 * time.Millisecond)
	var times []float64
	for i := 0; i < 20; i++ {
		key := string(rune('b' + i))
		off := len(sc.buf)
		t0 := time.Now()
		if err := sc.keys(key); err != nil {
			b.Fatal(err)
		}
		if _, err := sc.waitFor(off, key, 10*time.Second); err != nil {
			b.Fatalf("key %d: %v", i+1, err)
		}
		times = append(times, float64(time.Since(t0))/1e3)
		sc.settle(20 * time.Millisecond)
	}
	sc.keys("\x15\x04") // Ctrl-U, Ctrl-D: the session ends
	return median(times)
}

// BenchmarkServeKeyEcho is the key-to-echo round trip through `pyaichat
// serve` on loopback (the WebSocket, the server, the PTY, pyaichat's line
// editor and back), beside the same keys on a plain PTY; medians over the
// runs' medians. Run it with
//
//	go test ./e2e -run '^$' -bench ServeKeyEcho -benchtime 5x
//
// (make bench-serve). There is no timing assertion: the machine is shared.
func BenchmarkServeKeyEcho(b *testing.B) {
	home := b.TempDir()
	srv := startServe(b, home, nil, "-q")
	plain := replProg{name: "pyaichat", argv: []string{binary, "-q"}, prompt: "py> "}
	var viaServe, viaPTY []float64
	for i := 0; i < b.N; i++ {
		viaServe = append(viaServe, serveKeyEcho(b, srv))
		us, err := measureKeyEcho(plain, home, 10)
		if err != nil {
			b.Fatal(err)
		}
		viaPTY = append(viaPTY, us)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(viaServe)/1e3, "serve-key-ms")
	b.ReportMetric(median(viaPTY)/1e3, "pty-key-ms")
}

// servePrint times the loop of measurePrint (200,000 lines of 68 bytes)
// in a session of `pyaichat serve`, from sending it to its last line
// arriving, decoded, at the WebSocket client.
func servePrint(b *testing.B, srv serveConn) time.Duration {
	sc := dialStream(b, srv)
	defer sc.conn.CloseNow()
	start := time.Now()
	if err := sc.keys("for i in range(200000): print(i, 'x' * 60)\r\rprint('printed' + '-all')\r"); err != nil {
		b.Fatal(err)
	}
	// Search only the tail: the output is 13.6 MB.
	const done = "printed-all"
	deadline := time.After(120 * time.Second)
	var tail []byte
	for !bytes.Contains(tail, []byte(done)) {
		select {
		case d, ok := <-sc.data:
			if !ok {
				b.Fatal("connection closed during the loop")
			}
			tail = append(tail[max(0, len(tail)-len(done)):], d...)
		case <-deadline:
			b.Fatal("the loop's output did not arrive in 120 s")
		}
	}
	elapsed := time.Since(start)
	sc.keys("\x04")
	return elapsed
}

// BenchmarkServeThroughput is the output of a Python loop printing
// 200,000 lines through `pyaichat serve` to a WebSocket client, beside the
// same loop on a plain PTY (measurePrint), alternating which goes first;
// medians. Run it with
//
//	go test ./e2e -run '^$' -bench ServeThroughput -benchtime 5x
func BenchmarkServeThroughput(b *testing.B) {
	home := b.TempDir()
	srv := startServe(b, home, nil, "-q")
	plain := replProg{name: "pyaichat", argv: []string{binary, "-q"}, prompt: "py> "}
	var viaServe, viaPTY []float64
	for i := 0; i < b.N; i++ {
		ptyRun := func() {
			d, err := measurePrint(plain, home)
			if err != nil {
				b.Fatal(err)
			}
			viaPTY = append(viaPTY, d.Seconds())
		}
		if i%2 == 1 {
			ptyRun()
		}
		viaServe = append(viaServe, servePrint(b, srv).Seconds())
		if i%2 == 0 {
			ptyRun()
		}
	}
	s, p := median(viaServe), median(viaPTY)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(s, "serve-print-s")
	b.ReportMetric(p, "pty-print-s")
	b.ReportMetric(s/p, "print-ratio")
}

// BenchmarkServeIdleMemory is what an idle session costs: the server's
// own resident and private memory (VmRSS, Private_Dirty) before and after
// 20 sessions opened and left at their prompt, per session, and the
// private memory of one session's pyaichat. Run it with
//
//	go test ./e2e -run '^$' -bench ServeIdleMemory -benchtime 3x
func BenchmarkServeIdleMemory(b *testing.B) {
	const sessions = 20
	var rss, priv, child []float64
	for i := 0; i < b.N; i++ {
		home := b.TempDir()
		srv := startServe(b, home, nil, "-q")
		dialServe(b, srv) // the server has served a connection once
		time.Sleep(idleSettle)
		rss0, priv0 := serverMemory(b, srv.pid)
		var clients []*streamClient
		for j := 0; j < sessions; j++ {
			clients = append(clients, dialStream(b, srv))
		}
		time.Sleep(idleSettle)
		rss1, priv1 := serverMemory(b, srv.pid)
		rss = append(rss, (rss1-rss0)/sessions)
		priv = append(priv, (priv1-priv0)/sessions)
		if kib, err := childPrivate(srv.pid); err == nil {
			child = append(child, kib)
		} else {
			b.Fatal(err)
		}
		for _, c := range clients {
			c.conn.CloseNow()
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(rss), "serve-rss-KiB/session")
	b.ReportMetric(median(priv), "serve-private-KiB/session")
	b.ReportMetric(median(child), "pyaichat-private-KiB/session")
}

// childPrivate is the median Private_Dirty of the server's children.
func childPrivate(pid int) (float64, error) {
	kids, err := readChildren(pid)
	if err != nil || len(kids) == 0 {
		return 0, fmt.Errorf("the server's children: %v (%d)", err, len(kids))
	}
	var kib []float64
	for _, k := range kids {
		v, err := privateDirty(k)
		if err != nil {
			return 0, err
		}
		kib = append(kib, v)
	}
	return median(kib), nil
}

func readChildren(pid int) ([]int, error) {
	var kids []int
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	for _, task := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			var k int
			if _, err := fmt.Sscan(f, &k); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, nil
}

// BenchmarkServeThroughputInChromium is the loop of BenchmarkServeThroughput
// shown by the page in headless Chromium: from the Enter that runs the
// loop, typed into the page, to its last line on xterm.js's screen (read
// every 20 ms), beside the same loop on a plain PTY. Run it with
//
//	go test ./e2e -run '^$' -bench ServeThroughputInChromium -benchtime 3x
func BenchmarkServeThroughputInChromium(b *testing.B) {
	exe, err := chromiumPath()
	if err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	srv := startServe(b, home, nil, "-q")
	p := &page{t: b, ctx: newBrowser(b, exe, home)}
	plain := replProg{name: "pyaichat", argv: []string{binary, "-q"}, prompt: "py> "}
	var viaPage, viaPTY []float64
	for i := 0; i < b.N; i++ {
		// A new session each time, through the page's Restart button.
		if i == 0 {
			p.do("opening the page", chromedp.Navigate(srv.UIBase+"#token="+srv.Token))
		} else {
			p.do("restarting", chromedp.Evaluate[chromedp.Void](`document.getElementById('restart').click()`))
		}
		p.waitScreen(`\A\s*py>\s*\z`)
		// The clock starts at the Enter that runs the loop, as if the
		// line had been pasted (typing it takes about 0.1 s).
		p.keys("for i in range(200000): print(i, 'x' * 60)\r")
		start := time.Now()
		p.keys("\rprint('printed' + '-all')\r")
		deadline := time.Now().Add(120 * time.Second)
		for {
			last, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`window.__screenText(40)`))
			if err != nil {
				b.Fatal(err)
			}
			if regexp.MustCompile(`(?m)^printed-all$`).MatchString(last) {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("the loop's last line did not show in 120 s; screen ends %q", last)
			}
			time.Sleep(20 * time.Millisecond)
		}
		viaPage = append(viaPage, time.Since(start).Seconds())
		d, err := measurePrint(plain, home)
		if err != nil {
			b.Fatal(err)
		}
		viaPTY = append(viaPTY, d.Seconds())
	}
	s, q := median(viaPage), median(viaPTY)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(s, "page-print-s")
	b.ReportMetric(q, "pty-print-s")
	b.ReportMetric(s/q, "print-ratio")
}

// BenchmarkServeMemoryAfterOutput is what a session that has printed 25 MB
// leaves in the server: its resident and private memory (VmRSS,
// Private_Dirty) after the output has gone through a page and settled,
// less the same before the session opened; then the same after 75 MB
// more. The server keeps only the replay buffer (1 MiB by default) of a
// session's output, so the second figure should be no larger than the
// first: what is above the buffer is the Go heap's headroom, not output
// kept. Run it with
//
//	go test ./e2e -run '^$' -bench ServeMemoryAfterOutput -benchtime 3x
func BenchmarkServeMemoryAfterOutput(b *testing.B) {
	var rss25, priv25, rss100, priv100 []float64
	for i := 0; i < b.N; i++ {
		home := b.TempDir()
		srv := startServe(b, home, nil, "-q")
		dialServe(b, srv)
		time.Sleep(idleSettle)
		rss0, priv0 := serverMemory(b, srv.pid)
		sc := dialStream(b, srv)
		print25MB(b, sc)
		rss, priv := serverMemory(b, srv.pid)
		rss25 = append(rss25, (rss-rss0)/1024)
		priv25 = append(priv25, (priv-priv0)/1024)
		for range 3 {
			print25MB(b, sc)
		}
		rss, priv = serverMemory(b, srv.pid)
		rss100 = append(rss100, (rss-rss0)/1024)
		priv100 = append(priv100, (priv-priv0)/1024)
		sc.conn.CloseNow()
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(median(rss25), "serve-rss-MiB-after-25MB")
	b.ReportMetric(median(priv25), "serve-private-MiB-after-25MB")
	b.ReportMetric(median(rss100), "serve-rss-MiB-after-100MB")
	b.ReportMetric(median(priv100), "serve-private-MiB-after-100MB")
}

// print25MB has the session print 25 MiB and reads it all through the
// page's connection, then lets the output settle.
func print25MB(b *testing.B, sc *streamClient) {
	b.Helper()
	const lines, width = 256 * 1024, 100
	off := len(sc.buf)
	code := fmt.Sprintf("import sys; sys.stdout.write(('x' * %d + '\\n') * %d); print('done', 6 * 7)\r", width-1, lines)
	if err := sc.keys(code); err != nil {
		b.Fatal(err)
	}
	if _, err := sc.waitFor(off, "done 42", 5*time.Minute); err != nil {
		b.Fatal(err)
	}
	sc.settle(idleSettle)
	// A page that falls more than the replay buffer behind skips to what
	// the buffer still holds, so the page may get less than was printed:
	// at least the buffer's worth has gone through it.
	if got := len(sc.buf) - off; got < 1<<20 {
		b.Fatalf("the page got %d bytes of the %d printed", got, lines*width)
	}
	sc.buf = nil // what the page holds is not the server's
}

// serverMemory is the server's VmRSS and Private_Dirty, in KiB.
func serverMemory(b *testing.B, pid int) (rss, private float64) {
	b.Helper()
	rss, err := procStatus(pid, "VmRSS")
	if err != nil {
		b.Fatal(err)
	}
	private, err = privateDirty(pid)
	if err != nil {
		b.Fatal(err)
	}
	return rss, private
}
