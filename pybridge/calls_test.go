//go:build cgo

package pybridge

import (
	"context"
	"time"
)

// Shorthands for the tests, which have no context to pass.

func (in *Interp) CallIsolated(module, fn, arg string, timeout time.Duration) (string, error) {
	return in.CallIsolatedContext(context.Background(), module, fn, arg, timeout)
}

func (in *Interp) CallReadOnly(module, fn, arg string) (string, error) {
	return in.CallReadOnlyContext(context.Background(), module, fn, arg)
}

func (in *Interp) Do(fn func()) error { return in.job(fn) }
