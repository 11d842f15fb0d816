package markdown

import "strings"

// style is a set of pyaichat's own text attributes.
type style uint16

const (
	stBold style = 1 << iota
	stItalic
	stCode    // inline code
	stLink    // a link's text
	stURL     // a link's address, after its text
	stDim     // quote bars, table rules, code block labels
	stHeading // any heading
	stTitle   // a level 1 or 2 heading
	stBullet  // list markers
)

// sgr is the SGR parameter string of a style, from a palette that reads
// on dark and light backgrounds alike.
func (r *Renderer) sgr(st style) string {
	var p []string
	if st&(stBold|stHeading) != 0 {
		p = append(p, "1")
	}
	if st&(stDim|stURL) != 0 {
		p = append(p, "2")
	}
	if st&stItalic != 0 {
		p = append(p, "3")
	}
	if st&stLink != 0 {
		p = append(p, "4")
	}
	switch {
	case st&stCode != 0 && r.opt.Colors256:
		p = append(p, "38;5;173")
	case st&stCode != 0:
		p = append(p, "33")
	case st&stTitle != 0 && r.opt.Colors256:
		p = append(p, "38;5;75")
	case st&(stTitle|stBullet) != 0:
		p = append(p, "36")
	}
	return strings.Join(p, ";")
}

// style wraps text in st. The style is closed on the same row, so a
// cancelled answer never leaves the terminal styled, and the prompt that
// follows never is.
func (r *Renderer) style(st style, text string) string {
	if !r.opt.Color || st == 0 || text == "" {
		return text
	}
	return "\x1b[" + r.sgr(st) + "m" + text + "\x1b[0m"
}
