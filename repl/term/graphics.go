package term

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pyaichat/pyaichat/repl/interp"
	"golang.org/x/sys/unix"
)

// The queries that find out what a terminal draws images with, in the
// order it answers them: kitty's graphics protocol (a one-pixel query
// image, which only kitty-protocol terminals answer), XTVERSION (iTerm2
// and WezTerm name themselves, and draw iTerm2's inline images), the
// cell's size in pixels, the device attributes (a 4 among them: sixel),
// and last the cursor position, which every terminal answers: its answer
// ends the wait, so a terminal that ignores the others costs one round
// trip, not the timeout.
const graphicsQuery = "\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\" + "\x1b[>q" + "\x1b[16t" + "\x1b[c" + "\x1b[6n"

// graphicsTimeout bounds the wait for a terminal that answers nothing
// (one on the far side of a slow link answers late: it draws no images).
const graphicsTimeout = 2 * time.Second

// A cell's size when the terminal tells none (TIOCGWINSZ's pixels are 0
// on many): a common one, so that an image's width still fits the
// window.
const defaultCellWidth, defaultCellHeight = 10, 20

// Graphics asks the terminal, once, what it can draw images with; later
// calls return that answer with the window's size as it is now. It is
// called on the interpreter's thread while user code runs (the first
// figure), when nothing else reads the terminal: the terminal is set raw
// without echo for the query, so that no answer reaches the screen, and
// keys typed meanwhile are kept for the next read of the terminal through
// pyaichat (the next prompt, input()).
func (t *Terminal) Graphics() interp.Graphics {
	t.graphicsOnce.Do(func() { t.graphics = t.queryGraphics() })
	g := t.graphics
	if ws, err := unix.IoctlGetWinsize(t.fd, unix.TIOCGWINSZ); err == nil {
		g.Cols, g.Rows = int(ws.Col), int(ws.Row)
		if g.CellWidth == 0 && ws.Col > 0 && ws.Xpixel > 0 {
			g.CellWidth, g.CellHeight = int(ws.Xpixel)/int(ws.Col), int(ws.Ypixel)/int(ws.Row)
		}
	}
	if g.CellWidth <= 0 || g.CellHeight <= 0 {
		g.CellWidth, g.CellHeight = defaultCellWidth, defaultCellHeight
	}
	return g
}

func (t *Terminal) queryGraphics() interp.Graphics {
	// The Linux console draws no images, and would print the kitty
	// query's text, as it knows no APC strings.
	if term := os.Getenv("TERM"); term == "" || term == "dumb" || term == "linux" {
		return interp.Graphics{}
	}
	saved, err := unix.IoctlGetTermios(t.fd, ioctlGetTermios)
	if err != nil {
		return interp.Graphics{}
	}
	quiet := *saved
	quiet.Lflag &^= unix.ECHO | unix.ICANON
	quiet.Cc[unix.VMIN], quiet.Cc[unix.VTIME] = 1, 0
	if unix.IoctlSetTermios(t.fd, ioctlSetTermios, &quiet) != nil {
		return interp.Graphics{}
	}
	defer unix.IoctlSetTermios(t.fd, ioctlSetTermios, saved)
	if _, err := io.WriteString(t.out, graphicsQuery); err != nil {
		return interp.Graphics{}
	}
	answers, typed := t.readAnswers(time.Now().Add(graphicsTimeout))
	t.tty.unread(typed)
	return parseGraphics(answers, os.Getenv("TERM_PROGRAM"))
}

// readAnswers reads the terminal until the cursor position report that
// ends the answers, or until deadline: the answers, and the other bytes
// read (keys typed meanwhile).
func (t *Terminal) readAnswers(deadline time.Time) (answers, typed []byte) {
	var got []byte
	buf := make([]byte, 256)
	for {
		answers, typed, done := splitAnswers(got)
		wait := time.Until(deadline)
		if done || wait <= 0 {
			return answers, typed
		}
		fds := []unix.PollFd{{Fd: int32(t.tty.fd), Events: unix.POLLIN}}
		ready, err := unix.Poll(fds, int(wait/time.Millisecond)+1)
		switch {
		case err == unix.EINTR || err == nil && ready == 0:
			continue
		case err != nil:
			return answers, typed
		}
		if n, err := rawRead(t.tty.fd, buf); err == nil && n > 0 {
			got = append(got, buf[:n]...)
		}
	}
}

// splitAnswers splits what the terminal sent into its answers (escape
// sequences: CSI ... final, and ESC _ / ESC P ... ESC \) and the rest;
// done once the cursor position report (CSI row ; col R) came.
func splitAnswers(b []byte) (answers, typed []byte, done bool) {
	for i := 0; i < len(b); {
		end := answerEnd(b[i:])
		if end < 0 {
			typed = append(typed, b[i])
			i++
			continue
		}
		if end == 0 { // an answer still coming
			answers = append(answers, b[i:]...)
			return answers, typed, false
		}
		seq := b[i : i+end]
		i += end
		if seq[1] == '[' && !bytes.ContainsAny(seq[len(seq)-1:], "ctR") {
			typed = append(typed, seq...) // a key (an arrow), not an answer
			continue
		}
		answers = append(answers, seq...)
		if seq[1] == '[' && seq[len(seq)-1] == 'R' {
			return answers, append(typed, b[i:]...), true
		}
	}
	return answers, typed, false
}

// answerEnd is the length of the answer that b starts with, 0 if b holds
// only its start, -1 if b does not start with one.
func answerEnd(b []byte) int {
	if len(b) < 2 {
		if len(b) == 1 && b[0] == 0x1b {
			return 0
		}
		return -1
	}
	if b[0] != 0x1b {
		return -1
	}
	switch b[1] {
	case '[':
		for i := 2; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				return i + 1
			}
		}
		return 0
	case '_', 'P':
		if i := bytes.Index(b, []byte("\x1b\\")); i > 0 {
			return i + 2
		}
		return 0
	}
	return -1
}

// parseGraphics reads the answers to graphicsQuery: kitty's protocol is
// preferred (it takes the PNG as it is), then iTerm2's, then sixel.
func parseGraphics(answers []byte, termProgram string) interp.Graphics {
	var a graphicsAnswers
	for s := answers; len(s) > 0; {
		end := answerEnd(s)
		if end <= 0 {
			break
		}
		a.take(string(s[:end]))
		s = s[end:]
	}
	return a.choose(termProgram)
}

// graphicsAnswers is what the terminal's answers said it can do.
type graphicsAnswers struct {
	kitty, iterm2, sixel  bool
	cellWidth, cellHeight int
}

// take reads one answer.
func (a *graphicsAnswers) take(seq string) {
	switch {
	case strings.HasPrefix(seq, "\x1b_Gi=31;") && strings.Contains(seq, ";OK"):
		a.kitty = true
	case strings.HasPrefix(seq, "\x1bP>|"):
		a.iterm2 = a.iterm2 || strings.Contains(seq, "iTerm2") || strings.Contains(seq, "WezTerm")
	case strings.HasPrefix(seq, "\x1b[6;") && strings.HasSuffix(seq, "t"):
		if f := strings.Split(strings.TrimSuffix(seq[4:], "t"), ";"); len(f) == 2 {
			a.cellHeight, _ = strconv.Atoi(f[0])
			a.cellWidth, _ = strconv.Atoi(f[1])
		}
	case strings.HasPrefix(seq, "\x1b[?") && strings.HasSuffix(seq, "c"):
		for _, attr := range strings.Split(strings.TrimSuffix(seq[3:], "c"), ";") {
			a.sixel = a.sixel || attr == "4"
		}
	}
}

// choose is the protocol to draw with, and the cell's size.
func (a *graphicsAnswers) choose(termProgram string) interp.Graphics {
	g := interp.Graphics{CellWidth: a.cellWidth, CellHeight: a.cellHeight}
	switch {
	case a.kitty:
		g.Protocol = "kitty"
	case a.iterm2 || termProgram == "iTerm.app":
		g.Protocol = "iterm2"
	case a.sixel:
		g.Protocol = "sixel"
	}
	return g
}
