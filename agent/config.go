package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	// BurntSushi/toml: the reference Go TOML decoder (TOML 1.0, no
	// dependencies, maintained for a decade); it reports undecoded keys,
	// which lets a typo in config.toml be an error instead of silence.

	"github.com/pyaichat/pyaichat/agent/event"
	"github.com/pyaichat/pyaichat/agent/llm"
	"github.com/pyaichat/pyaichat/agent/redact"
)

// DefaultBaseURL is OpenAI's API; any other base URL is a server that may
// not need a key (Ollama, llama.cpp, vLLM, LM Studio...).
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultModel is used when no flag, variable or file names one.
const DefaultModel = "gpt-4o"

// Config is everything the assistant needs: cmd/pyaichat/config fills
// the model, the server and the key from flags, environment, the config
// file and the presets; the bounds have defaults that tests shrink.
type Config struct {
	Model   string
	BaseURL string
	APIKey  string // never printed; String() hides it
	// KeyHint is what a rejected key tells the user to check: the
	// variable the key is read from ("" is OPENAI_API_KEY).
	KeyHint string
	// Source says where Model came from ("flag", "env", "file", "default",
	// "server"), for /model.
	Source string
	// Provider is the preset in use ("" for none); Local says that the
	// server is on the user's own machine (a preset that sends no key),
	// whose models are the ones the user pulled.
	Provider string
	Local    bool
	// SaveModel makes a model the default (/model NAME --save) and says
	// where it was saved; nil when there is nowhere to save it.
	SaveModel func(name string) (where string, err error)

	// Share is what may leave the machine (see privacy.go): ShareRedacted
	// (the default), ShareOff or ShareAsk.
	Share string
	// Confirm is asked under ShareAsk before each tool result is sent;
	// the result goes only if it returns true. It should end early with
	// ctx's error when ctx is cancelled (Ctrl-C). Nil means there is no
	// one to ask, and no result is sent.
	Confirm func(ctx context.Context, o event.Outgoing) (bool, error)
	// Environ is the environment whose secret-looking values are redacted
	// from what is sent (os.Environ() in pyaichat); HideEnv and AllowEnv
	// are names the user declares secret, or not secret.
	Environ           []string
	HideEnv, AllowEnv []string
	// Secrets is the filter of what is sent, when the caller built it
	// (Filter) to share with the capabilities and the ai> history rather
	// than have it built again; nil: NewConversation builds it.
	Secrets *redact.Filter

	// ContextWindow (tokens) and the prices (US dollars per million
	// tokens, when Priced) are the config file's; the server's model list
	// or a table of known models fill in what it leaves out.
	ContextWindow     int
	PriceIn, PriceOut float64
	Priced            bool

	// Instructions are the user's and the project's instructions files,
	// added to the system prompt; InstructionsHelp says where they go,
	// for /instructions when there are none.
	Instructions     []Instructions
	InstructionsHelp string

	MaxSteps        int           // tool-call rounds per question (8)
	MaxCallsPerStep int           // tool calls run from one response (8)
	QuestionTimeout time.Duration // wall clock for one question, all steps (3 min)
	ToolResultBytes int           // cap on each tool result sent to the model (4000)
	HistoryTokens   int           // budget for the conversation sent (12000, estimated)
	ContextBytes    int           // budget for the automatic session context (1500)

	// The provider's time and retry bounds, with its defaults.
	llm.Limits

	// Events, when set, is told of everything a question does as it
	// happens (events.go), for the session log and --json; it is called
	// on the question's goroutine and should return quickly.
	Events func(event.Event)
	// View makes the view of each question, which shows its events as
	// they happen and draws around the question under ShareAsk
	// (agent/view on a terminal or a pipe); nil shows nothing.
	View event.NewView

	// HTTPClient replaces the default client (tests); nil builds one with
	// ConnectTimeout.
	HTTPClient *http.Client
}

// String never shows the key, so a Config can be logged or printed safely.
func (c Config) String() string {
	key := "unset"
	if c.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("model=%s base_url=%s api_key=%s", c.Model, llm.DisplayURL(c.BaseURL), key)
}

// GoString keeps %#v from printing the key too.
func (c Config) GoString() string { return "agent.Config{" + c.String() + "}" }

// Configured reports whether a question can be sent: a key, or a base URL
// that is not OpenAI's (local servers need none).
func (c Config) Configured() bool {
	return c.APIKey != "" || !isOpenAI(c.BaseURL)
}

func isOpenAI(base string) bool {
	return strings.TrimRight(base, "/") == DefaultBaseURL
}

// withDefaults fills every zero bound.
func (c Config) withDefaults() Config {
	def := func(p *time.Duration, d time.Duration) {
		if *p <= 0 {
			*p = d
		}
	}
	defi := func(p *int, d int) {
		if *p <= 0 {
			*p = d
		}
	}
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Share == "" {
		c.Share = ShareRedacted
	}
	defi(&c.MaxSteps, 8)
	defi(&c.MaxCallsPerStep, 8)
	def(&c.QuestionTimeout, 3*time.Minute)
	defi(&c.ToolResultBytes, 4000)
	defi(&c.HistoryTokens, 12000)
	defi(&c.ContextBytes, 1500)
	c.Limits = c.Limits.WithDefaults()
	return c
}

// Check fills every zero bound with its default and refuses a share
// setting, base URL or key that cannot work, with a one-line error that
// never holds the key.
func (c Config) Check() (Config, error) {
	c = c.withDefaults()
	if err := CheckShare(c.Share); err != nil {
		return Config{}, err
	}
	if err := llm.CheckBaseURL(c.BaseURL); err != nil {
		return Config{}, errors.New(llm.RedactKey(err.Error(), c.APIKey))
	}
	if err := llm.CheckKey(c.APIKey, c.KeyHint); err != nil {
		return Config{}, err
	}
	return c, nil
}
