package markdown

import (
	"strings"

	"github.com/pyaichat/pyaichat/termwidth"
)

// Wrap breaks each line of text that is wider than width columns at the
// spaces between its words, as a terminal never does (it breaks
// mid-word), for pyaichat's own prose: command output, notices. A
// continuation keeps its line's indentation, or in a two-column line
// ("  name    what it is") starts under the second column, unless that is
// most of the width; a word wider than the room is left whole for the
// terminal.
func Wrap(text string, width int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if termwidth.String(line) > width {
			lines[i] = wrapLine(line, width)
		}
	}
	return strings.Join(lines, "\n")
}

func wrapLine(line string, width int) string {
	body := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(body)]
	if gap := strings.Index(body, "  "); gap > 0 {
		second := len(body[gap:]) - len(strings.TrimLeft(body[gap:], " "))
		indent = strings.Repeat(" ", termwidth.String(line[:len(indent)+gap+second]))
	}
	if termwidth.String(indent) > width/2 {
		indent = ""
	}
	var b strings.Builder
	b.WriteString(line[:len(line)-len(body)])
	col := termwidth.String(line) - termwidth.String(body)
	atStart := true // nothing after the indentation yet
	for _, word := range strings.Split(body, " ") {
		w := termwidth.String(word)
		switch {
		case atStart:
		case col+1+w > width && word != "":
			b.WriteString("\n" + indent)
			col = termwidth.String(indent)
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += w
		atStart = false
	}
	return b.String()
}
