package main

import (
	"fmt"
	"io"
)

// runCapability is replaced by capability.go (issue 3); delete this file then.
func runCapability(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "pyaichat: --capability is not available yet")
	return 2
}
