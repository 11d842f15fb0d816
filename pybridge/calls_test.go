//go:build cgo

package pybridge

import (
	"context"
	"time"
)

// Shorthands for the tests' calls into testInterp.

func helperCall(module, fn, arg string) (string, error) {
	return testInterp.Call(context.Background(), CallHelper, module, fn, arg)
}

// isolatedCall is an isolated call with timeout as its deadline.
func isolatedCall(module, fn, arg string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return testInterp.Call(ctx, CallIsolated, module, fn, arg)
}

func readOnlyCall(module, fn, arg string) (string, error) {
	return testInterp.Call(context.Background(), CallReadOnly, module, fn, arg)
}
