package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/capabilities/spec"
)

func testBounds() *bounds {
	return newBounds(Config{MaxSteps: 2, MaxCallsPerStep: 3, ToolResultBytes: 10, QuestionTimeout: time.Minute})
}

// A question goes on until Ctrl-C, its deadline, or a second repeat.
func TestBoundsStop(t *testing.T) {
	b := testBounds()
	ctx, cancel := b.question(context.Background())
	defer cancel()
	if err := b.stop(ctx, ""); err != nil {
		t.Fatalf("a fresh question stops: %v", err)
	}
	if b.repeated("get_type\x00expr=\"x\";") {
		t.Fatal("a first call counts as a repeat")
	}
	if !b.repeated("get_type\x00expr=\"x\";") || b.stop(ctx, "get_type(x)") != nil {
		t.Fatal("one repeat: want it seen, and the question going on")
	}
	if b.repeated("get_type\x00expr=\"y\";") {
		t.Fatal("other arguments count as a repeat")
	}
	b.repeated("get_type\x00expr=\"x\";")
	err := b.stop(ctx, "get_type(x)")
	if !isBound(err) || !strings.Contains(err.Error(), "kept repeating the same call (get_type(x))") {
		t.Fatalf("two repeats: %v", err)
	}

	cancel()
	if err := testBounds().stop(ctx, ""); !errors.Is(err, context.Canceled) || isBound(err) || err.Error() != "question cancelled" {
		t.Errorf("Ctrl-C: %v", err)
	}
}

// The deadline is a bound, told apart from Ctrl-C by its cause.
func TestBoundsDeadline(t *testing.T) {
	b := newBounds(Config{QuestionTimeout: time.Nanosecond})
	ctx, cancel := b.question(context.Background())
	defer cancel()
	<-ctx.Done()
	err := b.stop(ctx, "")
	if !isBound(err) || errors.Is(err, context.Canceled) || err.Error() != "stopped: the question took longer than 1ns" {
		t.Errorf("deadline: %v", err)
	}
}

func TestBoundsSteps(t *testing.T) {
	b := testBounds()
	for step := range 2 {
		if err := b.step(step); err != nil {
			t.Errorf("step %d: %v", step, err)
		}
	}
	if err := b.step(2); !isBound(err) || !strings.Contains(err.Error(), "limit of 2 tool steps") {
		t.Errorf("step 2 of 2: %v", err)
	}
}

// Calls past the step's limit, or after Ctrl-C, are answered, not run.
func TestBoundsCalls(t *testing.T) {
	b := testBounds()
	ctx, cancel := context.WithCancel(context.Background())
	for i := range 3 {
		if res, ok := b.call(ctx, i); !ok || res != "" {
			t.Errorf("call %d: not run (%s)", i, res)
		}
	}
	if res, ok := b.call(ctx, 3); ok || !strings.Contains(res, spec.TooManyCalls) || !strings.Contains(res, "at most 3 calls per step") {
		t.Errorf("call 4 of 3: %v %s", ok, res)
	}
	cancel()
	if res, ok := b.call(ctx, 0); ok || !strings.Contains(res, spec.Canceled) {
		t.Errorf("after Ctrl-C: %v %s", ok, res)
	}
}

// A result is cut at its bound, on a character, and says how big it was.
func TestBoundsResult(t *testing.T) {
	b := testBounds()
	if got := b.result("0123456789"); got != "0123456789" {
		t.Errorf("a result at the bound changed: %q", got)
	}
	got := b.result("012345678é-and-more")
	if want := "012345678\n[truncated: the result was 20 bytes; ask for a narrower expression]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
