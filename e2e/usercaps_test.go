package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// myTools is a user's capability module: one capability that answers,
// and three that try what a capability may not do.
const myTools = `import os
import socket
from typing import Optional

import pyaichat


@pyaichat.capability
def add(a: int, b: int = 2, label: Optional[str] = None) -> dict:
    """Add two numbers.

    The model reads only this first paragraph."""
    return {"sum": a + b, "label": label}


@pyaichat.capability
def write_file(path: str):
    """Writes a file."""
    with open(path, "w") as f:
        f.write("written")
    return "wrote"


@pyaichat.capability
def connect():
    """Opens a connection."""
    socket.create_connection(("127.0.0.1", 9))


@pyaichat.capability
def env_value(name: str) -> str:
    """A variable of the environment."""
    return os.environ[name]


@pyaichat.capability
def spin():
    """Never ends."""
    while True:
        pass
`

// capsHome is a home whose config names capability modules, found in
// the directory it returns (to put on PYTHONPATH): mytools, and brokenmod,
// which raises at import.
func capsHome(t *testing.T) (home, modules string) {
	t.Helper()
	home, modules = t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, ".config", "pyaichat", "config.toml"),
		"capability_modules = [\"brokenmod\", \"mytools\"]\n")
	writeFile(t, filepath.Join(modules, "mytools.py"), myTools)
	writeFile(t, filepath.Join(modules, "brokenmod.py"), "import pyaichat\n\nx = 1 / 0\n")
	return home, modules
}

// serviceToken is a secret in the environment of askWithCaps's pyaichat.
const serviceToken = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0"

// askWithCaps runs pyaichat -p against fake, with PYTHONPATH and a secret
// in MY_SERVICE_TOKEN, and returns its stderr.
func askWithCaps(t *testing.T, fake *fakeOpenAI, home, pythonPath string) string {
	t.Helper()
	cmd := exec.Command(binary, "--base-url", fake.URL, "--model", "m", "-p", "use my tools")
	cmd.Env = append(testEnv(home, ""), "PYTHONPATH="+pythonPath, "MY_SERVICE_TOKEN="+serviceToken)
	cmd.Dir = home
	var errb strings.Builder
	cmd.Stdin, cmd.Stderr = strings.NewReader(""), &errb
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("pyaichat -p: %v\n%s%s", err, out, errb.String())
	}
	return errb.String()
}

// A user's capability is offered to the model with its schema and
// description, is called by it, and its result is in the next request;
// it runs in the copy the built-in seven run in, so a file write and a
// connection are refused, an endless loop ends at the deadline, and a
// secret of the environment is wiped before it runs. A
// module that raises at import is one line at start, and the other's
// capabilities still work.
func TestUserCapabilitiesCalledByTheModel(t *testing.T) {
	t.Parallel()
	home, modules := capsHome(t)
	target := filepath.Join(home, "written.txt")
	fake := newFakeOpenAICalls(t,
		[2]string{"add", `{"a": 40}`},
		[2]string{"write_file", `{"path": "` + target + `"}`},
		[2]string{"connect", `{}`},
		[2]string{"spin", `{}`},
		[2]string{"add", `{"a": "forty"}`},
		[2]string{"env_value", `{"name": "MY_SERVICE_TOKEN"}`},
	)
	stderr := askWithCaps(t, fake, home, modules)

	// One line of pyaichat's own; the dim line of the answer follows.
	if n := strings.Count(stderr, "pyaichat:"); n != 1 || !strings.Contains(stderr,
		"pyaichat: capability module brokenmod (capability_modules): ZeroDivisionError: division by zero (brokenmod.py:3)") {
		t.Errorf("stderr, want one line for the broken module:\n%s", stderr)
	}
	reqs := fake.requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	tools := toolNamed(reqs[0], "add")
	if tools == nil {
		t.Fatalf("the first request offers no \"add\": %v", reqs[0]["tools"])
	}
	fn := tools["function"].(map[string]any)
	if fn["description"] != "Add two numbers." {
		t.Errorf("add's description is %q, want the docstring's first paragraph", fn["description"])
	}
	params, _ := fn["parameters"].(map[string]any)
	if req, _ := params["required"].([]any); len(req) != 1 || req[0] != "a" {
		t.Errorf("add's schema %v: want only \"a\" required", params)
	}

	results := toolMessages(fake)
	if len(results) != 6 {
		t.Fatalf("%d tool results, want 6: %q", len(results), results)
	}
	checks := []struct{ call, want string }{
		{"add", `{"result":{"sum":42,"label":null}}`},
		{"write_file", `"type":"Refused"`},
		{"connect", `"type":"Refused"`},
		{"spin", `"type":"Timeout"`},
		{"add with a string", `"type":"InvalidArguments"`},
		{"env_value", `{"result":"`},
	}
	for i, c := range checks {
		if !strings.Contains(results[i], c.want) {
			t.Errorf("%s sent back %s, want %s in it", c.call, results[i], c.want)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Errorf("write_file wrote %s", target)
	}
	for _, r := range fake.requests() {
		if b, _ := json.Marshal(r); strings.Contains(string(b), serviceToken[4:20]) {
			t.Errorf("the secret reached the model: %s", b)
		}
	}
}

// toolNamed is the tool named name offered in a request, or nil.
func toolNamed(req map[string]any, name string) map[string]any {
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		t, _ := t.(map[string]any)
		if fn, _ := t["function"].(map[string]any); fn["name"] == name {
			return t
		}
	}
	return nil
}

