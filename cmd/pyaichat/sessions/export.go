package sessions

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Export writes a session to path in the format its extension names:
// .ipynb (a Jupyter notebook, nbformat 4.5), .py (a Python script, the
// conversation as comments) or .md (Markdown). The file is 0600, as the
// logs are: it holds what the session did.
func Export(recs []Record, path string) error {
	var data []byte
	var err error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".ipynb":
		data, err = notebook(recs)
	case ".py":
		data = []byte(script(recs))
	case ".md":
		data = []byte(markdownDoc(recs))
	default:
		return fmt.Errorf("cannot export to %q: the name must end in .ipynb, .py or .md", path)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// part is one piece of a session in the order it happened: a py> input
// or an exchange with the assistant.
type part struct {
	src, status, exc string // py>
	question, answer string
	calls            []string // "name args"
	problem          string   // error or cancellation of a question
}

func parts(recs []Record) []part {
	var ps []part
	q := -1
	for _, r := range recs {
		switch r.Ev {
		case "py":
			ps = append(ps, part{src: r.Src, status: r.Status, exc: r.Exc})
		case "question":
			ps = append(ps, part{question: r.Text})
			q = len(ps) - 1
		case "tool_call":
			if q >= 0 {
				ps[q].calls = append(ps[q].calls, r.Tool+" "+oneLine(r.Args))
			}
		case "answer":
			if q >= 0 {
				ps[q].answer = r.Text
			}
		case "error":
			if q >= 0 {
				ps[q].problem = "error: " + r.Text
			}
		case "cancelled":
			if q >= 0 {
				ps[q].problem = "cancelled"
			}
		}
	}
	return ps
}

// answerMarkdown is the assistant's side of an exchange as Markdown.
func (p part) answerMarkdown() string {
	var b strings.Builder
	if len(p.calls) > 0 {
		b.WriteString("*Tool calls:* ")
		for i, c := range p.calls {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("`" + strings.ReplaceAll(c, "`", "'") + "`")
		}
		b.WriteString("\n\n")
	}
	b.WriteString(strings.TrimRight(p.answer, "\n"))
	if p.problem != "" {
		b.WriteString("\n\n*(" + p.problem + ")*")
	}
	return strings.TrimSpace(b.String())
}

// sourceLines splits text as notebooks keep it: lines with their newlines.
func sourceLines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if lines == nil {
		lines = []string{}
	}
	return lines
}

// notebook is nbformat 4.5: code cells for py> inputs (no outputs: the log
// does not keep Python's output; a failed input says how in the cell's
// metadata), markdown cells for questions and answers.
func notebook(recs []Record) ([]byte, error) {
	cells := []map[string]any{}
	add := func(kind, text string, meta map[string]any) {
		if meta == nil {
			meta = map[string]any{}
		}
		c := map[string]any{"cell_type": kind, "id": fmt.Sprintf("cell-%d", len(cells)+1), "metadata": meta, "source": sourceLines(text)}
		if kind == "code" {
			// Required, and null: the cell was not run in Jupyter.
			c["execution_count"] = nil
			c["outputs"] = []any{}
		}
		cells = append(cells, c)
	}
	for _, p := range parts(recs) {
		if p.question == "" {
			var meta map[string]any
			if p.status != "ok" {
				meta = map[string]any{"pyaichat": map[string]string{"status": p.status, "exception": p.exc}}
			}
			add("code", p.src, meta)
			continue
		}
		add("markdown", "**ai>** "+p.question, nil)
		if a := p.answerMarkdown(); a != "" {
			add("markdown", a, nil)
		}
	}
	nb := map[string]any{
		"nbformat": 4, "nbformat_minor": 5,
		"metadata": map[string]any{
			"kernelspec":    map[string]string{"name": "python3", "display_name": "Python 3", "language": "python"},
			"language_info": map[string]string{"name": "python"},
		},
		"cells": cells,
	}
	data, err := json.MarshalIndent(nb, "", " ")
	return append(data, '\n'), err
}

// script is the session as a Python script: the inputs that ran, those
// that failed commented out, and the conversation as comments.
func script(recs []Record) string {
	var b strings.Builder
	b.WriteString("# A pyaichat session.\n\n")
	for _, p := range parts(recs) {
		switch {
		case p.question != "":
			b.WriteString(commented("ai> "+p.question) + "\n")
			b.WriteString(commented(p.answerMarkdown()) + "\n\n")
		case p.status == "ok":
			b.WriteString(p.src + "\n\n")
		default:
			what := "raised " + p.exc
			if p.status == "exit" {
				what = "exited"
			}
			b.WriteString(commented(p.src) + "\n# (" + what + ")\n\n")
		}
	}
	return b.String()
}

func commented(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("# "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// markdownDoc is the session as Markdown: inputs in python blocks,
// questions quoted, answers as the model wrote them.
func markdownDoc(recs []Record) string {
	var b strings.Builder
	b.WriteString("# pyaichat session\n\n")
	for _, p := range parts(recs) {
		if p.question != "" {
			b.WriteString("> **ai>** " + strings.ReplaceAll(strings.TrimRight(p.question, "\n"), "\n", "\n> ") + "\n\n")
			b.WriteString(p.answerMarkdown() + "\n\n")
			continue
		}
		fence := "```"
		for strings.Contains(p.src, fence) {
			fence += "`"
		}
		b.WriteString(fence + "python\n" + p.src + "\n" + fence + "\n")
		if p.status == "error" {
			b.WriteString("\n*raised " + p.exc + "*\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}
