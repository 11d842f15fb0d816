package pybridge

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"unsafe"
)

// cSource is Python source in C memory, as the C side compiles it. The
// helpers' sources are large (the REPL's is 70 KB), and a copy in Go's
// heap, even a short-lived one, leaves pages of the heap resident for the
// whole session.
type cSource struct {
	str *C.char
	len int
}

// newCSource joins parts into one NUL-terminated C string.
func newCSource(parts ...string) cSource {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	str := (*C.char)(C.malloc(C.size_t(n + 1)))
	buf := unsafe.Slice((*byte)(unsafe.Pointer(str)), n+1)
	at := 0
	for _, p := range parts {
		at += copy(buf[at:], p)
	}
	buf[n] = 0
	return cSource{str: str, len: n}
}

// bytes is the source, without its NUL, valid until free.
func (s cSource) bytes() []byte { return unsafe.Slice((*byte)(unsafe.Pointer(s.str)), s.len) }

func (s cSource) free() { C.free(unsafe.Pointer(s.str)) }

// codeCache keeps pyaichat's helper modules compiled between runs, as
// Python keeps .pyc files: compiling the REPL's helper took 3 ms of every
// start and the capabilities' 5 ms of the first ai> question. A copy is
// named by its module and a hash of its source, and holds the compiling
// interpreter's magic number, so a copy from another pyaichat or Python is
// never used. A cache that cannot be read or written only costs the
// compile.
type codeCache struct{ dir string } // "" keeps nothing

// path is where module's code compiled from source is kept.
func (c codeCache) path(module string, source []byte) string {
	sum := sha256.Sum256(source)
	return filepath.Join(c.dir, module+"-"+hex.EncodeToString(sum[:8])+".bin")
}

// load returns the kept copy of module's compiled source, for C, and a
// function that frees it; cache is nil when there is none.
func (c codeCache) load(module string, source []byte) (cache *C.pyb_bytes, free func()) {
	none := func() {}
	if c.dir == "" {
		return nil, none
	}
	f, err := os.Open(c.path(module, source))
	if err != nil {
		return nil, none
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() == 0 || info.Size() > maxCodeCopy {
		return nil, none
	}
	// Read straight into C memory, where the C side wants it: a copy in
	// Go's heap would be garbage at once (see cSource).
	n := int(info.Size())
	data := C.malloc(C.size_t(n))
	if _, err := io.ReadFull(f, unsafe.Slice((*byte)(data), n)); err != nil {
		C.free(data)
		return nil, none
	}
	cache = (*C.pyb_bytes)(C.calloc(1, C.size_t(unsafe.Sizeof(C.pyb_bytes{}))))
	cache.data = (*C.char)(data)
	cache.len = C.size_t(n)
	return cache, func() {
		C.free(unsafe.Pointer(cache.data))
		C.free(unsafe.Pointer(cache))
	}
}

// maxCodeCopy bounds a kept copy read back: the helpers' code is a few
// hundred KB, and a larger file is not one this cache wrote.
const maxCodeCopy = 16 << 20

// save keeps fresh (filled by C, then freed here) as module's compiled
// source, replacing copies of older sources. It writes a temporary file and
// renames it, so that a pyaichat starting meanwhile reads a whole copy or
// none.
func (c codeCache) save(module string, source []byte, fresh *C.pyb_bytes) {
	if fresh.data == nil {
		return
	}
	defer func() {
		C.free(unsafe.Pointer(fresh.data))
		fresh.data = nil
	}()
	data := unsafe.Slice((*byte)(unsafe.Pointer(fresh.data)), int(fresh.len))
	if c.dir == "" || os.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	path := c.path(module, source)
	tmp, err := os.CreateTemp(c.dir, module+"-*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
		return
	}
	old, _ := filepath.Glob(filepath.Join(c.dir, module+"-*.bin"))
	for _, o := range old {
		if o != path {
			os.Remove(o)
		}
	}
}
