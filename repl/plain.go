package repl

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"sync"
)

// plainReader reads whole lines without a line editor: from a pipe (as
// python3 -i does, prompts on stderr) or from a terminal that cannot be
// driven (TERM=dumb), where the kernel edits the line.
type plainReader struct {
	mu      sync.Mutex
	in      *bufio.Reader // a pipe: the prompt's lines and user code's
	tty     *ttyReader    // a dumb terminal, read only at the prompt
	prompts io.Writer
	state   *modeState
}

func (r *plainReader) readRaw() (string, error) {
	if r.tty != nil {
		return r.tty.readLine()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.in.ReadString('\n')
}

func (r *plainReader) read(initial string) (event, error) {
	io.WriteString(r.prompts, r.state.prompt()+initial)
	line, err := r.readRaw()
	if errors.Is(err, errWoken) {
		io.WriteString(r.prompts, "\n")
		return event{kind: evInterrupt}, nil
	}
	if line == "" && err != nil {
		return event{kind: evEOF}, nil
	}
	line = strings.TrimSuffix(line, "\n")
	line = strings.TrimSuffix(line, "\r")
	if r.tty != nil && line == "\t" {
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

// readLine serves user code's input() and sys.stdin from the pipe.
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

// interrupt stops a read of the terminal at the prompt (Ctrl-C).
func (r *plainReader) interrupt() {
	if r.tty != nil {
		r.tty.wake()
	}
}

func (r *plainReader) close() {}
