package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// OutputKind says what one piece of an execution's output is.
type OutputKind int

const (
	// Stream is text the code wrote to stdout or stderr.
	Stream OutputKind = iota
	// Result is the value of the input's last expression (Out[n]).
	Result
	// Display is display_data: output shown by display() and the like.
	Display
	// Error is an exception the input ended with, with its traceback.
	Error
)

// Output is one piece of an execution's output, in the order the kernel
// sent it. Text is the stream's text or the value's text/plain form.
type Output struct {
	Kind      OutputKind
	Name      string // stdout or stderr, for Stream
	Text      string
	Count     int // the execution count, for Result
	EName     string
	EValue    string
	Traceback []string
}

// ExecuteOptions are execute_request's switches.
type ExecuteOptions struct {
	// Silent runs without output, history or a new execution count.
	Silent bool
	// StoreHistory records the input in the kernel's history (In/Out).
	StoreHistory bool
}

// Reply is the execute_reply.
type Reply struct {
	Status         string `json:"status"` // ok, error or aborted
	ExecutionCount int    `json:"execution_count"`
	EName          string `json:"ename"`
	EValue         string `json:"evalue"`
	// Payload asks the client for actions; IPython's exit and quit ask it
	// to leave with {"source": "ask_exit"} (keepkernel: leave the kernel
	// running even when the client owns it).
	Payload []struct {
		Source     string `json:"source"`
		KeepKernel bool   `json:"keepkernel"`
	} `json:"payload"`
}

// AsksExit says whether the input asked the client to leave (IPython's
// exit or quit), and whether to keep the kernel running then.
func (r Reply) AsksExit() (exit, keepKernel bool) {
	for _, p := range r.Payload {
		if p.Source == "ask_exit" {
			return true, p.KeepKernel
		}
	}
	return false, false
}

// Execute runs code in the kernel and passes each output to out as it
// comes. It returns once the kernel has replied and gone idle, so every
// output of the input has been passed on; when ctx ends first it returns
// ctx's error and the code may still be running (Interrupt stops it).
func (c *Client) Execute(ctx context.Context, code string, opts ExecuteOptions, out func(Output)) (Reply, error) {
	c.shellMu.Lock()
	defer c.shellMu.Unlock()
	// stop_on_error would make the kernel abort requests arriving just
	// after an error, and this client sends one request at a time anyway.
	h, err := c.send(c.shell, "execute_request", map[string]any{
		"code": code, "silent": opts.Silent, "store_history": opts.StoreHistory,
		"user_expressions": map[string]any{}, "allow_stdin": false, "stop_on_error": false,
	})
	if err != nil {
		return Reply{}, err
	}
	var reply Reply
	replied, idle := false, false
	for !replied || !idle {
		select {
		case <-ctx.Done():
			return reply, fmt.Errorf("kernel execute: %w", ctx.Err())
		case m, ok := <-c.shellIn:
			if !ok {
				return reply, fmt.Errorf("kernel execute: shell channel closed")
			}
			if m.Parent.MsgID == h.MsgID {
				if err := json.Unmarshal(m.Content, &reply); err != nil {
					return reply, fmt.Errorf("kernel execute_reply: %w", err)
				}
				replied = true
			}
		case m, ok := <-c.iopubIn:
			if !ok {
				return reply, fmt.Errorf("kernel execute: iopub channel closed")
			}
			if m.Parent.MsgID == h.MsgID {
				idle = deliver(m, out)
			}
		}
	}
	return reply, nil
}

// deliver passes an iopub message of the execution on to out and says
// whether it was the kernel going idle, the end of the execution.
func deliver(m message, out func(Output)) (idle bool) {
	var content struct {
		ExecutionState string         `json:"execution_state"`
		Name           string         `json:"name"`
		Text           string         `json:"text"`
		Data           map[string]any `json:"data"`
		ExecutionCount int            `json:"execution_count"`
		EName          string         `json:"ename"`
		EValue         string         `json:"evalue"`
		Traceback      []string       `json:"traceback"`
	}
	if json.Unmarshal(m.Content, &content) != nil {
		return false
	}
	plain, _ := content.Data["text/plain"].(string)
	switch m.Header.MsgType {
	case "status":
		return content.ExecutionState == "idle"
	case "stream":
		out(Output{Kind: Stream, Name: content.Name, Text: content.Text})
	case "execute_result":
		out(Output{Kind: Result, Text: plain, Count: content.ExecutionCount})
	case "display_data", "update_display_data":
		out(Output{Kind: Display, Text: plain})
	case "error":
		out(Output{Kind: Error, EName: content.EName, EValue: content.EValue, Traceback: content.Traceback})
	}
	return false
}

// Evaluate evaluates expressions in the kernel's namespace without a new
// execution count, output or history (execute_request's
// user_expressions, with silent code), and returns each one's text/plain
// value; one that raised is left out.
func (c *Client) Evaluate(ctx context.Context, exprs map[string]string) (map[string]string, error) {
	values, _, err := c.evaluate(ctx, "", exprs)
	return values, err
}

// EvaluateAfter runs code silently, then evaluates expr as Evaluate does
// and returns its text/plain value; an exception from either is an
// error naming it.
func (c *Client) EvaluateAfter(ctx context.Context, code, expr string) (string, error) {
	values, failed, err := c.evaluate(ctx, code, map[string]string{"value": expr})
	switch {
	case err != nil:
		return "", err
	case failed != "":
		return "", errors.New(failed)
	}
	return values["value"], nil
}

// evaluate is Evaluate after code; failed says why the code or an
// expression raised, "" when none did.
func (c *Client) evaluate(ctx context.Context, code string, exprs map[string]string) (values map[string]string, failed string, err error) {
	c.shellMu.Lock()
	defer c.shellMu.Unlock()
	type result struct {
		Status string            `json:"status"`
		Data   map[string]string `json:"data"`
		EName  string            `json:"ename"`
		EValue string            `json:"evalue"`
	}
	var reply struct {
		result
		UserExpressions map[string]result `json:"user_expressions"`
	}
	err = c.request(ctx, c.shell, c.shellIn, "execute_request", map[string]any{
		"code": code, "silent": true, "store_history": false,
		"user_expressions": exprs, "allow_stdin": false, "stop_on_error": false,
	}, &reply)
	if err != nil {
		return nil, "", err
	}
	if reply.Status == "error" {
		return nil, reply.EName + ": " + reply.EValue, nil
	}
	values = make(map[string]string, len(reply.UserExpressions))
	for name, v := range reply.UserExpressions {
		if v.Status == "ok" {
			values[name] = v.Data["text/plain"]
		} else if failed == "" {
			failed = v.EName + ": " + v.EValue
		}
	}
	return values, failed, nil
}
