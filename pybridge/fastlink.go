//go:build cgo && pyaichat_fast

package pybridge

// A CPython built for speed (make python-fast) holds its code as gcc's
// link-time-optimisation IR, which gcc's linker plugin compiles at the
// final link. CPython links python with -flto-partition=none, one
// partition in which any function can be inlined into any other; left to
// its default, gcc splits libpython into some 70 partitions, and dict-
// and string-heavy code ran 1.03x-1.10x slower than Debian's python3.
//
// The option is this package's rather than CGO_LDFLAGS's: there it would
// also reach the link that lists runtime/cgo's C imports, which then
// lacks stderr, and every Go test binary without libpython, linked
// internally, would fail. The Makefile's FAST=1 sets the tag and allows
// the option (CGO_LDFLAGS_ALLOW).

// #cgo LDFLAGS: -flto-partition=none
import "C"
