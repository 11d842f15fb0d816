package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/capabilities"
	"github.com/pyaichat/pyaichat/pybridge/kernel"
)

// BenchmarkKernelCapability times one capability call on an ipykernel
// holding a pandas DataFrame, as ai> makes it: get_type (the helper step
// alone, one copy of the kernel process) and eval_expr (the helper step,
// then the expression in a second copy), beside the kernel's bare cost
// of one silent request (docs/kernels.md).
//
//	go test ./cmd/pyaichat -run '^$' -bench KernelCapability
func BenchmarkKernelCapability(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "kernel-bench.json")
	cmd := exec.Command("/usr/bin/python3", "-m", "ipykernel_launcher", "-f", file)
	cmd.Env = append(os.Environ(), "IPYTHONDIR="+filepath.Join(dir, "ipython"))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var info kernel.ConnectionInfo
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if info, err = kernel.ReadConnectionFile(file); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("no connection file: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := kernel.Dial(ctx, info)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	if _, err := client.Execute(ctx, "import pandas as pd\nprices = pd.DataFrame({'p': range(1000)})", kernel.ExecuteOptions{}, func(kernel.Output) {}); err != nil {
		b.Fatal(err)
	}
	// The kernel's own cost of a silent request with one user expression,
	// which every call pays before any copy is forked.
	b.Run("silent_expression", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := client.Evaluate(ctx, map[string]string{"v": "None"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	reg := capabilities.New(&kernelCaps{client: client}, capabilities.Options{})
	for _, c := range []struct{ name, args string }{{"get_type", `{"expr": "prices"}`}, {"eval_expr", `{"expr": "prices.p.sum()"}`}} {
		b.Run(c.name, func(b *testing.B) {
			if _, cerr := reg.Call(ctx, c.name, json.RawMessage(c.args)); cerr != nil {
				b.Fatalf("%s: %v", c.name, cerr)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, cerr := reg.Call(ctx, c.name, json.RawMessage(c.args)); cerr != nil {
					b.Fatalf("%s: %v", c.name, cerr)
				}
			}
		})
	}
}
