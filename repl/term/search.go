package term

import (
	"slices"
	"strings"
)

// historySearch is GNU readline's incremental search of the history
// (C-r backward, C-s forward): each key typed extends the text searched
// for, and the newest entry holding it (from the one shown) is shown with
// the cursor on the match, after a prompt that says what is searched.
// Enter runs the entry shown, C-g goes back to the line as it was, and any
// other editing key takes the entry into the line and does what it does.
type historySearch struct {
	prompt  string // the line's own prompt, drawn again after the search
	query   []rune
	back    bool // searching toward older entries
	failed  bool
	at      int // the entry shown: len(history) for the line itself
	line    []rune
	pos     int
	was     []rune // the line before the search, for C-g
	wasPos  int
	history []string
}

// startSearch starts a search, or goes on to the next match of one under
// way (C-r or C-s again).
func (ed *editing) startSearch(back bool) {
	if ed.search == nil {
		hist := ed.e.history
		ed.search = &historySearch{
			prompt: ed.e.view.promptText(), back: back, at: len(hist),
			line: slices.Clone(ed.line), pos: ed.pos,
			was: slices.Clone(ed.line), wasPos: ed.pos, history: hist,
		}
		ed.stale = true
		return
	}
	ed.search.back = back
	ed.search.find(true)
	ed.stale = true
}

// searchKey handles k during a search; taken says the search took it.
func (ed *editing) searchKey(k key) (end *done, taken bool) {
	s := ed.search
	switch {
	case k.kind == keyChar:
		s.query = append(s.query, k.r)
		s.find(false)
	case k.kind == keyCtrl && (k.r == ctrlR || k.r == ctrlS):
		s.back = k.r == ctrlR
		s.find(true)
	case k.kind == keyCtrl && (k.r == backspace || k.r == ctrlH):
		if len(s.query) > 0 {
			s.query = s.query[:len(s.query)-1]
			s.at, s.line, s.pos = len(s.history), slices.Clone(s.was), s.wasPos
			if len(s.query) > 0 {
				s.find(false)
			}
		}
	case k.kind == keyCtrl && k.r == ctrlG:
		ed.endSearch(true)
	case k.kind == keyCtrl && k.r == ctrlC:
		return nil, false
	default:
		ed.endSearch(false)
		return nil, false // the key goes on to edit the line found
	}
	ed.stale = true
	return nil, true
}

// endSearch ends the search, with the line it found, or as it was before
// it if abort.
func (ed *editing) endSearch(abort bool) {
	s := ed.search
	if s == nil {
		return
	}
	ed.search = nil
	ed.e.view.setPrompt(s.prompt)
	ed.e.out.forget()
	ed.stale = true
	if abort {
		return
	}
	if s.at != len(s.history) {
		ed.walk = s.at
	}
	ed.line, ed.pos = s.line, s.pos
	ed.undo.reset(ed.line, false)
}

// find looks for the query from the entry shown (from the next one, if
// next), and shows what it finds.
func (s *historySearch) find(next bool) {
	if len(s.query) == 0 {
		return
	}
	q := string(s.query)
	step := 1
	if s.back {
		step = -1
	}
	i := s.at
	if next || i == len(s.history) {
		i += step
	}
	for ; i >= 0 && i < len(s.history); i += step {
		entry := s.history[i]
		j := strings.LastIndex(entry, q)
		if !s.back {
			j = strings.Index(entry, q)
		}
		if j < 0 || next && i != s.at && entry == string(s.line) {
			continue
		}
		s.at, s.line, s.failed = i, []rune(entry), false
		s.pos = len([]rune(entry[:j]))
		return
	}
	s.failed = true
}

// redraw draws the search: its prompt, and the entry found with the
// cursor on the match.
func (s *historySearch) redraw(v *lineView) []byte {
	var p strings.Builder
	p.WriteString("(")
	if s.failed {
		p.WriteString("failed ")
	}
	if s.back {
		p.WriteString("reverse-")
	}
	p.WriteString("i-search)`")
	p.WriteString(string(s.query))
	p.WriteString("': ")
	v.setPrompt(p.String())
	return v.redrawWith(s.line, s.pos, nil, true)
}
