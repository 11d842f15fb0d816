// Package llm is the provider: the client of any OpenAI-compatible
// chat-completions server (OpenAI, Azure OpenAI, OpenRouter, Groq, Gemini's
// and Anthropic's compatibility endpoints, Ollama, llama.cpp, vLLM, LM
// Studio...). It speaks the wire format so that the agent does not: the
// agent hands it Messages and Tools and reads back text deltas and a
// Completion, all types of this package.
//
// One request (Client.Open):
//
//	Messages + Tools -> request.go: the JSON body (go-openai's Tool and
//	  StreamOptions types; our own message type, which keeps Gemini's
//	  extra_content and always sends a tool call's "type")
//	  -> client.go: POST {base}/chat/completions with the key where the
//	     server looks for it (api-key for Azure, Bearer elsewhere);
//	     retries of connection errors that may pass, 408, 409, 429 and
//	     5xx (never 400/401/403/404 or insufficient_quota) with backoff,
//	     jitter and capped Retry-After; a 400 about stream_options drops
//	     them for this client's later requests; HTTP errors become one
//	     line each (wire.go reads every error shape servers use)
//	  -> stream.go: a Stream, read by our SSE reader (sse.go) and folded
//	     by a tolerant accumulator (wire.go) that copes with what real
//	     servers send (testdata/openai-wire holds 26 captured responses
//	     and, in its README, what each must parse to); a plain JSON body
//	     (the server ignored stream:true, or sent an error with status
//	     200) is read too; first-byte and idle timers bound each phase.
//
// Every error and retry notice the Client gives is one line that never
// holds the API key (RedactKey), whatever a server echoed. Client.Models
// is GET {base}/models, for /models and /model.
//
// It needs no cgo and knows nothing of the loop, the terminal or Python.
package llm
