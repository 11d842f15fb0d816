package sessionlog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyaichat/pyaichat/repl/prompt"
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
	return writeNew(path, data)
}

// writeNew puts data at path as a new 0600 file: written to a temporary
// file beside it, then renamed over it. A symlink at path is replaced,
// never followed (it could point at a file of someone else's choosing),
// and an existing file's looser mode is not kept.
func writeNew(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
	}
	return werr
}

// part is one piece of a session in the order it happened: a py> input
// or an exchange with the assistant.
type part struct {
	src, status, exc string // py>
	output           []Output
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
			ps = append(ps, part{src: r.Src, status: r.Status, exc: r.Exc, output: r.Output})
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

// cellOutputs is a code cell's outputs in nbformat's terms: stream
// outputs for stdout and stderr, execute_result for the value shown, error
// for a traceback (exc is the exception's type, from the log).
func cellOutputs(output []Output, exc string) []any {
	outs := []any{}
	for _, o := range output {
		switch o.Kind {
		case "result":
			outs = append(outs, map[string]any{"output_type": "execute_result", "execution_count": nil, "metadata": map[string]any{},
				"data": map[string]any{"text/plain": sourceLines(strings.TrimSuffix(o.Text, "\n"))}})
		case "error":
			outs = append(outs, errorOutput(o.Text, exc))
		default:
			name := "stdout"
			if o.Kind == "stderr" {
				name = "stderr"
			}
			outs = append(outs, map[string]any{"output_type": "stream", "name": name, "text": sourceLines(o.Text)})
		}
	}
	return outs
}

// errorOutput is a shown traceback as nbformat's error output: its lines,
// and the exception's type and message from its last line.
func errorOutput(text, exc string) map[string]any {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	last := lines[len(lines)-1]
	name, value, ok := strings.Cut(last, ": ")
	if !ok {
		name, value = last, ""
	}
	if exc != "" {
		name = exc
	}
	return map[string]any{"output_type": "error", "ename": name, "evalue": value, "traceback": lines}
}

// notebook is nbformat 4.5: code cells for py> inputs (with their outputs
// when the log kept them, --log-output; a failed input says how in the
// cell's metadata), markdown cells for questions and answers.
func notebook(recs []Record) ([]byte, error) {
	cells := []map[string]any{}
	add := func(kind, text string, meta map[string]any, outputs []any) {
		if meta == nil {
			meta = map[string]any{}
		}
		c := map[string]any{"cell_type": kind, "id": fmt.Sprintf("cell-%d", len(cells)+1), "metadata": meta, "source": sourceLines(text)}
		if kind == "code" {
			// Required, and null: the cell was not run in Jupyter.
			c["execution_count"] = nil
			c["outputs"] = outputs
		}
		cells = append(cells, c)
	}
	for _, p := range parts(recs) {
		if p.question == "" {
			var meta map[string]any
			if p.status != "ok" {
				meta = map[string]any{"pyaichat": map[string]string{"status": p.status, "exception": p.exc}}
			}
			add("code", p.src, meta, cellOutputs(p.output, p.exc))
			continue
		}
		add("markdown", "**ai>** "+p.question, nil, nil)
		if a := p.answerMarkdown(); a != "" {
			add("markdown", a, nil, nil)
		}
	}
	meta := map[string]any{
		"kernelspec":    map[string]string{"name": "python3", "display_name": "Python 3", "language": "python"},
		"language_info": map[string]string{"name": "python"},
	}
	if kernel := kernelOf(recs); kernel != "" {
		meta["pyaichat"] = map[string]string{"kernel": kernel}
	}
	nb := map[string]any{"nbformat": 4, "nbformat_minor": 5, "metadata": meta, "cells": cells}
	data, err := json.MarshalIndent(nb, "", " ")
	return append(data, '\n'), err
}

// kernelOf is the Jupyter kernel the session's py> ran in, or "".
func kernelOf(recs []Record) string {
	for _, r := range recs {
		if r.Ev == "start" {
			return r.Kernel
		}
	}
	return ""
}

// script is the session as a Python script: the inputs that ran, those
// that failed commented out, and the conversation as comments.
func script(recs []Record) string {
	var b strings.Builder
	b.WriteString("# A pyaichat session.\n")
	if kernel := kernelOf(recs); kernel != "" {
		b.WriteString("# py> ran on the Jupyter kernel " + kernel + "\n")
	}
	b.WriteString("\n")
	for _, p := range parts(recs) {
		switch {
		case p.question != "":
			b.WriteString(commented(prompt.AI+p.question) + "\n")
			b.WriteString(commented(p.answerMarkdown()) + "\n\n")
		case p.status == "ok":
			b.WriteString(p.src + "\n" + outputComment(p.output) + "\n")
		default:
			what := "raised " + p.exc
			if p.status == "exit" {
				what = "exited"
			}
			b.WriteString(commented(p.src) + "\n# (" + what + ")\n" + outputComment(p.output) + "\n")
		}
	}
	return b.String()
}

// outputComment is an input's output as comments, each line after "# | ".
func outputComment(output []Output) string {
	text := outputText(output)
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("# | "+l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// outputText is an input's output as the terminal showed it, without
// its last newline.
func outputText(output []Output) string {
	var b strings.Builder
	for _, o := range output {
		b.WriteString(o.Text)
	}
	return strings.TrimSuffix(b.String(), "\n")
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
		if out := outputText(p.output); out != "" {
			fence := "```"
			for strings.Contains(out, fence) {
				fence += "`"
			}
			b.WriteString("\n" + fence + "text\n" + out + "\n" + fence + "\n")
		}
		if p.status == "error" {
			b.WriteString("\n*raised " + p.exc + "*\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}
