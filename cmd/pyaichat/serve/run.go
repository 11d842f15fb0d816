package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// Launch is what `pyaichat serve` was asked for.
type Launch struct {
	Addr          string // a loopback host:port; port 0 picks a free one
	Open          bool   // open the page in the default browser
	PrintConnJSON bool   // print {"port","token","uiBase"} for an IDE host
	Options              // for the Server; Token is made here when empty
}

// Run serves until ctx ends, then ends the sessions. It prints the URL to
// open (with the token in its fragment), or with PrintConnJSON one JSON
// line, on out.
func Run(ctx context.Context, l Launch, out io.Writer) error {
	if err := CheckLoopbackAddr(l.Addr); err != nil {
		return err
	}
	if l.Token == "" {
		t, err := NewToken()
		if err != nil {
			return err
		}
		l.Token = t
	}
	var outMu sync.Mutex
	var base string
	l.NextCode = func(code string) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintf(out, "pyaichat serve: that link has been used; for another tab open %s\n", codeURL(base, code))
	}
	srv, err := New(l.Options)
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", l.Addr, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	base = fmt.Sprintf("http://%s/", ln.Addr())
	if l.PrintConnJSON {
		b, _ := json.Marshal(map[string]any{"port": port, "token": l.Token, "uiBase": base})
		fmt.Fprintf(out, "%s\n", b)
	} else {
		fmt.Fprintf(out, "pyaichat serve: open %s\n", codeURL(base, srv.Code()))
	}
	if l.Open {
		dir, err := openBrowser(codeURL(base, srv.Code()))
		if err != nil {
			fmt.Fprintf(srv.opts.Log, "serve: could not open a browser: %v\n", err)
		}
		if dir != "" {
			defer os.RemoveAll(dir)
		}
	}
	hs := srv.HTTPServer()
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// openBrowser has the desktop's opener show url through a private file
// that sends the browser on to it, as Jupyter does: url carries the token,
// and a command line is readable by every local user (ps, /proc). The
// file is 0600 in a new 0700 directory, returned for removal when serve
// stops (the browser may read it any time before).
func openBrowser(url string) (dir string, err error) {
	dir, err = os.MkdirTemp("", "pyaichat-serve-open-")
	if err != nil {
		return "", fmt.Errorf("making a directory for the page that opens serve: %w", err)
	}
	file := filepath.Join(dir, "open.html")
	if err := os.WriteFile(file, redirectPage(url), 0o600); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("writing the page that opens serve: %w", err)
	}
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	cmd := exec.Command(name, file)
	if err := cmd.Start(); err != nil {
		return dir, err
	}
	go cmd.Wait()
	return dir, nil
}

// redirectPage is an HTML page that goes on to url at once (with a link
// for a browser that does not follow the refresh).
func redirectPage(url string) []byte {
	u := html.EscapeString(url)
	return []byte(`<!doctype html>
<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=` + u + `">
<title>pyaichat serve</title></head>
<body><p>Opening <a href="` + u + `">pyaichat serve</a>.</p></body></html>
`)
}
