package agent

import "strings"

// thinkSplit separates <think>...</think> blocks, which some local models
// (Qwen3, DeepSeek-R1's distillations) write into the answer itself, from
// the answer: they are thinking, shown dim on a terminal like a reasoning
// model's reasoning_content and dropped elsewhere. A tag may be split
// across deltas, so the end of a delta that could begin one is held back
// until the next. <think> counts only at the start of a line, so an
// answer that mentions the tag in its text is left alone.
type thinkSplit struct {
	in       bool   // inside a block
	tail     string // held back: could start a tag
	midLine  bool   // the answer's current line has more than white space
	trimLead bool   // drop the white space that follows </think>
	trimIn   bool   // ... and <think>
}

const (
	openThink  = "<think>"
	closeThink = "</think>"
)

// push splits the next delta; emit gets the pieces in order.
func (s *thinkSplit) push(text string, emit func(think bool, text string)) {
	buf := s.tail + text
	s.tail = ""
	for buf != "" {
		if s.in {
			if s.trimIn {
				buf = strings.TrimLeft(buf, " \t\r\n")
				if buf == "" {
					return
				}
				s.trimIn = false
			}
			i := strings.Index(buf, closeThink)
			if i < 0 {
				keep := prefixTail(buf, closeThink)
				emit(true, buf[:len(buf)-keep])
				s.tail = buf[len(buf)-keep:]
				return
			}
			emit(true, buf[:i])
			buf = buf[i+len(closeThink):]
			s.in, s.trimLead, s.midLine = false, true, false
			continue
		}
		if s.trimLead {
			buf = strings.TrimLeft(buf, " \t\r\n")
			if buf == "" {
				return
			}
			s.trimLead = false
		}
		i := s.openAt(buf)
		if i < 0 {
			keep := 0
			if !s.midLineAfter(buf[:len(buf)-prefixTail(buf, openThink)]) {
				keep = prefixTail(buf, openThink)
			}
			s.answer(buf[:len(buf)-keep], emit)
			s.tail = buf[len(buf)-keep:]
			return
		}
		s.answer(buf[:i], emit)
		buf = buf[i+len(openThink):]
		s.in, s.trimIn = true, true
	}
}

// openAt is where a <think> at the start of a line begins in buf, or -1.
func (s *thinkSplit) openAt(buf string) int {
	from := 0
	for {
		j := strings.Index(buf[from:], openThink)
		if j < 0 {
			return -1
		}
		i := from + j
		if !s.midLineAfter(buf[:i]) {
			return i
		}
		from = i + 1
	}
}

// midLineAfter says whether the answer's line has more than white space
// once text is shown.
func (s *thinkSplit) midLineAfter(text string) bool {
	if nl := strings.LastIndexByte(text, '\n'); nl >= 0 {
		return strings.TrimLeft(text[nl+1:], " \t") != ""
	}
	return s.midLine || strings.TrimLeft(text, " \t") != ""
}

func (s *thinkSplit) answer(text string, emit func(bool, string)) {
	if text == "" {
		return
	}
	s.midLine = s.midLineAfter(text)
	emit(false, text)
}

// flush gives up what was held back, at the end of a response.
func (s *thinkSplit) flush(emit func(think bool, text string)) {
	if s.tail != "" {
		if s.in {
			emit(true, s.tail)
		} else {
			s.answer(s.tail, emit)
		}
	}
	*s = thinkSplit{}
}

// prefixTail is the length of the longest end of s that is a proper
// prefix of tag.
func prefixTail(s, tag string) int {
	for n := min(len(s), len(tag)-1); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return n
		}
	}
	return 0
}

// withoutThinking is text without its <think> blocks.
func withoutThinking(text string) string {
	if !strings.Contains(text, openThink) {
		return text
	}
	var s thinkSplit
	var b strings.Builder
	keep := func(think bool, t string) {
		if !think {
			b.WriteString(t)
		}
	}
	s.push(text, keep)
	s.flush(keep)
	return b.String()
}
