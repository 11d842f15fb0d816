package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pyaichat/pyaichat/agent/fakemodel"
)

// Secrets the red team piped to -p, built here so that no literal looks
// live.
var (
	trustAWSSecret = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	trustBearer    = "Qx7kPz9mLw3vRt5u" + "eyJ0eXAiOiJKV1Qi"
	trustURLPass   = "Zq8-pw-" + "Kd81rT"
)

// Text piped to -p is part of the question, and is filtered like all the
// rest under every policy: the configured key, an AWS secret, a bearer
// token and a URL password never reach the provider.
func TestPipedQuestionIsFiltered(t *testing.T) {
	t.Parallel()
	stdin := fakeOpenAIKey + " is my key\naws_secret_access_key=" + trustAWSSecret +
		"\ncurl -H 'Authorization: Bearer " + trustBearer + "' https://api.example.com\n" +
		"DATABASE_URL=postgres://app:" + trustURLPass + "@db:5432/orders\n"
	for _, share := range []string{"redacted", "off", "ask"} {
		t.Run(share, func(t *testing.T) {
			t.Parallel()
			fake := newFakeOpenAI(t, "list_globals", `{}`)
			home := t.TempDir()
			writeConfig(t, home, "share = \""+share+"\"\n")
			cmd := exec.Command(binary, "-p", "explain")
			cmd.Env = append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY="+fakeOpenAIKey)
			cmd.Stdin = strings.NewReader(stdin)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("pyaichat -p: %v\nstderr: %s", err, stderr.String())
			}
			sent := sentText(t, fake)
			for _, s := range []string{fakeOpenAIKey, trustAWSSecret, trustBearer, trustURLPass} {
				if strings.Contains(sent, s) {
					t.Errorf("%q reached the provider:\n%s", s, sent)
				}
			}
			for _, m := range []string{"API key", "AWS secret key", "password in URL"} {
				if !strings.Contains(sent, m) {
					t.Errorf("no %q marker in what was sent:\n%s", m, sent)
				}
			}
		})
	}
}

// A question typed at ai> is filtered too.
func TestPTYTypedQuestionIsFiltered(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "list_globals", `{}`)
	s := startREPLNoWait(t, t.TempDir(), []string{"OPENAI_BASE_URL=" + fake.URL, "OPENAI_API_KEY=" + fakeOpenAIKey, "PYAICHAT_MODEL=fake-model"})
	s.ExpectString("py> ")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "is "+fakeGitHub+" or "+fakeOpenAIKey+" valid?")
	s.ExpectString("The tool said")
	s.ExpectString("ai> ")
	s.Send("\x04")
	assertExit(t, s, 0)
	sent := sentText(t, fake)
	for _, secret := range []string{fakeGitHub, fakeOpenAIKey} {
		if strings.Contains(sent, secret) {
			t.Errorf("%q reached the provider:\n%s", secret, sent)
		}
	}
	if !strings.Contains(sent, "GitHub token") {
		t.Errorf("no GitHub marker in what was sent:\n%s", sent)
	}
}

