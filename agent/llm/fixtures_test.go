package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fixtureDir holds the 26 captured provider responses; its README is the
// oracle this file parses, so the expectations cannot drift from it.
const fixtureDir = "testdata/openai-wire" // responses captured from real providers, kept in the repository

type oracleCall struct {
	Choice    int
	WireIndex *int
	ID        string
	Name      string
	Arguments string
}

type oracle struct {
	File        string
	IDs         []string // every id value listed; the first non-empty is what we keep
	Models      []string
	Content     map[int]string
	Reasoning   map[int]string
	Refusal     map[int]string
	Calls       []oracleCall
	NoCalls     bool
	Finish      map[int]string
	NoFinish    bool
	Usage       json.RawMessage
	NoUsage     bool
	Error       json.RawMessage // error object (stream) or whole body (HTTP error)
	WireEvents  int             // JSON data events (stream files)
	WireDone    bool            // ends with data: [DONE]
	lineMatched int
}

// jsonValues decodes the JSON values written in backticks after marker in
// line, separated by "`, `", stopping at ';' or '('.
func jsonValues(t *testing.T, line, marker string) []json.RawMessage {
	t.Helper()
	i := strings.Index(line, marker)
	if i < 0 {
		return nil
	}
	rest := line[i+len(marker):]
	var out []json.RawMessage
	for {
		rest = strings.TrimLeft(rest, " :`,")
		if rest == "" || strings.ContainsRune(";(", rune(rest[0])) {
			return out
		}
		dec := json.NewDecoder(strings.NewReader(rest))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		out = append(out, v)
		rest = rest[dec.InputOffset():]
	}
}

func jsonString(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if string(raw) == "null" {
		return ""
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("oracle value %s is not a string: %v", raw, err)
	}
	return s
}

var httpErrRe = regexp.MustCompile(`-error-(\d{3})-`)

var choiceRe = regexp.MustCompile(`^- Choice (\d+) `)

func parseOracle(t *testing.T) []*oracle {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(fixtureDir, "README.md"))
	if err != nil {
		t.Fatalf("the fixture oracle must be present: %v", err)
	}
	var all []*oracle
	var cur *oracle
	inFiles := false
	for _, line := range strings.Split(string(readme), "\n") {
		if line == "## Files" {
			inFiles = true
			continue
		}
		if !inFiles {
			continue
		}
		if name, ok := strings.CutPrefix(line, "### "); ok {
			cur = &oracle{File: name, Content: map[int]string{}, Reasoning: map[int]string{},
				Refusal: map[int]string{}, Finish: map[int]string{}}
			all = append(all, cur)
			continue
		}
		if cur == nil {
			continue
		}
		first := func(marker string) json.RawMessage {
			if v := jsonValues(t, line, marker); len(v) > 0 {
				return v[0]
			}
			t.Fatalf("%s: no value after %q in %q", cur.File, marker, line)
			return nil
		}
		choice := -1
		if m := choiceRe.FindStringSubmatch(line); m != nil {
			choice, _ = strconv.Atoi(m[1])
		}
		matched := true
		switch {
		case strings.HasPrefix(line, "- Wire: "):
			n, _ := strconv.Atoi(strings.Fields(line)[2])
			cur.WireEvents = n
			cur.WireDone = strings.Contains(line, "then `data: [DONE]`")
		case strings.HasPrefix(line, "- `id`"):
			for _, v := range jsonValues(t, line, "`id`") {
				cur.IDs = append(cur.IDs, jsonString(t, v))
			}
			for _, v := range jsonValues(t, line, "`model`") {
				cur.Models = append(cur.Models, jsonString(t, v))
			}
		case choice >= 0 && strings.Contains(line, " content (concatenated"):
			cur.Content[choice] = jsonString(t, first("strings):"))
		case choice >= 0 && strings.Contains(line, "`delta.reasoning` concatenated"),
			choice >= 0 && strings.Contains(line, "`delta.reasoning_content` concatenated"):
			cur.Reasoning[choice] = jsonString(t, first("concatenated:"))
		case choice >= 0 && strings.Contains(line, " thinking (from"):
			cur.Reasoning[choice] = jsonString(t, first("`):"))
		case choice >= 0 && strings.Contains(line, "`delta.refusal` concatenated"):
			cur.Refusal[choice] = jsonString(t, first("concatenated:"))
		case choice >= 0 && strings.Contains(line, "finish_reason"):
			// "Choice 0 finish_reason: `"length"` (event #1), ..." or the
			// non-stream "Choice 0 finish_reason `"tool_calls"`; message.content ...".
			cur.Finish[choice] = jsonString(t, first("finish_reason"))
			if v := jsonValues(t, line, "message.content"); len(v) > 0 && string(v[0]) != "null" {
				cur.Content[choice] = jsonString(t, v[0])
			}
		case strings.HasPrefix(line, "- finish_reason: never set"):
			cur.NoFinish = true
		case strings.HasPrefix(line, "- message.reasoning:"):
			cur.Reasoning[0] = jsonString(t, first("message.reasoning:"))
		case strings.HasPrefix(line, "- Tool calls: none"):
			cur.NoCalls = true
		case strings.HasPrefix(line, "  - choice "), strings.HasPrefix(line, "  - tool call:"):
			var c oracleCall
			if strings.HasPrefix(line, "  - choice ") {
				c.Choice, _ = strconv.Atoi(strings.TrimSuffix(strings.Fields(line)[2], ","))
			}
			if !strings.Contains(line, "wire index (key absent)") {
				if v := jsonValues(t, line, "index `"); len(v) > 0 {
					n, err := strconv.Atoi(string(v[0]))
					if err != nil {
						t.Fatalf("%s: index %s", cur.File, v[0])
					}
					c.WireIndex = &n
				}
			}
			rest := line[strings.Index(line, "id `"):]
			c.ID = jsonString(t, first("id `"))
			rest = rest[strings.Index(rest, "name `"):]
			c.Name = jsonString(t, jsonValues(t, rest, "name `")[0])
			c.Arguments = jsonString(t, jsonValues(t, rest, "arguments `")[0])
			cur.Calls = append(cur.Calls, c)
		case strings.HasPrefix(line, "- `usage`: none"):
			cur.NoUsage = true
		case strings.HasPrefix(line, "- `usage`"):
			cur.Usage = first(": `")
		case strings.HasPrefix(line, "- `error` object"):
			cur.Error = first(": `")
		case strings.HasPrefix(line, "- Body:"):
			cur.Error = first("Body:")
		default:
			matched = false
		}
		if matched {
			cur.lineMatched++
		}
	}
	return all
}

