package python

import _ "embed"

// Suggest is the source of the module behind py>'s inline suggestions (see
// suggest.py), loaded on the first suggestion.
//
//go:embed suggest.py
var Suggest string