// An installed package registers its capabilities under the
// "pyaichat.capabilities" entry point: found in its dist-info on
// sys.path, with no configuration; found again from the cache of what
// each directory holds, and no longer once the package is removed.
func TestUserCapabilitiesFromAnEntryPoint(t *testing.T) {
	t.Parallel()
	home, site := t.TempDir(), t.TempDir()
	dist := filepath.Join(site, "shoutcaps-1.0.dist-info")
	writeFile(t, filepath.Join(dist, "METADATA"), "Metadata-Version: 2.1\nName: shoutcaps\nVersion: 1.0\n")
	writeFile(t, filepath.Join(dist, "entry_points.txt"), "[pyaichat.capabilities]\nshout = shoutcaps\n")
	writeFile(t, filepath.Join(site, "shoutcaps.py"), "import pyaichat\n\n"+
		"@pyaichat.capability\ndef shout(text: str) -> str:\n    \"\"\"Upper-cases text.\"\"\"\n    return text.upper() + '!'\n")
	for run := 1; run <= 2; run++ {
		fake := newFakeOpenAI(t, "shout", `{"text": "hello"}`)
		if stderr := askWithCaps(t, fake, home, site); strings.Contains(stderr, "pyaichat:") {
			t.Errorf("run %d: a problem at start: %s", run, stderr)
		}
		if results := toolMessages(fake); len(results) != 1 || results[0] != `{"result":"HELLO!"}` {
			t.Errorf("run %d: tool results %q, want shout's", run, results)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".cache", "pyaichat", "entry-points.json")); err != nil {
		t.Errorf("no cache: %v", err)
	}
	if err := os.RemoveAll(dist); err != nil {
		t.Fatal(err)
	}
	fake := newFakeOpenAI(t, "shout", `{"text": "hello"}`)
	askWithCaps(t, fake, home, site)
	if reqs := fake.requests(); len(reqs) == 0 || toolNamed(reqs[0], "shout") != nil {
		t.Errorf("a removed package's capability is still offered")
	}
}

