package agent

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
)

// closeAfter answers over the bare connection with no Content-Length and no
// chunked encoding, so the body ends when the server closes the connection,
// which the client cannot tell from a complete body.
func closeAfter(header, body string) fakemodel.Reply {
	return handler(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		io.WriteString(buf, "HTTP/1.1 200 OK\r\n"+header+"Connection: close\r\n\r\n"+body)
		buf.Flush()
	})
}

func TestBodiesThatAreNoChatStream(t *testing.T) {
	cases := []struct {
		name string
		step fakemodel.Reply
		want string
	}{
		{"captive portal", raw(200, "text/html; charset=utf-8", "<html><head><title>Hotel WiFi login</title></head><body>Accept the terms</body></html>"),
			"{url}/chat/completions answered with Content-Type text/html; charset=utf-8, neither an event stream nor JSON"},
		{"plain text", raw(200, "text/plain", "Hello from the proxy\n"),
			"{url}/chat/completions answered with Content-Type text/plain, neither an event stream nor JSON"},
		{"no Content-Type, closed", closeAfter("", "it works"),
			"{url}/chat/completions answered with no Content-Type, neither an event stream nor JSON"},
		{"empty JSON array", raw(200, "application/json", "[]"),
			"{url}/chat/completions answered with JSON that is not a chat completion: []"},
		{"array of numbers", raw(200, "application/json", "[1,2,3]"),
			"{url}/chat/completions answered with JSON that is not a chat completion: [1,2,3]"},
		{"JSON object of something else", raw(200, "application/json", `{"status":"ok"}`),
			`{url}/chat/completions answered with JSON that is not a chat completion: {"status":"ok"}`},
		{"event that is a JSON string", sse("data: \"str\"\n\n"),
			`{url} sent a stream event that is not a JSON object: "str"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, c.step)
			s := NewConversation(f.config(), &fakeTools{}, nil)
			notices := newSyncBuffer()
			s.Notices = notices
			err := s.Ask(context.Background(), "q", newSyncBuffer())
			want := strings.ReplaceAll(c.want, "{url}", f.url())
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("err = %v\nwant   %s", err, want)
			}
			for _, internal := range []string{"json:", "Go value", "wireChunk", "mid-answer"} {
				if strings.Contains(err.Error(), internal) {
					t.Errorf("the error shows %q: %v", internal, err)
				}
			}
			if strings.Contains(notices.String(), "empty answer") {
				t.Errorf("reported as an empty answer: %q", notices.String())
			}
		})
	}
}

// A body that ends by a clean close after some text but before any
// finish_reason or [DONE] was most likely cut: the user is told.
func TestCleanCloseBeforeTheEndIsFlagged(t *testing.T) {
	body := "data: " + chunk(`{"role":"assistant","content":"The answer is"}`, "") + "\n\n"
	f := newFake(t, closeAfter("Content-Type: text/event-stream\r\n", body))
	s := NewConversation(f.config(), &fakeTools{}, nil)
	out := newSyncBuffer()
	if err := s.Handle(context.Background(), "q", out); err != nil {
		t.Fatal(err)
	}
	want := "The answer is\n(the answer may be incomplete: the connection to " + f.url() + " closed before the server marked the answer finished)\n"
	if out.String() != want {
		t.Errorf("out %q\nwant %q", out.String(), want)
	}
	// With a finish_reason the same close is a complete answer.
	f.add(closeAfter("Content-Type: text/event-stream\r\n", "data: "+chunk(`{"content":"Done."}`, "stop")+"\n\n"))
	out = newSyncBuffer()
	if err := s.Handle(context.Background(), "q", out); err != nil || out.String() != "Done.\n" {
		t.Errorf("complete answer: err %v, out %q", err, out.String())
	}
}
