package agent

import (
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
	"github.com/pyaichat/pyaichat/agent/llm"
)

const nginx503 = "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n" +
	"<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n"

// TestServerErrorsAreOneShortLine checks that whatever a server puts in an
// error body (an HTML page, a long multi-line message, a validation list,
// an upstream provider's JSON), the user sees one short line each time it
// is quoted: in each retry notice and in the final error.
func TestServerErrorsAreOneShortLine(t *testing.T) {
	long := "first line\n\n  second line\twith a tab " + strings.Repeat("and more words ", 30)
	cases := []struct {
		name    string
		step    fakemodel.Reply
		retried bool
		want    string
	}{
		{"nginx 503 page", raw(503, "text/html", nginx503), true,
			"503 Service Temporarily Unavailable (HTTP 503 from {url})"},
		{"404 page", raw(404, "text/html; charset=iso-8859-1", "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n</body></html>\n"), false,
			"{url} has no chat completions endpoint (HTTP 404: 404 Not Found); check OPENAI_BASE_URL"},
		{"page without a title", raw(400, "text/html", "<html><body><script>var x = 1;</script><h1>Bad&nbsp;request</h1>\n<p>no   model</p></body></html>"), false,
			"Bad request no model (HTTP 400 from {url})"},
		{"long multi-line JSON message", raw(500, "application/json", `{"error":{"message":`+quoteJSON(long)+`}}`), true,
			"first line second line with a tab and more words and more words"},
		{"FastAPI validation list", raw(422, "application/json", `{"detail":[{"loc":["body","messages",0,"role"],"msg":"field required","type":"value_error.missing"},{"loc":["body","model"],"msg":"str type expected","type":"type_error.str"}]}`), false,
			"body.messages.0.role: field required; body.model: str type expected (HTTP 422 from {url})"},
		{"OpenRouter raw as a JSON string", raw(400, "application/json", `{"error":{"code":400,"message":"Provider returned error","metadata":{"provider_name":"X","raw":"{\n  \"error\": {\n    \"message\": \"Upstream says no\",\n    \"code\": 400\n  }\n}"}}}`), false,
			"Provider returned error: Upstream says no (HTTP 400 from {url})"},
		{"OpenRouter raw as JSON", raw(400, "application/json", `{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":{"type":"error","error":{"type":"invalid_request_error","message":"Upstream says no"}}}}}`), false,
			"Provider returned error: Upstream says no (HTTP 400 from {url})"},
		{"array of numbers", raw(500, "application/json", `[1,2,3]`), true,
			"[1,2,3] (HTTP 500 from {url})"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := askFailing(t, c.want, c.step, c.step, c.step)
			lines := []string{a.err.Error()}
			if notices := strings.TrimSuffix(a.notices, "\n"); notices != "" {
				lines = append(lines, strings.Split(notices, "\n")...)
			}
			if n, want := len(lines)-1, map[bool]int{true: 2, false: 0}[c.retried]; n != want {
				t.Errorf("%d notice lines, want %d: %q", n, want, a.notices)
			}
			for _, ln := range lines {
				if len(ln) > llm.MaxServerText+len(a.server.url())+80 || strings.Contains(ln, "<") {
					t.Errorf("not one short line (%d bytes): %q", len(ln), ln)
				}
			}
		})
	}
}
