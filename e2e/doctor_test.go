package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
)

// doctorRun is pyaichat doctor's output and exit status in a private home
// (dir) whose config file holds config (none when ""), written with mode.
type doctorRun struct {
	out    string
	status int
}

func runDoctor(t *testing.T, config string, mode os.FileMode, env []string, args ...string) doctorRun {
	t.Helper()
	dir := t.TempDir()
	if config != "" {
		cfgDir := filepath.Join(dir, ".config", "pyaichat")
		if err := os.MkdirAll(cfgDir, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(cfgDir, "config.toml")
		if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	cmd := exec.Command(binary, append([]string{"doctor"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(testEnv(dir, ""), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return doctorRun{string(out), exit.ExitCode()}
	case err != nil:
		t.Fatalf("pyaichat doctor: %v\n%s", err, out)
	}
	return doctorRun{string(out), 0}
}

// line is the lines of out about topic, or "".
func (r doctorRun) line(topic string) string {
	var lines []string
	for _, l := range strings.Split(r.out, "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && strings.HasPrefix(strings.Join(f[1:], " "), topic+" ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func (r doctorRun) expect(t *testing.T, status int, lines map[string]string, fix string) {
	t.Helper()
	if r.status != status {
		t.Errorf("exit status %d, want %d:\n%s", r.status, status, r.out)
	}
	for topic, want := range lines {
		if got := r.line(topic); !strings.Contains(got, want) {
			t.Errorf("the %s line is %q, want it to hold %q:\n%s", topic, got, want, r.out)
		}
	}
	last := strings.TrimRight(r.out, "\n")
	last = last[strings.LastIndexByte(last, '\n')+1:]
	if !strings.Contains(last, fix) {
		t.Errorf("last line %q, want it to hold %q", last, fix)
	}
}

const doctorKey = "sk-doctor-0123456789abcdefghij"

// A server that answers and lists the model, set up in a private config
// file: everything is ok and the status is 0.
func TestDoctorAllWell(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New(t)
	srv.SetModels("other", "m-doctor")
	r := runDoctor(t, "model = \"m-doctor\"\nbase_url = \""+srv.URL+"\"\napi_key = \""+doctorKey+"\"\n", 0o600, nil)
	r.expect(t, 0, map[string]string{
		"python":   "ok    python    " + pythonVersion(t),
		"config":   "ok    config    ",
		"base URL": srv.URL + " (config file)",
		"model":    "m-doctor is listed",
		"key":      "set (config file)",
		"server":   "answers GET /models (2 models)",
		"terminal": "stdout is not a terminal",
	}, "all is well")
	if strings.Contains(r.out, doctorKey) {
		t.Errorf("doctor printed the key:\n%s", r.out)
	}
}

// A key in a config file that others can read is a warning, the first
// thing to fix, even when everything else works.
func TestDoctorKeyInReadableFile(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New(t)
	srv.SetModels("m-doctor")
	r := runDoctor(t, "model = \"m-doctor\"\nbase_url = \""+srv.URL+"\"\napi_key = \""+doctorKey+"\"\n", 0o644, nil)
	r.expect(t, 1, map[string]string{
		"config": "warn  config    ",
		"model":  "m-doctor is listed",
	}, "first thing to fix: chmod 600 ")
	if !strings.Contains(r.line("config"), "holds an API key and others can read it (mode 0644)") {
		t.Errorf("config line: %q", r.line("config"))
	}
	// Without a key the same mode is fine.
	r = runDoctor(t, "model = \"m-doctor\"\nbase_url = \""+srv.URL+"\"\n", 0o644, nil)
	r.expect(t, 0, map[string]string{"config": "(mode 0644)"}, "all is well")
}

// A server that is down, one that refuses the key, and one that does not
// list the model each say what to fix, naming where the settings came from.
func TestDoctorServerProblems(t *testing.T) {
	t.Parallel()
	down := fakemodel.New(t)
	downURL := down.URL
	down.Close()
	r := runDoctor(t, "", 0, []string{"OPENAI_BASE_URL=" + downURL}, "--model", "m-flag")
	r.expect(t, 1, map[string]string{
		"base URL": downURL + " (env OPENAI_BASE_URL)",
		"model":    "m-flag (flag --model)",
		"key":      "none (a server of your own needs none)",
		"server":   "FAIL  server    nothing listening at " + downURL,
	}, "first thing to fix: start the server at "+downURL)

	refusing := fakemodel.New(t)
	refusing.FailModels(fakemodel.Reply{Status: 401, Error: "Incorrect API key provided", ErrorCode: "invalid_api_key"})
	r = runDoctor(t, "", 0, []string{"OPENAI_BASE_URL=" + refusing.URL, "OPENAI_API_KEY=" + doctorKey, "PYAICHAT_MODEL=m-env"})
	r.expect(t, 1, map[string]string{
		"model":  "m-env (env PYAICHAT_MODEL)",
		"key":    "set (env OPENAI_API_KEY)",
		"server": "401",
	}, "first thing to fix: the server refused the key (env OPENAI_API_KEY)")
	if strings.Contains(r.out, doctorKey) {
		t.Errorf("doctor printed the key:\n%s", r.out)
	}

	unlisted := fakemodel.New(t)
	unlisted.SetModels("a", "b")
	r = runDoctor(t, "", 0, []string{"OPENAI_BASE_URL=" + unlisted.URL}, "--model", "m-missing")
	r.expect(t, 1, map[string]string{
		"server": "answers GET /models (2 models)",
		"model":  "warn  model     the server does not list m-missing (it lists a, b)",
	}, "first thing to fix: pick a model the server lists")
}

// With nothing configured (a new user, or a machine with no network)
// doctor asks no server and says to configure a model.
func TestDoctorNothingConfigured(t *testing.T) {
	t.Parallel()
	r := runDoctor(t, "", 0, nil)
	r.expect(t, 1, map[string]string{
		"config":   "(none; pyaichat config edit makes one)",
		"base URL": "https://api.openai.com/v1 (default)",
		"model":    "gpt-4o (default)",
		"key":      "FAIL  key       none",
	}, "first thing to fix: configure a model")
	if r.line("server") != "" {
		t.Errorf("doctor asked a server with nothing configured:\n%s", r.out)
	}
	bad := runDoctor(t, "model = 1\n", 0o600, nil)
	bad.expect(t, 1, map[string]string{"config": "FAIL  config"}, "first thing to fix: fix ")
	usage := runDoctor(t, "", 0, nil, "somefile.py")
	if usage.status != 2 || !strings.Contains(usage.out, "doctor takes only") {
		t.Errorf("doctor with a file: status %d\n%s", usage.status, usage.out)
	}
}

// pythonVersion is the embedded Python's version, as python3 -V says it.
func pythonVersion(t *testing.T) string {
	out, err := exec.Command(pythonOracle, "-c", "import platform; print(platform.python_version())").Output()
	if err != nil {
		t.Fatalf("asking %s its version: %v", pythonOracle, err)
	}
	return strings.TrimSpace(string(out))
}

// On a terminal doctor reports TERM, the colours pyaichat will draw with,
// the setting that decided them, and the window's size.
func TestDoctorTerminal(t *testing.T) {
	t.Parallel()
	s := startProgram(t, binary, "", []string{"TERM=xterm-256color"}, "doctor")
	s.ExpectString("first thing to fix")
	s.ExpectExit()
	if !strings.Contains(s.Screen(), "terminal  TERM=xterm-256color, 256 colours (by the terminal), 100x30") {
		t.Errorf("screen:\n%s", s.Screen())
	}
	s = startProgram(t, binary, "", []string{"NO_COLOR=1"}, "doctor")
	s.ExpectString("first thing to fix")
	s.ExpectExit()
	if !strings.Contains(s.Screen(), "terminal  TERM=xterm, no colour (NO_COLOR=1), 100x30") || strings.Contains(s.Output(), "\x1b[3") {
		t.Errorf("with NO_COLOR=1: screen:\n%s\noutput %q", s.Screen(), s.Output())
	}
}

// A preset whose key variable is unset says which variable to set; a
// virtualenv is checked against the embedded Python's version, a bad
// --venv (which pyaichat refuses) failing and a bad $VIRTUAL_ENV (which it
// starts without) a warning.
func TestDoctorPresetKeyAndVenv(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New(t)
	srv.SetModels("m")
	r := runDoctor(t, "", 0, []string{"GROQ_API_KEY="}, "--provider", "groq", "--base-url", srv.URL, "--model", "m")
	r.expect(t, 1, map[string]string{
		"provider": "groq (flag --provider)",
		"key":      "FAIL  key       none, and provider groq reads it from $GROQ_API_KEY",
	}, "first thing to fix: set GROQ_API_KEY to your groq key")

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"good/pyvenv.cfg": "home = /usr/bin\nversion = " + pythonVersion(t) + "\n",
		"old/pyvenv.cfg":  "home = /usr/bin\nversion = 3.9.1\n",
	})
	cfg := "base_url = \"" + srv.URL + "\"\nmodel = \"m\"\n"
	r = runDoctor(t, cfg, 0o600, nil, "--venv", filepath.Join(dir, "good"))
	r.expect(t, 0, map[string]string{"venv": "ok    venv      " + filepath.Join(dir, "good") + " (Python "}, "all is well")
	r = runDoctor(t, cfg, 0o600, []string{"VIRTUAL_ENV=" + filepath.Join(dir, "old")})
	r.expect(t, 1, map[string]string{"venv": "warn  venv      virtualenv " + filepath.Join(dir, "old") + " is for Python 3.9.1"}, "or unset VIRTUAL_ENV")
	r = runDoctor(t, cfg, 0o600, nil, "--venv", filepath.Join(dir, "none"))
	r.expect(t, 1, map[string]string{"venv": "FAIL  venv"}, "or leave out --venv")
}
