package repl

import (
	"strings"
	"sync"

	"github.com/pyaichat/pyaichat/repl/prompt"
)

// Mode is what a line at the prompt is for.
type Mode int

const (
	ModePy Mode = iota // Python, as python3 -i
	ModeAI             // a question for the assistant
)

// modeState is shared by the REPL loop and the line editor's key hook,
// which runs on the editor's goroutine.
type modeState struct {
	mu           sync.Mutex
	mode         Mode
	continuation bool // a py> statement is incomplete
	lead         string
	onToggle     func(Mode) // called by set when the mode changes
}

func (s *modeState) get() (Mode, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode, s.continuation
}

// set switches mode and tells onToggle, if set.
func (s *modeState) set(m Mode) {
	s.mu.Lock()
	changed := s.mode != m
	s.mode = m
	onToggle := s.onToggle
	s.mu.Unlock()
	if changed && onToggle != nil {
		onToggle(m)
	}
}

// toggle switches between py> and ai>.
func (s *modeState) toggle() Mode {
	m, _ := s.get()
	next := ModeAI
	if m == ModeAI {
		next = ModePy
	}
	s.set(next)
	return next
}

func (s *modeState) setContinuation(c bool) {
	s.mu.Lock()
	s.continuation = c
	s.mu.Unlock()
}

// prompt is the prompt to draw, after any text that output left on the
// line (see setLead).
func (s *modeState) prompt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lead + promptFor(s.mode, s.continuation)
}

// setLead records what the last output left on the terminal's current line.
// The line editor redraws its whole line, so the prompt must carry that
// text to leave it in place, as python3's prompt simply follows it.
func (s *modeState) setLead(lead string) {
	s.mu.Lock()
	s.lead = lead
	s.mu.Unlock()
}

func promptFor(m Mode, cont bool) string {
	if cont {
		return prompt.Continuation
	}
	if m == ModeAI {
		return prompt.AI
	}
	return prompt.Py
}

// indentUnit is what TAB inserts inside an incomplete py> block, and one
// level of auto-indent.
const indentUnit = "    "

// indent is the line editor's auto-indent (term.EditorConfig.Indent), as
// Python 3.13's REPL has it: a row added after before starts with the
// indentation of before's last row, one level more if that row ends in a
// colon (a comment after it aside).
func indent(before string) string {
	row, _, comment := rowEnd(before)
	code := row
	if comment >= 0 {
		code = row[:comment]
	}
	lead := row[:len(row)-len(strings.TrimLeft(row, " \t"))]
	if strings.HasSuffix(strings.TrimSpace(code), ":") {
		return lead + indentUnit
	}
	return lead
}