// A conversation resumed under share = "off" or "ask" sends none of the
// earlier session's tool values, to another provider as to the same one;
// under "redacted" it is filtered again.
func TestPTYResumeHoldsTodaysShare(t *testing.T) {
	t.Parallel()
	const orchard = "plum-orchard-" + "5519"
	for _, share := range []string{"off", "ask", "redacted"} {
		t.Run(share, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			first := newChatFake(t)
			s := startREPLNoWait(t, home, first.env())
			s.ExpectString("py> ")
			typeLine(t, s, "a = '"+orchard+"'", "")
			s.Send("\t")
			s.ExpectString("ai> ")
			enter(s, "what is in a?")
			s.ExpectString("Answer 1")
			s.ExpectString("ai> ")
			s.Send("\x04")
			assertExit(t, s, 0)
			if !strings.Contains(strings.Join(toolMessagesOf(first.requests()[1]), ""), orchard) {
				t.Fatalf("the first session's provider never saw the value: the test proves nothing")
			}

			writeConfig(t, home, "share = \""+share+"\"\n")
			second := newChatFake(t) // another provider
			s = startREPLNoWait(t, home, second.env(), "--continue")
			s.ExpectString("run them again now? [y/N] ")
			s.Send("n")
			s.ExpectString("py> ")
			s.Send("\t")
			s.ExpectString("ai> ")
			enter(s, "and b?")
			if share == "ask" {
				s.ExpectString(askQuestion)
				s.Send("n")
			}
			s.ExpectString("Answer 1")
			s.ExpectString("ai> ")
			s.Send("\x04")
			assertExit(t, s, 0)
			sent, _ := json.Marshal(second.requests())
			leaked := strings.Contains(string(sent), orchard)
			if share != "redacted" && (leaked || !strings.Contains(string(sent), "withheld")) {
				t.Errorf("share = %s: the earlier tool value went to the new provider:\n%s", share, sent)
			}
			if share == "redacted" && !leaked {
				t.Errorf("share = redacted: the earlier result was not replayed:\n%s", sent)
			}
		})
	}
}

// askCalls runs pyaichat -p with setup code against a fake provider whose
// model makes the given tool calls at once; it returns every request
// body the provider received.
func askCalls(t *testing.T, env []string, setup string, calls ...[2]string) string {
	t.Helper()
	fake := newFakeOpenAICalls(t, calls...)
	home := t.TempDir()
	cmd := exec.Command(binary, "-p", "tell me", "-c", setup)
	cmd.Env = append(append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.URL), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat -p: %v\nstderr: %s", err, stderr.String())
	}
	return sentText(t, fake)
}

// A secret the session holds in a Python object (the key the user showed
// at py>) reaches the provider in none of the encodings the model can ask
// for; variables whose values are secret though their names are not
// (DATABASE_URL, MYAPP_PW) are wiped in the copy.
func TestTransformedSecretsNeverReachTheProvider(t *testing.T) {
	t.Parallel()
	const dbPass = "Vq7-pw-" + "Rt55kLm"
	const appPW = "hunter2-" + "Zx81qQ"
	env := []string{"OPENAI_API_KEY=" + fakeOpenAIKey, "DATABASE_URL=postgres://app:" + dbPass + "@db/orders", "MYAPP_PW=" + appPW}
	exprs := []string{
		"' '.join(_k)", "_k.encode().hex()", "_k[10:16]", "_k[20:27]", "[ord(c) for c in _k]",
		"list(_k.encode())", "_k[::-1]", "base64.b64encode(_k.encode())",
		"','.join(_k[::-1])", "[hex(ord(c)) for c in _k[8:20]]", "_k[8:20].encode().hex()",
		"os.environ['DATABASE_URL'][::-1]", "os.environ['MYAPP_PW']", "' '.join(os.environ['MYAPP_PW'])",
	}
	var sent string
	for i := 0; i < len(exprs); i += 7 { // a step runs at most 8 calls
		var calls [][2]string
		for _, e := range exprs[i:min(i+7, len(exprs))] {
			b, _ := json.Marshal(map[string]string{"expr": e})
			calls = append(calls, [2]string{"eval_expr", string(b)})
		}
		sent += askCalls(t, env, "import os, base64\n_k = os.environ['OPENAI_API_KEY']", calls...)
	}
	key := fakeOpenAIKey
	hexKey := hex.EncodeToString([]byte(key))
	leaks := []string{
		strings.Join(strings.Split(key, ""), " "), hexKey, key[10:16], key[20:27], reverse(key),
		reverse(dbPass), appPW, strings.Join(strings.Split(appPW, ""), " "), hexKey[16:40],
	}
	for _, l := range leaks {
		if strings.Contains(sent, l) {
			t.Errorf("%q reached the provider", l)
		}
	}
	if strings.Contains(sent, "115, 107, 45, 112") || strings.Contains(sent, "0x41', '0x62', '0x33") {
		t.Errorf("the key's code points reached the provider:\n%s", sent)
	}
	// A wiped variable's marker comes back transformed with it.
	if n := strings.Count(sent, "<redacted: ") + strings.Count(sent, "detcader<") + strings.Count(sent, "< r e d a c t e d"); n < len(exprs) {
		t.Errorf("%d markers for %d transformed secrets:\n%s", n, len(exprs), sent)
	}
	if strings.Contains(sent, "Refused") || strings.Contains(sent, "TooManyCalls") {
		t.Errorf("a transformation did not run:\n%s", sent)
	}
}

