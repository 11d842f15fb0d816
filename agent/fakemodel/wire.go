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
	e := &events{w: w, r: r, reply: reply}
	e.send(chunk(`{"role":"assistant","content":""}`, ""))
	if !e.pieces("reasoning_content", words(reply.Thinking)) || !e.pieces("content", reply.pieces()) {
		return
	}
	for i, c := range reply.Calls {
		e.call(i, c)
	}
	e.end()
}

// events writes one reply's server-sent events.
type events struct {
	w     http.ResponseWriter
	r     *http.Request
	reply Reply
	sent  int // pieces sent, for Reply.Pause
}

func (e *events) send(data string) {
	fmt.Fprintf(e.w, "data: %s\n\n", data)
	e.w.(http.Flusher).Flush()
}

// pieces sends each piece as a delta of field; it returns false when the
// stream ends at the pause point.
func (e *events) pieces(field string, pieces []string) bool {
	for _, p := range pieces {
		e.send(chunk(`{"`+field+`":`+quote(p)+`}`, ""))
		if e.pause() {
			return false
		}
	}
	return true
}

// pause counts a piece sent and reports whether the stream ends at the
// pause point.
func (e *events) pause() bool {
	e.sent++
	if e.reply.Pause <= 0 || e.sent != e.reply.Pause {
		return false
	}
	if e.reply.Drop {
		panic(http.ErrAbortHandler)
	}
	select {
	case <-e.reply.Resume:
		return false
	case <-e.r.Context().Done():
		return true
	}
}

// call sends the i-th tool call as OpenAI does: its name, then its
// arguments in two halves.
func (e *events) call(i int, c Call) {
	half := len(c.Args) / 2
	e.send(chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}]}`, i, quote(e.reply.callID(i)), quote(c.Name)), ""))
	e.send(chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, quote(c.Args[:half])), ""))
	e.send(chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, i, quote(c.Args[half:])), ""))
}

// end sends the error, or the finish reason, the usage and [DONE], as
// the reply asks.
func (e *events) end() {
	reply := e.reply
	if reply.Error != "" {
		e.send(errorBody(reply))
		return // a server that reports an error ends the stream there
	}
	if !reply.NoFinish {
		e.send(chunk(`{}`, reply.finish()))
	}
	if reply.Usage != nil {
		e.send(`{"id":"chatcmpl-fake","object":"chat.completion.chunk","model":"fake","choices":[],"usage":` + reply.Usage.json() + `}`)
	}
	if !reply.NoDone {
		e.send("[DONE]")
	}
}

// words splits text after each space, as a model streams it word by word.
func words(text string) []string {
	var out []string
	for _, w := range strings.SplitAfter(text, " ") {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
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
