//go:build cgo

package pybridge

import (
	"context"
	"fmt"
	"os"
)

// cancelPipe is how a wait that C code or a system call does (poll(2)) sees
// a context end: a pipe whose write end is closed when ctx ends, so its
// read end polls readable (end of file). Nothing has to run on the
// interpreter's thread to tell it.
type cancelPipe struct {
	r, w *os.File
	stop func() bool
}

func newCancelPipe(ctx context.Context) (*cancelPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pybridge: cancel pipe: %w", err)
	}
	c := &cancelPipe{r: r, w: w}
	c.stop = context.AfterFunc(ctx, func() { w.Close() })
	return c, nil
}

// fd is the descriptor to poll.
func (c *cancelPipe) fd() int { return int(c.r.Fd()) }

// close releases the pipe, whether or not ctx ended.
func (c *cancelPipe) close() {
	if c.stop() {
		c.w.Close()
	}
	c.r.Close()
}
