package main

// timerslack.c gives every thread of the process a 1 ns timer slack; this
// file makes cgo build it into pyaichat.

import "C"
