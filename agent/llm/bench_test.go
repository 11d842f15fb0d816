package llm

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParseDeepSeekFixture measures the SSE reader and accumulator on
// a 17 KB captured stream (52 events).
func BenchmarkParseDeepSeekFixture(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(fixtureDir, "deepseek-stream-reasoning-then-tool-call.sse"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r := newSSEReader(bytes.NewReader(data))
		acc := newAccumulator(func() string { return "id" })
		var ds []delta
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			if ev.Data == "[DONE]" {
				break
			}
			ds, _ = acc.addChunk(ev.Name, []byte(ev.Data), ds[:0])
		}
		if c := acc.finish(); len(c.Choices[0].ToolCalls) != 1 {
			b.Fatal("parse failed")
		}
	}
}
