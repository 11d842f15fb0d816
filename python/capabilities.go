package python

import _ "embed"

// Capabilities is the source of the module behind the assistant's read-only
// capabilities (see capabilities.py). It is loaded on first use, not at
// start-up, because it imports inspect and json.
//
//go:embed capabilities.py
var Capabilities string

// UserCaps is the source of the module that finds and imports the user's
// own capabilities (see usercaps.py), loaded at start when the assistant
// is available.
//
//go:embed usercaps.py
var UserCaps string

// Pyaichat is the source of the pyaichat module that the user's
// capability modules import (see pyaichat.py); it exists only inside
// pyaichat's interpreter.
//
//go:embed pyaichat.py
var Pyaichat string
