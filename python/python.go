// Package python holds pyaichat's Python helper code, embedded in the binary.
//
// The helpers run inside the embedded interpreter. They do the work that
// CPython's own standard library already does well (code, codeop, traceback,
// reprlib, inspect) so that the Go side only passes strings across cgo.
package python

import _ "embed"

// REPL is the source of the module that executes py> input the way CPython's
// interactive interpreter does (see repl.py), with IPython's common line
// magics (magics.py), which only give a meaning to lines that are
// SyntaxErrors in Python, and the drawing of figures and rich values
// (display.py). Its parts are joined where the module is compiled, in C
// memory: a joined copy here would hold 70 KB of Go's heap for good.
var REPL = [...]string{replSource, magicsSource, displaySource}

//go:embed repl.py
var replSource string

//go:embed magics.py
var magicsSource string

//go:embed display.py
var displaySource string
