package fakemodel

import (
	"fmt"
	"net/http"
	"strings"
)

// chunk is one chat.completion.chunk with a delta for choice 0.
func chunk(delta, finish string) string {
	fin := "null"
	if finish != "" {
		fin = quote(finish)
	}
	return `{"id":"chatcmpl-fake","object":"chat.completion.chunk","model":"fake","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fin + `}]}`
}

// stream sends reply as server-sent events, flushing each one, so that
// the client sees each piece when it is sent.
func stream(w http.ResponseWriter, r *http.Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(data string) {
		fmt.Fprintf(w, "data: %s\n\n", data)
		w.(http.Flusher).Flush()
	}
	sent := 0
	// pause reports whether the stream ends at the pause point.
	pause := func() bool {
		sent++
		if reply.Pause <= 0 || sent != reply.Pause {
			return false
		}
		if reply.Drop {
			panic(http.ErrAbortHandler)
		}
		select {
		case <-reply.Resume:
			return false
		case <-r.Context().Done():
			return true
		}
	}
	send(chunk(`{"role":"assistant","content":""}`, ""))
	for _, p := range strings.SplitAfter(reply.Thinking, " ") {
		if p == "" {
			continue
		}
		send(chunk(`{"reasoning_content":`+quote(p)+`}`, ""))
		if pause() {
			return
		}
	}
	for _, p := range reply.pieces() {
		send(chunk(`{"content":`+quote(p)+`}`, ""))
		if pause() {
			return
		}
	}
	for i, c := range reply.Calls {
		half := len(c.Args) / 2
		send(chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]}`, i, quote(reply.callID(i)), quote(c.Name)), ""))
		send(chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, quote(c.Args[:half])), ""))
		send(chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, quote(c.Args[half:])), ""))
	}
	if reply.Error != "" {
		send(errorBody(reply))
		return // a server that reports an error ends the stream there
	}
	if !reply.NoFinish {
		send(chunk(`{}`, reply.finish()))
	}
	if reply.Usage != nil {
		send(`{"id":"chatcmpl-fake","object":"chat.completion.chunk","model":"fake","choices":[],"usage":` + reply.Usage.json() + `}`)
	}
	if !reply.NoDone {
		send("[DONE]")
	}
}

// completion is reply as one non-streamed chat.completion.
func completion(reply Reply) string {
	var calls []string
	for i, c := range reply.Calls {
		calls = append(calls, fmt.Sprintf(`{"id":%s,"type":"function","function":{"name":%s,"arguments":%s}}`, quote(reply.callID(i)), quote(c.Name), quote(c.Args)))
	}
	msg := `{"role":"assistant","content":` + quote(strings.Join(reply.pieces(), ""))
	if reply.Thinking != "" {
		msg += `,"reasoning_content":` + quote(reply.Thinking)
	}
	if len(calls) > 0 {
		msg += `,"tool_calls":[` + strings.Join(calls, ",") + `]`
	}
	msg += "}"
	fin := "null"
	if !reply.NoFinish {
		fin = quote(reply.finish())
	}
	body := `{"id":"chatcmpl-fake","object":"chat.completion","model":"fake","choices":[{"index":0,"message":` + msg + `,"finish_reason":` + fin + `}]`
	if reply.Usage != nil {
		body += `,"usage":` + reply.Usage.json()
	}
	if reply.Error != "" {
		body += `,"error":` + strings.TrimSuffix(strings.TrimPrefix(errorBody(reply), `{"error":`), "}")
	}
	return body + "}"
}