// serveFixture serves one file as the README says: *.sse as an HTTP-200
// event stream, *-error-<status>-*.json with that status, other JSON as 200.
func serveFixture(t *testing.T, name string) *httptest.Server {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	status, ctype := 200, "application/json"
	if strings.HasSuffix(name, ".sse") {
		ctype = "text/event-stream"
	} else if m := httpErrRe.FindStringSubmatch(name); m != nil {
		status, _ = strconv.Atoi(m[1])
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func compactJSON(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	return b.String()
}

func TestFixturesParseToOracle(t *testing.T) {
	oracles := parseOracle(t)
	if len(oracles) != 26 {
		t.Fatalf("the README lists %d fixtures, want 26", len(oracles))
	}
	for _, o := range oracles {
		t.Run(o.File, func(t *testing.T) {
			isErr := httpErrRe.MatchString(o.File)
			if o.lineMatched < 2 && !(isErr && o.Error != nil) {
				t.Fatalf("oracle for %s parsed to almost nothing (%d lines)", o.File, o.lineMatched)
			}
			srv := serveFixture(t, o.File)
			c := New(Options{BaseURL: srv.URL + "/v1", APIKey: "sk-fixture", Limits: Limits{MaxRetries: -1}})
			s, err := c.Open(context.Background(), "m", []Message{{Role: "user", Content: "hi"}}, Tools{}, func(string) {})
			if isErr {
				checkHTTPError(t, o, err)
				return
			}
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			defer s.Close()
			streamed := map[int]*strings.Builder{}
			for s.Next() {
				kind, ch, text := s.Current()
				if kind == DeltaContent {
					if streamed[ch] == nil {
						streamed[ch] = &strings.Builder{}
					}
					streamed[ch].WriteString(text)
				}
			}
			res := s.Result()
			checkCompletion(t, o, res, s.Err())
			for ch, b := range streamed {
				if got := res.Choices[ch].Content; b.String() != got {
					t.Errorf("choice %d: streamed %q but result says %q", ch, b.String(), got)
				}
			}
			if strings.HasSuffix(o.File, ".sse") {
				checkWireEvents(t, o)
			}
		})
	}
}

func checkWireEvents(t *testing.T, o *oracle) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtureDir, o.File))
	if err != nil {
		t.Fatal(err)
	}
	r := newSSEReader(bytes.NewReader(raw))
	n, done := 0, false
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Data == "[DONE]" {
			done = true
			continue
		}
		n++
	}
	if n != o.WireEvents || done != o.WireDone {
		t.Errorf("SSE reader saw %d JSON events (done=%v), oracle says %d (done=%v)", n, done, o.WireEvents, o.WireDone)
	}
}

