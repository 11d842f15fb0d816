//go:build !pyaichat_python

package pybridge

// Without the pyaichat_python build tag, pybridge embeds the system's
// Python, as pkg-config's python3-embed describes it. `make build
// PYTHON=...` sets the tag and passes the chosen interpreter's flags as
// CGO_CFLAGS and CGO_LDFLAGS instead, which, unlike what pkg-config
// prints, are part of Go's build cache key: a build for another Python
// never reuses this one's objects.

// #cgo pkg-config: python3-embed
import "C"
