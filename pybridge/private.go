package pybridge

/*
#include "isolate.h"
*/
import "C"

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"unsafe"
)

// heapProbe is an object on Go's heap (a package variable's pointee
// escapes), whose address finds the heap's mappings.
var heapProbe = new([64]byte)

// setPrivateRange tells the C side where Go's heap is, just before a copy
// of the session is forked: the copy unmaps it before any Python runs in
// it, so that no expression can read what pyaichat holds there (the API
// key, the requests sent to the model, the lines typed at the prompt),
// through ctypes or any other route to raw memory. Only C and Python run
// in a copy, never Go. The heap is the run of adjacent anonymous mappings
// around heapProbe: Go reserves and grows its arenas there in 64 MiB
// steps, and its base address is chosen at random. If the maps cannot be
// read, the range is left as it was.
func setPrivateRange() {
	lo, hi, ok := goHeapRange(uintptr(unsafe.Pointer(heapProbe)))
	if ok {
		C.pyb_set_private_range(C.uintptr_t(lo), C.uintptr_t(hi))
	}
}

// goHeapRange reads /proc/self/maps for the run of adjacent anonymous
// mappings that holds addr.
func goHeapRange(addr uintptr) (lo, hi uintptr, ok bool) {
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, 0, false
	}
	inRun, found := false, false // lo and hi bound the current run
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		start, end, anon, ok := parseMapping(sc.Bytes())
		if !ok {
			continue
		}
		if !anon || !inRun || start != hi { // the run ends before this line
			if found {
				return lo, hi, true
			}
			inRun, lo = anon, start
		}
		hi = end
		found = found || anon && addr >= start && addr < end
	}
	return lo, hi, found
}

// parseMapping reads "start-end perms offset dev inode [path]"; anon is
// true for a private mapping with no path.
func parseMapping(line []byte) (start, end uintptr, anon, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 5 {
		return 0, 0, false, false
	}
	dash := bytes.IndexByte(f[0], '-')
	if dash < 0 {
		return 0, 0, false, false
	}
	s, err1 := strconv.ParseUint(string(f[0][:dash]), 16, 64)
	e, err2 := strconv.ParseUint(string(f[0][dash+1:]), 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false, false
	}
	anon = len(f) == 5 && len(f[1]) == 4 && f[1][3] == 'p'
	return uintptr(s), uintptr(e), anon, true
}