// hostileSetup replaces builtins the helpers could call with spies, swaps
// os's class for one whose attribute reads are spied on, puts a fake
// pandas in sys.modules whose DataFrame's __dict__ and BlockManager's axes
// are spying properties, and sets a profiler and a tracer that report any
// frame of pyaichat's capabilities helper or of the stdlib it uses. Each
// spy writes "SPY ..." to stderr.
const hostileSetup = `
import builtins, os, sys, types
_w = os.write
def _spy(tag, f):
    def spy(*a, **k):
        _w(2, ("SPY " + tag + "\n").encode())
        return f(*a, **k)
    return spy
class _SpyModule(types.ModuleType):
    def __getattribute__(self, name):
        _w(2, ("SPY os." + name + "\n").encode())
        return types.ModuleType.__getattribute__(self, name)
pd, frame = types.ModuleType("pandas"), types.ModuleType("pandas.core.frame")
class Index: pass
class BlockManager:
    axes = property(_spy("BlockManager.axes", lambda self: [Index(), Index()]))
class DataFrame:
    __dict__ = property(_spy("DataFrame.__dict__", lambda self: {"_mgr": BlockManager()}))
for _c in (Index, BlockManager, DataFrame):
    _c.__module__ = "pandas.core.frame"
    setattr(frame, _c.__name__, _c)
pd.Index, pd.DataFrame = Index, DataFrame
sys.modules["pandas"], sys.modules["pandas.core.frame"] = pd, frame
df = DataFrame()
df._mgr = BlockManager()
nums = [3, 1, 2]
def _fail():
    raise ValueError("boom")
try:
    _fail()
except ValueError as _e:
    sys.last_type, sys.last_value, sys.last_traceback = type(_e), _e, _e.__traceback__
def _watch(frame, event, arg):
    f = frame.f_code.co_filename
    if "_pyaichat_caps" in f or "/json/" in f or "linecache" in f or "inspect" in f:
        _w(2, ("SPY " + event + " " + f + "\n").encode())
for _n in ("repr", "len", "max", "min", "isinstance", "issubclass", "getattr", "hasattr", "sorted",
           "any", "all", "sum", "iter", "next", "id", "hash", "format", "print", "__import__",
           "callable", "setattr", "vars", "dir", "open", "ascii", "divmod", "round", "abs"):
    builtins.__dict__[_n] = _spy(_n, builtins.__dict__[_n])
sys.setprofile(_watch)
sys.settrace(_watch)
os.__class__ = _SpyModule
`

// The capabilities that answer in the session (list_globals, get_type,
// get_repr of builtin values, get_last_exception), and the helper's
// loading at the first of them, call none of the user's replaced
// builtins, read no attribute of a module whose class was swapped, run no
// property of a fake pandas, and show no frame to the user's profiler or
// tracer.
func TestHelpersRunNoUserCode(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAICalls(t,
		[2]string{"list_globals", `{}`}, [2]string{"get_type", `{"expr":"nums"}`},
		[2]string{"get_repr", `{"expr":"nums"}`}, [2]string{"get_last_exception", `{}`},
		[2]string{"get_type", `{"expr":"df"}`})
	home := t.TempDir()
	cmd := exec.Command(binary, "-p", "tell me", "-c", hostileSetup)
	cmd.Env = append(testEnv(home, ""), "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=sk-e2e-key-0123456789")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyaichat -p: %v\nstderr: %s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "SPY") {
		t.Errorf("user code ran for pyaichat's helpers:\n%s", stderr.String())
	}
	results := strings.Join(toolMessages(fake), "\n")
	for _, want := range []string{`"name":"nums"`, `"repr":"[3, 1, 2]"`, `"message":"boom"`, `"type":"pandas.core.frame.DataFrame"`} {
		if !strings.Contains(results, want) {
			t.Errorf("no %s in the tool results:\n%s", want, results)
		}
	}
}

