package term

import (
	"context"
	"errors"
	"io"

	"golang.org/x/sys/unix"
)

// AskYesNo writes question to out and reads one key from the terminal: y
// or Y is yes, any other key (Enter too) no; the answer is echoed as y or
// n, ending the line. It is for a question asked while no prompt is up
// (during an answer at ai>, when nothing else reads the terminal).
// Cancelling ctx (Ctrl-C, which still comes as a signal) ends the wait
// with ctx's error, the line left for the caller to end.
func (t *Terminal) AskYesNo(ctx context.Context, out io.Writer, question string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	// The mode changes before the question shows: it drops what was typed
	// before, and a key typed once the question shows must not be dropped
	// with it.
	restore, err := t.keyMode()
	if err != nil {
		return false, err
	}
	defer restore()
	io.WriteString(out, question)
	key, err := t.readKey(ctx)
	if err != nil {
		if ctx.Err() == nil {
			io.WriteString(out, "\n")
		}
		return false, err
	}
	yes := key == 'y' || key == 'Y'
	answer := "n\n"
	if yes {
		answer = "y\n"
	}
	io.WriteString(out, answer)
	return yes, nil
}

// keyMode sets the terminal to read single keys: its mode but for line
// editing and echo, which are off until restore. Signals stay on, so
// Ctrl-C cancels the question as it does during an answer. Input typed
// before is dropped: a key typed ahead is no answer to a question not yet
// asked.
func (t *Terminal) keyMode() (restore func(), err error) {
	saved, err := unix.IoctlGetTermios(t.fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	key := *saved
	key.Lflag &^= unix.ICANON | unix.ECHO | unix.ECHONL
	key.Cc[unix.VMIN], key.Cc[unix.VTIME] = 1, 0
	// TCSETSF (TIOCSETAF on BSD) discards the pending input as it sets the mode.
	if err := unix.IoctlSetTermios(t.fd, ioctlSetTermiosFlush, &key); err != nil {
		return nil, err
	}
	return func() { unix.IoctlSetTermios(t.fd, ioctlSetTermios, saved) }, nil
}

// readKey reads one key press, in keyMode, until ctx is cancelled. The
// rest of a key that sends several bytes (an arrow's escape sequence, a
// UTF-8 character) is dropped: it would reach the next prompt as text.
func (t *Terminal) readKey(ctx context.Context) (byte, error) {
	woke := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		t.tty.wake()
		close(woke)
	})
	b, err := t.readByteUntil(ctx)
	if !stop() {
		// The wake-up was sent; take it if the read did not, so that it
		// does not end the next prompt's read.
		<-woke
		t.tty.woken()
	}
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if err != nil {
		return 0, err
	}
	for {
		if _, ok := t.tty.readyByte(); !ok {
			break
		}
	}
	return b, nil
}

// readByteUntil reads a byte, going on after a wake-up meant for someone
// else (the line editor's reader, stopped as its prompt went) until ctx
// is cancelled.
func (t *Terminal) readByteUntil(ctx context.Context) (byte, error) {
	for {
		b, _, err := t.tty.readByteAwaiting(nil, nil, nil)
		if errors.Is(err, errWoken) && ctx.Err() == nil {
			continue
		}
		return b, err
	}
}
