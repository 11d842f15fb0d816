package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"runtime"
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
	base := fmt.Sprintf("http://%s/", ln.Addr())
	if l.PrintConnJSON {
		b, _ := json.Marshal(map[string]any{"port": port, "token": l.Token, "uiBase": base})
		fmt.Fprintf(out, "%s\n", b)
	} else {
		fmt.Fprintf(out, "pyaichat serve: open %s#token=%s\n", base, l.Token)
	}
	if l.Open {
		if err := openBrowser(base + "#token=" + l.Token); err != nil {
			fmt.Fprintf(srv.opts.Log, "serve: could not open a browser: %v\n", err)
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

// openBrowser hands url to the desktop's opener.
func openBrowser(url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	cmd := exec.Command(name, url)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
