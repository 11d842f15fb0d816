package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/agent/view"
)

// loopServer answers any request at zero latency: a tool call while the
// question has had fewer than steps tool results, then a short answer. The
// bodies are rendered once and sent in one write, so that the server's own
// cost stays small.
func loopServer(b *testing.B, steps int) *fakemodel.Server {
	call := sse(sseBody(
		chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_type","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"expr\":"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"x\"}"}}]}`, ""),
		chunk(`{}`, "tool_calls"), usageChunk))
	answer := sse(sseBody(chunk(`{"role":"assistant","content":"x is "}`, ""), chunk(`{"content":"an int."}`, ""), chunk(`{}`, "stop"), usageChunk))
	return fakemodel.NewFunc(b, func(r fakemodel.Request) fakemodel.Reply {
		// Each tool result adds one "tool_call_id"; a fixed call is fine
		// for one step per question, since repeats are counted per question.
		if bytes.Count(r.Body, []byte(`"tool_call_id"`)) < steps {
			return call
		}
		return answer
	})
}

// BenchmarkToolStep measures the loop's own cost for one tool step: a
// question answered after one tool call is two requests (call, answer); the
// tool itself is a no-op, so its time is excluded. Reported per step.
func BenchmarkToolStep(b *testing.B) {
	srv := loopServer(b, 1)
	s := NewConversation(Config{BaseURL: srv.URL, APIKey: testKey, Model: "m", View: view.For(view.Options{})}, &fakeTools{}, func() string { return ">>> x = 1" })
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.history = s.history[:0]
		if err := s.Handle(ctx, "what is x?", io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/step")
}

// BenchmarkQuestionNoTools is the baseline: one request, one answer.
func BenchmarkQuestionNoTools(b *testing.B) {
	srv := loopServer(b, 0)
	s := NewConversation(Config{BaseURL: srv.URL, APIKey: testKey, Model: "m", View: view.For(view.Options{})}, &fakeTools{}, nil)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.history = s.history[:0]
		if err := s.Handle(ctx, "what is x?", io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCancelLatency measures Ctrl-C: from cancel() during a streaming
// answer to Handle returning (the issue asks for at most 100 ms).
func BenchmarkCancelLatency(b *testing.B) {
	// Every answer stops after its first piece until the client leaves.
	srv := fakemodel.NewFunc(b, func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Pieces: []string{"thinking"}, Pause: 1}
	})
	s := NewConversation(Config{BaseURL: srv.URL, APIKey: testKey, Model: "m", View: view.For(view.Options{})}, &fakeTools{}, nil)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		out := newSyncBuffer()
		done := make(chan time.Time)
		go func() {
			s.Handle(ctx, "q", out)
			done <- time.Now()
		}()
		<-out.wrote
		start := time.Now()
		cancel()
		total += (<-done).Sub(start)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/cancel")
}

// firstRequest renders the first request for a simple question with the
// given tools and a typical automatic context.
func firstRequest(tb testing.TB, tools Toolset) []byte {
	srv := fakemodel.New(tb, fakemodel.Reply{Text: "ok"})
	defer srv.Close()
	ctxText := ">>> import json\n>>> data = json.load(open('orders.json'))\n>>> len(data)\n1204\n>>> totals = [o['total'] for o in data]\nKeyError: 'total'"
	s := NewConversation(Config{BaseURL: srv.URL, APIKey: testKey, Model: "gpt-4o"}, tools, func() string { return ctxText })
	if err := s.Handle(context.Background(), "why did my list comprehension fail?", io.Discard); err != nil {
		tb.Fatal(err)
	}
	return srv.Requests()[0].Body
}

// BenchmarkFirstRequestSize reports the size of the first request of a
// simple question (system prompt, seven tool schemas, automatic context).
func BenchmarkFirstRequestSize(b *testing.B) {
	var body []byte
	for i := 0; i < b.N; i++ {
		body = firstRequest(b, benchTools())
	}
	b.ReportMetric(float64(len(body)), "bytes")
	b.ReportMetric(float64(estimateTokens(len(body))), "est-tokens")
}

// benchTools offer the real capabilities' descriptions and schemas.
func benchTools() Toolset { return &fakeTools{} }

func TestFirstRequestWithinTokenBudget(t *testing.T) {
	body := firstRequest(t, benchTools())
	if est := estimateTokens(len(body)); est > 1500 {
		t.Errorf("first request is %d bytes, ~%d tokens; the budget is 1,500", len(body), est)
	}
	var req wireReq
	json.Unmarshal(body, &req)
	if len(req.Tools) != 7 || !strings.Contains(req.Messages[0].Content, "KeyError: 'total'") {
		t.Errorf("request lacks the tools or the context")
	}
}
