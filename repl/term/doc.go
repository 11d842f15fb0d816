// Package term is pyaichat's terminal: raw mode, reading keys only while a
// prompt is up, bracketed paste, and the line editor, which knows text and
// keys and nothing of Python or the assistant.
//
// A prompt's keys take one of two ways:
//
//   - typeLine (typing.go) takes a line typed from its end, printable keys,
//     Backspace and Enter, on the caller's goroutine as it reads them, and
//     draws it through the lineView;
//   - the first key of any other kind hands the line as typed so far to
//     chzyer/readline, which edits on from there (moves, history, search,
//     completion, the key hook). Its keys come through the pump (keys.go),
//     which reads a byte at a time, lifts pastes out of the stream and
//     hands Ctrl-C over in order with the keys around it.
//
// Either way the lineView (lineview.go) lays the line out in the columns
// the terminal uses, and the frameWriter (frame.go) sends each batch of
// redraws as one write, shortened to what changed on the screen
// (redraw.go).
package term
