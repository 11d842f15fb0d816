package python

import _ "embed"

// Capabilities is the source of the module behind the assistant's read-only
// capabilities (see capabilities.py). It is loaded on first use, not at
// start-up, because it imports inspect and json.
//
//go:embed capabilities.py
var Capabilities string
