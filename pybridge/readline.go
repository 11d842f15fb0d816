package pybridge

/*
#include <stdlib.h>
*/
import "C"

import (
	"errors"
)

// Status codes shared with bridge.c.
const (
	lineOK          = 0
	lineEOF         = 1
	lineInterrupted = 2
)

// pybReadLine is called by bridge.c, on the interpreter's thread with the GIL
// released, when user code reads a line of stdin. The result is malloc'd.
//
//export pybReadLine
func pybReadLine(prompt *C.char, hasPrompt C.int, outLen *C.size_t, status *C.int) *C.char {
	current.Lock()
	read := current.readLine
	current.Unlock()
	if read == nil {
		*status = lineEOF
		return nil
	}
	p := ""
	if prompt != nil {
		p = C.GoString(prompt)
	}
	line, err := read(p, hasPrompt != 0)
	switch {
	case errors.Is(err, ErrInterrupted):
		*status = lineInterrupted
		return nil
	case err != nil && line == "":
		// io.EOF, or an unreadable stdin, which ends input as EOF would.
		*status = lineEOF
		return nil
	}
	*status = lineOK
	*outLen = C.size_t(len(line))
	return (*C.char)(C.CBytes([]byte(line)))
}
