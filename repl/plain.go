package repl

import (
	"bufio"
	"io"
	"strings"
	"sync"

	"github.com/pyaichat/pyaichat/pybridge"
)

// plainReader reads whole lines without a line editor: from a pipe (as
// python3 -i does, prompts on stderr) or from a terminal that cannot be
// driven (TERM=dumb), where the kernel edits the line.
type plainReader struct {
	mu      sync.Mutex
	in      *bufio.Reader
	pump    *pump // set on a dumb terminal: the pump is the only reader
	prompts io.Writer
	state   *modeState
}

func (r *plainReader) readRaw() (string, error) {
	if r.pump != nil {
		return r.pump.readLine("", false, nil)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.in.ReadString('\n')
}

func (r *plainReader) read(initial string) (event, error) {
	io.WriteString(r.prompts, r.state.prompt()+initial)
	line, err := r.readRaw()
	if err == pybridge.ErrInterrupted {
		io.WriteString(r.prompts, "\n")
		return event{kind: evInterrupt}, nil
	}
	if line == "" && err != nil {
		return event{kind: evEOF}, nil
	}
	line = strings.TrimSuffix(line, "\n")
	line = strings.TrimSuffix(line, "\r")
	if r.pump != nil && line == "\t" {
		// No key bindings here: a line holding just a TAB switches mode.
		m, cont := r.state.get()
		if !cont {
			if m == ModePy {
				r.state.set(ModeAI)
			} else {
				r.state.set(ModePy)
			}
			return r.read(initial)
		}
	}
	return event{kind: evLine, text: initial + line}, nil
}

// readLine serves input() from the same stream.
func (r *plainReader) readLine(prompt string, showPrompt bool, out io.Writer) (string, error) {
	if showPrompt && prompt != "" {
		io.WriteString(out, prompt)
	}
	line, err := r.readRaw()
	if line != "" {
		return line, nil
	}
	return "", err
}

func (r *plainReader) close() {}
