package app

import "testing"

// A masked key tells two keys apart by kind and last four characters, and
// a short one (which would be mostly shown) is all stars.
func TestMaskKey(t *testing.T) {
	for key, want := range map[string]string{
		"":                                     "",
		"short-key":                            "****",
		"sk-proj-abcdefghijklmnopqrstuvwx1234": "sk-****1234",
		"gsk_abcdefghijklmnopqrstuvwxyz9999":   "****9999",
		"verylongprefix-abcdefghijklmnop0000":  "****0000",
	} {
		if got := maskKey(key); got != want {
			t.Errorf("maskKey(%q) = %q, want %q", key, got, want)
		}
	}
}