// A local variable named password and password=VALUE in an exception
// message reach the provider neither through get_last_exception nor
// through the automatic context.
func TestPasswordNamedValuesNeverReachTheProvider(t *testing.T) {
	t.Parallel()
	const local, inMessage = "plum-" + "Orchard77", "Zx81-" + "qQhunter"
	setup := "def login(user):\n    password = '" + local + "'\n    raise ValueError('login failed for ' + user + ': password=" + inMessage + "')\n" +
		"import sys\ntry:\n    login('admin')\nexcept ValueError as e:\n    sys.last_type, sys.last_value, sys.last_traceback = type(e), e, e.__traceback__\n" +
		"    print(e)\n"
	sent := askCalls(t, []string{"OPENAI_API_KEY=sk-e2e-key-0123456789"}, setup, [2]string{"get_last_exception", `{}`})
	for _, s := range []string{local, inMessage} {
		if strings.Contains(sent, s) {
			t.Errorf("%q reached the provider:\n%s", s, sent)
		}
	}
	if !strings.Contains(sent, "value of a variable named as a secret") || !strings.Contains(sent, "login failed for admin: password=<redacted: password") {
		t.Errorf("no markers where the values were:\n%s", sent)
	}
}

// A config file that is a FIFO, a symlink to /dev/zero or over 1 MiB is
// refused at once with one line naming it, and the session still starts
// (or -p exits 2): nothing hangs and memory does not grow.
func TestConfigFileMustBeARegularFile(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		make func(t *testing.T, path string)
		want string
	}{
		"fifo": {func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a FIFO)"},
		"dev zero": {func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a character device)"},
		"too big": {func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("# "+strings.Repeat("x", 2<<20)+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "over the 1048576-byte limit"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			dir := filepath.Join(home, ".config", "pyaichat")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			c.make(t, filepath.Join(dir, "config.toml"))
			for _, args := range [][]string{{"-c", "print(6 * 7)"}, {"-p", "hi"}} {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound on a hang only
				cmd := exec.CommandContext(ctx, binary, args...)
				cmd.Env = testEnv(home, "")
				cmd.Stdin = strings.NewReader("")
				var stdout, stderr strings.Builder
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				hung := ctx.Err() != nil
				cancel()
				if hung {
					t.Fatalf("%v hung on the config file", args)
				}
				line, _, _ := strings.Cut(stderr.String(), "\n")
				if strings.Count(stderr.String(), "config.toml") != 1 || !strings.Contains(line, "config.toml: ") || !strings.Contains(line, c.want) {
					t.Errorf("%v: stderr %q, want one line saying %q", args, stderr.String(), c.want)
				}
				if args[0] == "-c" && (err != nil || stdout.String() != "42\n") {
					t.Errorf("%v: %v, stdout %q: the session did not run", args, err, stdout.String())
				}
			}
		})
	}
}

// A session killed (SIGKILL) while an answer streams keeps the part shown
// in its log: sessions show prints it, said cut short.
func TestPTYKillKeepsThePartialAnswer(t *testing.T) {
	t.Parallel()
	srv := fakemodel.New(t, fakemodel.Reply{Pieces: []string{"the orchard has forty plum trees\n", "never"}, Pause: 1})
	home := t.TempDir()
	s := startREPLNoWait(t, home, []string{"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=sk-x", "PYAICHAT_MODEL=fake"})
	s.ExpectString("py> ")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "how many trees?")
	s.ExpectString("forty plum trees\r\n")
	if err := syscall.Kill(s.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.ExpectSignaled()
	logs := logsOf(t, home)
	if len(logs) != 1 {
		t.Fatalf("%d logs, want 1", len(logs))
	}
	id, _ := logs[0][0]["id"].(string)
	out, errOut, status := pyaichatCmd(t, home, nil, "sessions", "show", id)
	if status != 0 || !strings.Contains(out, "the orchard has forty plum trees") || !strings.Contains(out, "cut short") {
		t.Errorf("sessions show (status %d) lacks the partial answer:\n%s\n%s", status, out, errOut)
	}
}

