// Package python holds pyaichat's Python helper code, embedded in the binary.
//
// The helpers run inside the embedded interpreter. They do the work that
// CPython's own standard library already does well (code, codeop, traceback,
// reprlib, inspect) so that the Go side only passes strings across cgo.
package python

import _ "embed"

// REPL is the source of the module that executes py> input the way CPython's
// interactive interpreter does (see repl.py).
//
//go:embed repl.py
var REPL string