// /tools lists the user's capabilities after the seven, marked with their
// module; /cap runs one with its arguments as JSON.
func TestPTYUserCapabilitiesInTools(t *testing.T) {
	t.Parallel()
	home, modules := capsHome(t)
	fake := newFakeOpenAI(t, "add", `{"a": 1}`)
	s := startREPLNoWait(t, home, []string{"OPENAI_BASE_URL=" + fake.URL, "OPENAI_API_KEY=sk-e2e-0123456789", "PYTHONPATH=" + modules})
	s.ExpectString("brokenmod")
	s.ExpectString("py> ")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "/tools")
	s.ExpectString("get_last_exception")
	s.ExpectString("add                  [yours, mytools] Add two numbers.")
	s.ExpectString("spin                 [yours, mytools] Never ends.")
	s.ExpectString("ai> ")
	enter(s, `/cap add {"a": 1, "b": 5}`)
	s.ExpectString(`"sum": 6`)
	s.ExpectString("ai> ")
	if n := len(fake.requests()); n != 0 {
		t.Errorf("/tools and /cap sent %d requests to the model", n)
	}
}

// The example of capabilities/README.md, describe_engine, summarises a
// SQLAlchemy engine and a MetaData of the session without connecting:
// the SQLite database it names is never created.
func TestUserCapabilityExampleDescribesAnEngine(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../capabilities/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Your own capabilities")
	_, code, _ := strings.Cut(section, "```python\n")
	code, _, found := strings.Cut(code, "```")
	if !found {
		t.Fatal("no python block in capabilities/README.md's \"Your own capabilities\"")
	}
	home, modules := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, ".config", "pyaichat", "config.toml"), "capability_modules = [\"dbtools\"]\n")
	writeFile(t, filepath.Join(modules, "dbtools.py"), code)
	db := filepath.Join(home, "shop.db")
	setup := "from sqlalchemy import create_engine, MetaData, Table, Column, Integer, String\n" +
		"engine = create_engine('sqlite:///" + db + "')\n" +
		"md = MetaData()\n" +
		"orders = Table('orders', md, Column('id', Integer, primary_key=True), Column('customer', String(80)))\n"
	fake := newFakeOpenAICalls(t,
		[2]string{"describe_engine", `{"metadata": "md"}`},
		[2]string{"describe_engine", `{"name": "md"}`},
	)
	cmd := exec.Command(binary, "--base-url", fake.URL, "--model", "m", "-p", "what is my engine?", "-c", setup)
	cmd.Env = append(testEnv(home, ""), "PYTHONPATH="+modules)
	cmd.Dir = home
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "pyaichat:") {
		t.Fatalf("pyaichat -p: %v\n%s", err, out)
	}
	results := toolMessages(fake)
	if len(results) != 2 {
		t.Fatalf("tool results %q", results)
	}
	for _, want := range []string{`"dialect":"sqlite"`, `"driver":"pysqlite"`, `"pool":`, `"orders":["id INTEGER","customer VARCHAR(80)"]`} {
		if !strings.Contains(results[0], want) {
			t.Errorf("describe_engine sent back %s, without %s", results[0], want)
		}
	}
	if want := `"type":"TypeError","message":"md is a MetaData, not an Engine"`; !strings.Contains(results[1], want) {
		t.Errorf("describe_engine(name=md) sent back %s, want %s", results[1], want)
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("the engine connected: %s exists", db)
	}
}

// pyaichat --capability runs a user capability too, its arguments a JSON
// object; a name that is no capability is still a usage error.
func TestCapabilityCommandRunsAUserCapability(t *testing.T) {
	t.Parallel()
	home, modules := capsHome(t)
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(binary, append([]string{"--capability"}, args...)...)
		cmd.Env = append(testEnv(home, ""), "PYTHONPATH="+modules)
		cmd.Dir = home
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	out, stderr, code := run("add", `{"a": 1, "label": "x"}`)
	want := `{"capability":"add","ok":true,"result":{"result":{"sum":3,"label":"x"}}}`
	if code != 0 || strings.TrimSpace(out) != want || !strings.Contains(stderr, "brokenmod") {
		t.Errorf("--capability add: %d %q, want %s; stderr %q", code, out, want, stderr)
	}
	out, stderr, code = run("no_such_capability")
	if code != 2 || out != "" || !strings.Contains(stderr, `unknown capability "no_such_capability"`) || !strings.Contains(stderr, "spin") {
		t.Errorf("an unknown name: %d %q, stderr %q", code, out, stderr)
	}
}