// A key typed at ai> is kept in the history file no more than in the
// session log: both hold it redacted.
func TestPTYHistoryAIHoldsNoKey(t *testing.T) {
	t.Parallel()
	fake := newFakeOpenAI(t, "list_globals", `{}`)
	home := t.TempDir()
	s := startREPLNoWait(t, home, []string{"OPENAI_BASE_URL=" + fake.URL, "OPENAI_API_KEY=" + fakeOpenAIKey, "PYAICHAT_MODEL=fake-model"})
	s.ExpectString("py> ")
	s.Send("\t")
	s.ExpectString("ai> ")
	enter(s, "why does "+fakeOpenAIKey+" or "+fakeGitHub+" fail?")
	s.ExpectString("The tool said")
	s.ExpectString("ai> ")
	s.Send("\x04")
	assertExit(t, s, 0)
	history := readFile(t, filepath.Join(home, ".local", "state", "pyaichat", "history-ai"))
	logged, _ := json.Marshal(logsOf(t, home))
	for _, secret := range []string{fakeOpenAIKey, fakeGitHub} {
		if strings.Contains(history, secret) || strings.Contains(string(logged), secret) {
			t.Errorf("%q is on disk:\nhistory-ai: %s\nlog: %s", secret, history, logged)
		}
	}
	if !strings.Contains(history, "why does <redacted: ") {
		t.Errorf("history-ai lost the question: %q", history)
	}
}

// A 200 response of random bytes labelled an event stream is an error
// (pyaichat -p exits 1 saying so), not an empty answer.
func TestRandomBytesAreNoAnswer(t *testing.T) {
	t.Parallel()
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(i*131 + i/7*17 + 3)
	}
	srv := fakemodel.New(t, fakemodel.Reply{Body: string(random), ContentType: "text/event-stream"})
	cmd := exec.Command(binary, "-p", "hi")
	cmd.Env = append(testEnv(t.TempDir(), ""), "OPENAI_BASE_URL="+srv.URL, "OPENAI_API_KEY=sk-x")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "holds no event") || strings.Contains(stderr.String(), "empty answer") {
		t.Errorf("exit %v, stderr %q: want status 1 saying the stream holds no event", err, stderr.String())
	}
}

// A result frame written by user code in the copy (here a replaced
// _finish, as a hostile __repr__ can do) is shown by /cap with its escape
// sequences spelled out: the terminal is neither retitled nor cleared.
func TestPTYCapShowsAForgedFrameHarmlessly(t *testing.T) {
	t.Parallel()
	s := startREPLNoWait(t, t.TempDir(), nil)
	s.ExpectString("py> ")
	typeLine(t, s, "import sys", "")
	s.Send("\t")
	s.ExpectString("ai> ")
	forge := `/cap eval_expr setattr(sys.modules['_pyaichat'].helper('_pyaichat_caps'), '_finish', ` +
		`lambda res, a: '{"ok": {"repr": "\\u001b]0;pwned\\u0007\\u001b[2Jgone"}}')`
	enter(s, forge)
	s.ExpectString(`repr: \x1b]0;pwned\x07\x1b[2Jgone`)
	s.ExpectString("ai> ")
	if strings.Contains(s.Output(), "\x1b]0;pwned") || strings.Contains(s.Output(), "\x1b[2Jgone") {
		t.Errorf("the forged frame reached the terminal raw:\n%q", s.Output())
	}
}
