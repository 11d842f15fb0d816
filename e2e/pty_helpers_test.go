package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/pyaichat/pyaichat/e2e/ptytest"
)

// startREPL runs the built pyaichat on a PTY with a private HOME and
// XDG_STATE_HOME (home), TERM=xterm, and waits for the first prompt.
func startREPL(t *testing.T, home string, args ...string) *ptytest.Proc {
	t.Helper()
	s := startREPLNoWait(t, home, nil, args...)
	s.ExpectString("py> ")
	return s
}

// startREPLNoWait is startREPL without waiting for the prompt; extra is added
// to the environment.
func startREPLNoWait(t *testing.T, home string, extra []string, args ...string) *ptytest.Proc {
	t.Helper()
	return startProgram(t, binary, home, extra, args...)
}

// startProgram starts program (pyaichat or the python3 it is compared
// with) on a PTY in home, a new directory if "", with extra added to the
// environment.
func startProgram(t *testing.T, program, home string, extra []string, args ...string) *ptytest.Proc {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	env := append(testEnv(home, "xterm"), extra...)
	return ptytest.Start(t, program, ptytest.Options{Args: args, Env: env, Dir: home})
}

// valueLine is what valueOfX prints.
var valueLine = regexp.MustCompile(`value (.*)\r\n`)

// valueOfX prints the repr of x at the prompt and returns it, once the
// prompt is back: how the tests that type keys at pyaichat and at python3
// -i read what the keys made.
func valueOfX(s *ptytest.Proc, prompt string) string {
	s.SendLine("print('value', repr(x))")
	got := s.ExpectRegexp(valueLine)[1]
	s.ExpectString(prompt)
	return got
}

// historyFile is where pyaichat keeps the history of a mode ("py" or "ai").
func historyFile(home, mode string) string {
	return filepath.Join(home, ".local", "state", "pyaichat", "history-"+mode)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
