package python

import _ "embed"

// Kernel is the source of pyaichat's support code inside a Jupyter kernel
// (see kernel.py): the bridge's reads for the helpers, and each
// capability call run in a fork()ed copy of the kernel process.
//
//go:embed kernel.py
var Kernel string
