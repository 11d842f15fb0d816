// Package term is pyaichat's terminal: raw mode, reading keys only while a
// prompt is up, bracketed paste, and the line editor, which knows text and
// keys and nothing of Python or the assistant.
//
// The editor is one serial loop per line (editing.run, loop.go) on the
// caller's goroutine, which is the interpreter's thread when the REPL
// hosts its prompts there:
//
//   - keyread.go reads a key a byte at a time, as GNU readline reads it,
//     so the bytes typed after the key that ends a line (Enter, Ctrl-C, a
//     paste's end) stay in the terminal for input(), pdb or a child
//     program;
//   - keymap.go and emacs.go apply the key to the buffer: the emacs
//     commands are functions of the line and the cursor (lineEdit), with
//     an undo list and a kill ring as GNU readline keeps them; search.go
//     is the incremental history search;
//   - the lineView (lineview.go) lays the line out in the columns the
//     terminal uses, a block's rows after continuation prompts, and the
//     frameWriter (frame.go) sends each drawing as one write, shortened to
//     what changed on the screen (redraw.go). The line is drawn only when
//     no more keys are waiting; a printable key typed at the end of the
//     line is echoed before that, by the wait that read it when it can
//     (Await, ReadAhead), so its echo costs no more than python3's.
package term
