package llm

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
	c := New(Options{BaseURL: "http://" + addr + "/v1", APIKey: testKey, Limits: Limits{ConnectTimeout: 150 * time.Millisecond, MaxRetries: -1}})
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err = c.Open(context.Background(), "m", []Message{{Role: "user", Content: "hi?"}}, Tools{}, func(string) {})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a hang detector, not a timing assertion
		t.Fatal("a request to a host that never answers the connect did not return (hang)")
	}
	want := "could not connect to http://" + addr + "/v1 within 150ms"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// testKey is long enough to count as a secret for RedactKey.
const testKey = "sk-test-S3CRET-never-print-me-0123456789"
