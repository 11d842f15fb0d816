package kernel

import (
	"context"
	"encoding/json"
	"fmt"
)

// HistoryEntry is one input of the kernel's history, with its output's
// text/plain form when the kernel keeps outputs (IPython does only with
// HistoryManager.db_log_output set; by default Output is empty).
type HistoryEntry struct {
	Session int
	Line    int
	Input   string
	Output  string
}

// History is the kernel's last n inputs, oldest first: what the user
// ran there from any client (a notebook's cells too), for the assistant's
// automatic context as a local session's own history is.
func (c *Client) History(ctx context.Context, n int) ([]HistoryEntry, error) {
	c.shellMu.Lock()
	defer c.shellMu.Unlock()
	var reply struct {
		Status  string            `json:"status"`
		History []json.RawMessage `json:"history"`
	}
	err := c.request(ctx, c.shell, c.shellIn, "history_request", map[string]any{
		"output": true, "raw": true, "hist_access_type": "tail", "n": n,
	}, &reply)
	if err != nil {
		return nil, err
	}
	entries := make([]HistoryEntry, 0, len(reply.History))
	for _, raw := range reply.History {
		entry, err := decodeHistoryEntry(raw)
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry)
	}
	return entries, nil
}

// decodeHistoryEntry reads [session, line, [input, output]], the form the
// protocol gives entries when output is asked for; output is null for an
// input that had none.
func decodeHistoryEntry(raw json.RawMessage) (HistoryEntry, error) {
	var triple []json.RawMessage
	if err := json.Unmarshal(raw, &triple); err != nil || len(triple) != 3 {
		return HistoryEntry{}, fmt.Errorf("kernel history entry %s: not [session, line, entry]", raw)
	}
	var e HistoryEntry
	var pair []*string
	if json.Unmarshal(triple[0], &e.Session) != nil || json.Unmarshal(triple[1], &e.Line) != nil ||
		json.Unmarshal(triple[2], &pair) != nil || len(pair) != 2 || pair[0] == nil {
		return HistoryEntry{}, fmt.Errorf("kernel history entry %s: not [session, line, [input, output]]", raw)
	}
	e.Input = *pair[0]
	if pair[1] != nil {
		e.Output = *pair[1]
	}
	return e, nil
}