func checkCompletion(t *testing.T, o *oracle, res *Completion, streamErr error) {
	t.Helper()
	firstNonEmptyOf := func(vs []string) string {
		for _, v := range vs {
			if v != "" {
				return v
			}
		}
		return ""
	}
	if want := firstNonEmptyOf(o.IDs); res.ID != want {
		t.Errorf("id %q, want %q", res.ID, want)
	}
	if want := firstNonEmptyOf(o.Models); res.Model != want {
		t.Errorf("model %q, want %q", res.Model, want)
	}
	byIndex := map[int]Choice{}
	for _, ch := range res.Choices {
		byIndex[ch.Index] = ch
	}
	for i, want := range o.Content {
		if got := byIndex[i].Content; got != want {
			t.Errorf("choice %d content %q, want %q", i, got, want)
		}
	}
	for i, want := range o.Reasoning {
		if got := byIndex[i].Reasoning; got != want {
			t.Errorf("choice %d reasoning %q, want %q", i, got, want)
		}
	}
	for i, want := range o.Refusal {
		if got := byIndex[i].Refusal; got != want {
			t.Errorf("choice %d refusal %q, want %q", i, got, want)
		}
	}
	// Content not named in the oracle must be empty (e.g. no reasoning leaking into text).
	for i, ch := range byIndex {
		if _, ok := o.Content[i]; !ok && ch.Content != "" {
			t.Errorf("choice %d has unexpected content %q", i, ch.Content)
		}
		if _, ok := o.Reasoning[i]; !ok && ch.Reasoning != "" {
			t.Errorf("choice %d has unexpected reasoning %q", i, ch.Reasoning)
		}
		if _, ok := o.Refusal[i]; !ok && ch.Refusal != "" {
			t.Errorf("choice %d has unexpected refusal %q", i, ch.Refusal)
		}
	}
	for i, want := range o.Finish {
		if got := byIndex[i].FinishReason; got != want {
			t.Errorf("choice %d finish_reason %q, want %q", i, got, want)
		}
	}
	if o.NoFinish {
		for i, ch := range byIndex {
			if ch.FinishReason != "" {
				t.Errorf("choice %d finish_reason %q, want none", i, ch.FinishReason)
			}
		}
	}
	var got []ToolCall
	for _, ch := range res.Choices {
		got = append(got, ch.ToolCalls...)
	}
	if o.NoCalls && len(got) != 0 {
		t.Errorf("tool calls %+v, want none", got)
	}
	if len(o.Calls) != len(got) && !o.NoCalls {
		t.Fatalf("%d tool calls, want %d: %+v", len(got), len(o.Calls), got)
	}
	seen := map[string]bool{}
	for i, want := range o.Calls {
		g := got[i]
		if want.ID == "" {
			if g.ID == "" || seen[g.ID] {
				t.Errorf("call %d: empty wire id must be replaced by a unique one, got %q", i, g.ID)
			}
		} else if g.ID != want.ID {
			t.Errorf("call %d id %q, want %q", i, g.ID, want.ID)
		}
		seen[g.ID] = true
		if g.Name != want.Name || g.Arguments != want.Arguments || g.Type != "function" {
			t.Errorf("call %d = %s(%s) type %q, want %s(%s) type function", i, g.Name, g.Arguments, g.Type, want.Name, want.Arguments)
		}
		if (want.WireIndex == nil) != (g.WireIndex == nil) || (want.WireIndex != nil && *want.WireIndex != *g.WireIndex) {
			t.Errorf("call %d wire index %v, want %v", i, g.WireIndex, want.WireIndex)
		}
	}
	switch {
	case o.Usage != nil:
		if res.Usage == nil {
			t.Fatalf("no usage, want %s", o.Usage)
		}
		if compactJSON(t, res.Usage.Raw) != compactJSON(t, o.Usage) {
			t.Errorf("usage %s, want %s", res.Usage.Raw, o.Usage)
		}
		var u struct{ P, C, T int }
		json.Unmarshal(o.Usage, &struct {
			P *int `json:"prompt_tokens"`
			C *int `json:"completion_tokens"`
			T *int `json:"total_tokens"`
		}{&u.P, &u.C, &u.T})
		if res.Usage.PromptTokens != u.P || res.Usage.CompletionTokens != u.C || res.Usage.TotalTokens != u.T {
			t.Errorf("usage counts %+v, want %+v", res.Usage, u)
		}
	case o.NoUsage && res.Usage != nil:
		t.Errorf("usage %s, want none", res.Usage.Raw)
	}
	if o.Error == nil {
		if streamErr != nil || res.Err != nil {
			t.Errorf("unexpected error: %v / %v", streamErr, res.Err)
		}
		return
	}
	var want struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	}
	json.Unmarshal(o.Error, &want)
	if res.Err == nil || streamErr == nil {
		t.Fatalf("the stream's error was lost (want %s)", o.Error)
	}
	if res.Err.Message != want.Message || res.Err.Type != want.Type || res.Err.Code != codeText(want.Code) {
		t.Errorf("error %+v, want %s", res.Err, o.Error)
	}
	if !strings.Contains(streamErr.Error(), want.Message) {
		t.Errorf("error line %q lacks the server's message %q", streamErr, want.Message)
	}
}

func codeText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case float64:
		return strconv.FormatFloat(c, 'f', -1, 64)
	}
	return ""
}

func checkHTTPError(t *testing.T, o *oracle, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("an HTTP error body gave no error")
	}
	var body struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if e := json.Unmarshal(o.Error, &body); e != nil {
		t.Fatal(e)
	}
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v carries no APIError", err)
	}
	status, _ := strconv.Atoi(httpErrRe.FindStringSubmatch(o.File)[1])
	want := body.Error
	if ae.HTTPStatus != status || ae.Message != want.Message || ae.Type != want.Type || ae.Code != codeText(want.Code) {
		t.Errorf("APIError %+v, want status %d %+v", ae, status, want)
	}
	if strings.Contains(err.Error(), "sk-fixture") {
		t.Errorf("error shows the key: %v", err)
	}
}
