package pybridge

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"unsafe"
)

// codeCache keeps pyaichat's helper modules compiled between runs, as
// Python keeps .pyc files: compiling the REPL's helper took 3 ms of every
// start and the capabilities' 5 ms of the first ai> question. A copy is
// named by its module and a hash of its source, and holds the compiling
// interpreter's magic number, so a copy from another pyaichat or Python is
// never used. A cache that cannot be read or written only costs the
// compile.
type codeCache struct{ dir string } // "" keeps nothing

// path is where module's code compiled from source is kept.
func (c codeCache) path(module, source string) string {
	sum := sha256.Sum256([]byte(source))
	return filepath.Join(c.dir, module+"-"+hex.EncodeToString(sum[:8])+".bin")
}

// load returns the kept copy of module's compiled source, for C, and a
// function that frees it; cache is nil when there is none.
func (c codeCache) load(module, source string) (cache *C.pyb_bytes, free func()) {
	if c.dir == "" {
		return nil, func() {}
	}
	data, err := os.ReadFile(c.path(module, source))
	if err != nil || len(data) == 0 {
		return nil, func() {}
	}
	cache = (*C.pyb_bytes)(C.calloc(1, C.size_t(unsafe.Sizeof(C.pyb_bytes{}))))
	cache.data = (*C.char)(C.CBytes(data))
	cache.len = C.size_t(len(data))
	return cache, func() {
		C.free(unsafe.Pointer(cache.data))
		C.free(unsafe.Pointer(cache))
	}
}

// save keeps fresh (filled by C, then freed here) as module's compiled
// source, replacing copies of older sources. It writes a temporary file and
// renames it, so that a pyaichat starting meanwhile reads a whole copy or
// none.
func (c codeCache) save(module, source string, fresh *C.pyb_bytes) {
	if fresh.data == nil {
		return
	}
	data := C.GoBytes(unsafe.Pointer(fresh.data), C.int(fresh.len))
	C.free(unsafe.Pointer(fresh.data))
	fresh.data = nil
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
