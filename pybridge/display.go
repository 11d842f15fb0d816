package pybridge

/*
#include <stdlib.h>
*/
import "C"

import (
	"context"
	"fmt"
	"unsafe"
)

// SetDisplay makes d the display that Python's figures and rich values
// are drawn on; without one (nil: no terminal), they are saved as files.
func (in *Interp) SetDisplay(d Display) {
	current.Lock()
	current.display = d
	current.Unlock()
}

// SetFigureDir is the directory where figures that cannot be drawn are
// saved ("": a temporary one, made at the first).
func (in *Interp) SetFigureDir(dir string) error {
	_, err := in.Call(context.Background(), CallHelper, replModule, "set_figure_dir", dir)
	return err
}

func currentDisplay() Display {
	current.Lock()
	defer current.Unlock()
	return current.display
}

// pybGraphics is _pyaichat.graphics(), called with the GIL released: a
// malloc'd "PROTOCOL CELLW CELLH COLS ROWS".
//
//export pybGraphics
func pybGraphics() *C.char {
	d := currentDisplay()
	if d == nil {
		return C.CString("-")
	}
	g := d.Graphics()
	protocol := g.Protocol
	if protocol == "" {
		protocol = "-"
	}
	return C.CString(fmt.Sprintf("%s %d %d %d %d", protocol, g.CellWidth, g.CellHeight, g.Cols, g.Rows))
}

// pybDrawImage is _pyaichat.draw_image(png), called with the GIL
// released: NULL, or a malloc'd reason it could not draw.
//
//export pybDrawImage
func pybDrawImage(data *C.char, n C.size_t) *C.char {
	d := currentDisplay()
	if d == nil {
		return C.CString("no terminal")
	}
	if err := d.DrawImage(C.GoBytes(unsafe.Pointer(data), C.int(n))); err != nil {
		return C.CString(err.Error())
	}
	return nil
}
