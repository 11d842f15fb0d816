package repl

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/pyaichat/pyaichat/repl/term"
)

// Pipe is a standard input that is not a terminal. pyaichat's prompt and
// user code (input(), sys.stdin) read lines from it in turn, as python3 -i
// reads both from one stream.
type Pipe struct {
	mu sync.Mutex
	in *bufio.Reader
}

// NewPipe reads lines from r. Unbuffered, it reads r a byte at a time,
// as python3 -u reads its stdin (C stdio, unbuffered): what follows the
// line taken stays in the pipe, for a child or os.read(0, ...) to read.
func NewPipe(r io.Reader, unbuffered bool) *Pipe {
	if unbuffered {
		r = byteReader{r}
	}
	return &Pipe{in: bufio.NewReaderSize(r, 64*1024)}
}

// byteReader reads one byte per Read: bufio then reads no further than
// the line end it looks for.
type byteReader struct{ r io.Reader }

func (b byteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return b.r.Read(p)
}

func (p *Pipe) line() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.in.ReadString('\n')
}

// UserLine serves user code's input() and sys.stdin: prompt goes to out
// when show is set.
func (p *Pipe) UserLine(prompt string, show bool, out io.Writer) (string, error) {
	if show && prompt != "" {
		io.WriteString(out, prompt)
	}
	line, err := p.line()
	if line != "" {
		return line, nil
	}
	return "", err
}

// plainReader reads whole lines without a line editor: from a pipe (as
// python3 -i does, prompts on stderr) or from a terminal that cannot be
// driven (TERM=dumb), where the kernel edits the line.
type plainReader struct {
	lines   func() (string, error)
	dumb    bool // a terminal: a line holding just a TAB switches mode
	prompts io.Writer
	state   *modeState
}

func (r *plainReader) read(initial string) (term.Event, error) {
	io.WriteString(r.prompts, r.state.prompt()+initial)
	line, err := r.lines()
	if errors.Is(err, term.ErrInterrupted) {
		io.WriteString(r.prompts, "\n")
		return term.Event{Kind: term.EventInterrupt}, nil
	}
	if line == "" && err != nil {
		return term.Event{Kind: term.EventEOF}, nil
	}
	line = strings.TrimSuffix(line, "\n")
	line = strings.TrimSuffix(line, "\r")
	if r.dumb && line == "\t" {
		if _, cont := r.state.get(); !cont {
			r.state.toggle()
			return r.read(initial)
		}
	}
	return term.Event{Kind: term.EventLine, Text: initial + line}, nil
}
