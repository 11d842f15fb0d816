//go:build cgo

package pybridge

/*
#include <stdlib.h>
#include "tracked.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"fmt"
	"unsafe"
)

// captureSlack is kept beyond the caller's bound, so that whoever cuts
// the copy to the bound can redact a secret across the cut first.
const captureSlack = 4 << 10

// CaptureOutput turns on a copy of what Python writes through sys.stdout
// and sys.stderr on a terminal (python/repl.py's capture_output and
// capture.c), kept until TakeOutput, at most limit bytes of it (and a
// little more, see captureSlack) between takes. Output that C code or a
// child process writes to the file descriptors directly is not copied.
// It is an error when stdout is not a terminal.
func (in *Interp) CaptureOutput(limit int) error {
	res, err := in.Call(context.Background(), CallHelper, replModule, "capture_output", "")
	if err != nil {
		return err
	}
	if res != "ok" {
		return fmt.Errorf("pybridge: output cannot be captured: stdout is not a terminal")
	}
	startCopy(limit)
	return nil
}

// startCopy turns on capture.c's copy of what the Tracked layers write.
func startCopy(limit int) { C.pyb_capture_set(1, C.size_t(limit+captureSlack)) }

// StopCapture turns the copy off; what was kept is dropped.
func (in *Interp) StopCapture() {
	C.pyb_capture_set(0, 0)
	in.TakeOutput()
}

// TakeOutput is what was copied since the last take, and how many bytes
// Python wrote in that time, copied or not; the copy starts again empty.
func (in *Interp) TakeOutput() (parts []OutputPart, written int) {
	var n, total C.size_t
	buf := C.pyb_capture_take(&n, &total)
	if buf == nil {
		return nil, int(total)
	}
	defer C.free(unsafe.Pointer(buf))
	return outputParts(C.GoBytes(unsafe.Pointer(buf), C.int(n))), int(total)
}

var outputKinds = map[byte]string{'o': "stdout", 'e': "stderr", 'r': "result", 'x': "error"}

// outputParts reads capture.c's segments: a tag byte, a 4-byte length in
// the machine's order, the bytes.
func outputParts(data []byte) []OutputPart {
	var parts []OutputPart
	for len(data) >= 5 {
		size := int(binary.NativeEndian.Uint32(data[1:5]))
		if size > len(data)-5 {
			size = len(data) - 5
		}
		parts = append(parts, OutputPart{Kind: outputKinds[data[0]], Text: string(data[5 : 5+size])})
		data = data[5+size:]
	}
	return parts
}
