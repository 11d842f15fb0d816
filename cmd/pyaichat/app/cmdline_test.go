package app

import (
	"strings"
	"testing"
)

// pyaichat's session flags are its own options; after FILE, -c cmd or
// -m mod they belong to sys.argv, as every option does.
func TestSessionFlags(t *testing.T) {
	c, err := parseArgs([]string{"--no-log", "-p", "q", "--json", "--json-stream", "-c", "x = 1", "--json"})
	if err != nil || !c.noLog || !c.json || !c.jsonStream || c.question != "q" || strings.Join(c.args, " ") != "--json" {
		t.Errorf("parse: %+v, %v", c, err)
	}
	c, err = parseArgs([]string{"--continue"})
	if err != nil || c.resume != resumeLatest {
		t.Errorf("--continue: %+v, %v", c, err)
	}
	c, err = parseArgs([]string{"--resume", "2026", "script.py", "--no-log"})
	if err != nil || c.resume != "2026" || c.script != "script.py" || c.noLog || strings.Join(c.args, " ") != "--no-log" {
		t.Errorf("--resume: %+v, %v", c, err)
	}
	c, _ = parseArgs([]string{"--resume=20261125"})
	if c.resume != "20261125" {
		t.Errorf("--resume=ID: %q", c.resume)
	}
	if _, err := parseArgs([]string{"--resume"}); err == nil {
		t.Error("--resume without an id")
	}
	for _, args := range [][]string{{"--json"}, {"--json-stream", "-c", "1"}, {"--continue", "-p", "q"}} {
		c, _ := parseArgs(args)
		if sessionFlagsWrong(c) == "" {
			t.Errorf("%q accepted", args)
		}
	}
}
