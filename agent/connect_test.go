package agent

import (
	"context"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fullListener is a loopback socket that listens and never accepts, with
// its accept queue filled: the kernel then drops further SYNs, so a
// connect to it hangs as one to a dead host does.
func fullListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	// Fill the queue (a backlog of 0 holds one connection); stop at the
	// first connect that does not complete.
	for i := 0; i < 8; i++ {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			return addr
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Fatalf("%s accepted 8 connections with nobody accepting; cannot make a connect hang", addr)
	return ""
}

func TestConnectTimeout(t *testing.T) {
	addr := fullListener(t)
	cfg := Config{
		BaseURL: "http://" + addr + "/v1", APIKey: testKey, Model: "m",
		ConnectTimeout: 150 * time.Millisecond, MaxRetries: -1,
	}
	s := NewSession(cfg, &fakeTools{}, nil)
	var err error
	within(t, "a question to a host that never answers the connect", func() {
		err = s.Handle(context.Background(), "hi?", newSyncBuffer())
	})
	want := "could not connect to http://" + addr + "/v1 within 150ms"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}
