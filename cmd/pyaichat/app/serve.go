package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/pyaichat/pyaichat/cmd/pyaichat/serve"
)

const serveUsage = `usage: pyaichat serve [--addr 127.0.0.1:0] [--open] [--print-conn-json]
                      [--idle-timeout 1h] [--upload-limit 100] [-- PYAICHAT-ARGS...]

Serves pyaichat in a browser tab: each session is pyaichat PYAICHAT-ARGS...
in its own terminal, shown by an xterm.js page over a WebSocket on the
loopback interface, guarded by a token made at each launch.
`

// runServe is `pyaichat serve`.
func runServe(std stdio, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(std.err)
	fs.Usage = func() { fmt.Fprint(std.err, serveUsage); fs.PrintDefaults() }
	addr := fs.String("addr", "127.0.0.1:0", "the loopback `host:port` to listen on (port 0: any free one)")
	open := fs.Bool("open", false, "open the page in the default browser")
	connJSON := fs.Bool("print-conn-json", false, `print one JSON line {"port","token","uiBase"} for an IDE host`)
	idle := fs.Duration("idle-timeout", time.Hour, "end a session no page has shown for this long (0: never)")
	uploadMiB := fs.Int64("upload-limit", 100, "MiB of dropped files kept per session")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	exe, err := os.Executable()
	if err != nil {
		std.warn("serve: finding this program: " + err.Error())
		return 1
	}
	childArgs := fs.Args()
	if os.Getenv("GOMAXPROCS") == "" {
		// main limits Go to two processors for the REPL; the server
		// encodes output for several sessions at once.
		runtime.GOMAXPROCS(runtime.NumCPU())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	err = serve.Run(ctx, serve.Launch{
		Addr: *addr, Open: *open, PrintConnJSON: *connJSON,
		Options: serve.Options{
			Command:     func() *exec.Cmd { return childCommand(exe, childArgs) },
			IdleTimeout: *idle,
			UploadLimit: *uploadMiB << 20,
			Log:         std.err,
		},
	}, std.out)
	if err != nil {
		std.warn(err.Error())
		return 1
	}
	return 0
}

// childCommand is one session's pyaichat, in the terminal xterm.js
// emulates.
func childCommand(exe string, args []string) *exec.Cmd {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
	return cmd
}
