// Package capabilities is the one table of the read-only tools through which
// the assistant (and /cap, and --capability) looks at the live Python
// session. Each capability has a typed params struct (its JSON schema comes
// from the struct tags), a model-facing description (desc/NAME.md) and a
// JSON result computed by python/capabilities.py.
//
// Answers that need no user code are computed inside the session; anything
// that may run user code (an expression, a user __repr__, a signature) runs
// in a fork()ed, sandboxed copy of the session under a deadline
// (pybridge.CallIsolated), so that the session never changes. See README.md
// for exactly what is promised. Hook for the REPL: call
// Interp.PrepareIsolated on entering ai> mode (and DiscardIsolated on
// leaving it), so that the first call finds a ready copy of the session.
package capabilities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pyaichat/pyaichat/capabilities/spec"
	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/python"
)

// MaxExprBytes bounds an expression: no question about a session needs more,
// and a model that sends megabytes is malfunctioning.
const MaxExprBytes = 16 << 10

// Options bound what a call may cost.
type Options struct {
	// Deadline bounds every call that runs user code. Default 2s.
	Deadline time.Duration
	// ReprLimit bounds reprs, docs and tracebacks, in characters. Default 4096.
	ReprLimit int
	// MaxItems bounds the entries of list_globals and get_dir, and every
	// other list in a result. Default 200.
	MaxItems int
	// MaxResultBytes bounds a whole result, in bytes of JSON, whatever
	// its fields hold (a 10 MB class name, a 3000-class MRO). Default
	// 64 KiB, or 8 times ReprLimit if that is more.
	MaxResultBytes int
	// SecretEnv says which environment variables hold secrets: in the
	// copy where expressions run, their values are wiped before any
	// expression runs, so that no expression can read or transform them
	// (os.environ shows the name with a marker). Nil wipes none.
	SecretEnv func(name string) bool
	// SysPathKey names what decided the session's sys.path ("": unknown).
	// With it, the entry points' cache remembers that sys.path, and
	// LoadUser with no modules skips Python altogether when the cache
	// shows that nothing on it registers a capability.
	SysPathKey string
}

// Session is the Python session the capabilities look at, as they use
// it: the embedded interpreter (pybridge.Interp) or a Jupyter kernel.
// Call runs a function of a loaded helper module with one text argument,
// in the session or, for pybridge.CallIsolated, in a disposable copy of
// it under ctx's deadline; its failures are *pybridge.Error values.
type Session interface {
	LoadModule(name, source string) error
	Call(ctx context.Context, kind pybridge.CallKind, module, fn, arg string) (string, error)
	// PrepareIsolated asks for a copy ready for the next isolated call,
	// and DiscardIsolated lets it go; a session that cannot keep one
	// ignores both.
	PrepareIsolated()
	DiscardIsolated()
}

// Registry runs capabilities against one interpreter.
type Registry struct {
	in   Session
	opts Options

	mu     sync.Mutex
	loaded bool
	user   []UserSpec // LoadUser's
}

// New returns the registry for in. The Python helper is loaded on the first
// call, not here, so that start-up does not pay for importing inspect.
func New(in Session, opts Options) *Registry {
	if opts.Deadline <= 0 {
		opts.Deadline = 2 * time.Second
	}
	if opts.ReprLimit <= 0 {
		opts.ReprLimit = 4096
	}
	if opts.MaxItems <= 0 {
		opts.MaxItems = 200
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = max(64<<10, 8*opts.ReprLimit)
	}
	return &Registry{in: in, opts: opts}
}

// List describes every capability, in a stable order: the built-in seven,
// then the user's (LoadUser).
func (r *Registry) List() []spec.Spec {
	specs := spec.List()
	user := r.User()
	if len(user) == 0 {
		return specs
	}
	out := make([]spec.Spec, len(specs), len(specs)+len(user))
	copy(out, specs)
	for _, u := range user {
		out = append(out, u.Spec)
	}
	return out
}

// Names lists the capabilities' names.
func Names() []string { return spec.Names() }

// TakesExpr reports whether the named capability takes an expression.
func TakesExpr(name string) (takes, exists bool) {
	c, ok := spec.Find(name)
	return ok && c.TakesExpr(), ok
}

const helperModule = "_pyaichat_caps"

// request is what the Python helper receives.
type request struct {
	Cap       string          `json:"cap"`
	Expr      string          `json:"expr,omitempty"`
	Name      string          `json:"name,omitempty"` // a user capability's
	Args      json.RawMessage `json:"args,omitempty"` // a user capability's
	Limit     int             `json:"limit"`
	MaxItems  int             `json:"max_items"`
	MaxBytes  int             `json:"max_bytes"`
	SecretEnv []string        `json:"secret_env,omitempty"`
}

// envelope is what the Python helper returns.
type envelope struct {
	OK      json.RawMessage `json:"ok"`
	Error   *spec.Error     `json:"error"`
	Isolate bool            `json:"isolate"`
	Env     []string        `json:"env"` // with Isolate: the environment's names
}

// inSession runs the helper's first step in the session. It needs the GIL,
// which a thread of the user's stuck in C code (a threading.Thread summing
// range(10**12)) can hold for as long as it runs: the wait is then given
// up at the call's deadline, like an isolated call, so that a question is
// never stuck behind it (the step still runs, unread, when the GIL comes
// back). A read-only call keeps a ready copy of the session
// (PrepareIsolated); a capability that reads source lines into linecache
// for the copy (ReadsSource), a change that an earlier copy would miss,
// makes a helper call instead.
func (r *Registry) inSession(ctx context.Context, name string, body []byte) (string, *spec.Error) {
	if err := r.load(); err != nil {
		return "", &spec.Error{Type: spec.Internal, Message: err.Error()}
	}
	callCtx, cancel := context.WithTimeout(ctx, r.opts.Deadline)
	defer cancel()
	var out string
	var err error
	if c, _ := spec.Find(name); c.ReadsSource {
		out, err = r.in.Call(callCtx, pybridge.CallHelper, helperModule, "inproc", string(body))
	} else {
		out, err = r.in.Call(callCtx, pybridge.CallReadOnly, helperModule, "inproc", string(body))
	}
	switch {
	case ctx.Err() != nil: // the question's own end, not this call's
		return "", contextError(ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		e := contextError(err)
		e.Message = name + ": the session's Python is held by one of its threads (running C code?): " + e.Message
		return "", e
	case err != nil:
		return "", fromBridge(name, err)
	}
	return out, nil
}

// contextError is the capability error for a call's context ending.
func contextError(err error) *spec.Error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &spec.Error{Type: spec.Timeout, Message: err.Error()}
	}
	return &spec.Error{Type: spec.Canceled, Message: err.Error()}
}

// Call runs the named capability with args (a JSON object; empty or null
// means no arguments) and returns its JSON result, or an error that is a
// *spec.Error: the failure, structured, that the model is shown.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	res, cerr := r.call(ctx, name, args)
	if cerr != nil {
		return nil, cerr
	}
	return res, nil
}

// call is Call with its error's type.
func (r *Registry) call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, *spec.Error) {
	var req request
	var cerr *spec.Error
	if c, ok := spec.Find(name); ok {
		req, cerr = parseArgs(c, args)
	} else if r.userCap(name) {
		req, cerr = userRequest(name, args)
	} else {
		cerr = r.unknown(name)
	}
	if cerr != nil {
		return nil, cerr
	}
	return r.run(ctx, name, req)
}

// run runs a checked request for the named capability.
func (r *Registry) run(ctx context.Context, name string, req request) (json.RawMessage, *spec.Error) {
	if err := ctx.Err(); err != nil {
		return nil, contextError(err)
	}
	req.Limit, req.MaxItems, req.MaxBytes = r.opts.ReprLimit, r.opts.MaxItems, r.opts.MaxResultBytes
	body, err := json.Marshal(req)
	if err != nil {
		return nil, &spec.Error{Type: spec.Internal, Message: err.Error()}
	}

	// First in the session, where only code that runs no user code answers;
	// then, if that code says the answer needs user code, in a copy.
	out, cerr := r.inSession(ctx, name, body)
	if cerr != nil {
		return nil, cerr
	}
	env, cerr := decode(name, out)
	if cerr != nil {
		return nil, cerr
	}
	if env.Isolate {
		if body, cerr = r.isolatedRequest(req, env.Env); cerr != nil {
			return nil, cerr
		}
		isoCtx, cancel := context.WithTimeout(ctx, r.opts.Deadline)
		out, err = r.in.Call(isoCtx, pybridge.CallIsolated, helperModule, "isolated", string(body))
		cancel()
		// One answer often makes several calls: have a copy ready for the
		// next (forked once the session is idle; a py> statement drops it).
		r.in.PrepareIsolated()
		if err != nil {
			return nil, fromBridge(name, err)
		}
		if env, cerr = decode(name, out); cerr != nil {
			return nil, cerr
		}
		if env.Isolate {
			return nil, &spec.Error{Type: spec.Internal, Message: name + ": the isolated helper asked for isolation"}
		}
	}
	// The helper bounds what it returns; but user code runs in the copy
	// and can replace the helper's functions there or write a result of
	// its own, so the result is shaped and bounded here too.
	if env.Error != nil {
		return nil, &spec.Error{Type: clip(env.Error.Type, maxErrorType), Message: clip(env.Error.Message, maxErrorMessage)}
	}
	if len(env.OK) > r.opts.MaxResultBytes {
		return nil, &spec.Error{Type: spec.Internal, Message: fmt.Sprintf("%s: the result is %d bytes, over the %d-byte bound", name, len(env.OK), r.opts.MaxResultBytes)}
	}
	res, err := shape(env.OK, r.opts.ReprLimit+64, r.opts.MaxItems)
	if err != nil {
		return nil, &spec.Error{Type: spec.Internal, Message: fmt.Sprintf("%s: malformed result: %v", name, err)}
	}
	return res, nil
}

// isolatedRequest is the request for the copy: req, and the names among
// the session's environment (names) whose values the copy must wipe.
func (r *Registry) isolatedRequest(req request, names []string) ([]byte, *spec.Error) {
	if r.opts.SecretEnv != nil {
		for _, n := range names {
			if r.opts.SecretEnv(n) {
				req.SecretEnv = append(req.SecretEnv, n)
			}
		}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, &spec.Error{Type: spec.Internal, Message: err.Error()}
	}
	return body, nil
}

// Bounds of an error's fields, in bytes: the helper cuts a type name at
// 3 x 200 characters and a message at 2000 (escapes may make either
// longer in bytes).
const (
	maxErrorType    = 2 << 10
	maxErrorMessage = 8 << 10
)

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// s[n] is the first byte dropped: a continuation byte means the cut
	// would split a rune.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// CallText runs a capability from a command line (/cap NAME [EXPR],
// --capability NAME [EXPR]): expr is the expression, or "" for none; for
// one of the user's capabilities, its arguments as a JSON object.
func (r *Registry) CallText(ctx context.Context, name, expr string) (json.RawMessage, error) {
	res, cerr := r.callText(ctx, name, expr)
	if cerr != nil {
		return nil, cerr
	}
	return res, nil
}

// callText is CallText with its error's type.
func (r *Registry) callText(ctx context.Context, name, expr string) (json.RawMessage, *spec.Error) {
	c, ok := spec.Find(name)
	if !ok {
		if !r.userCap(name) {
			return nil, r.unknown(name)
		}
		args, cerr := userArgsText(name, expr)
		if cerr != nil {
			return nil, cerr
		}
		return r.call(ctx, name, args)
	}
	if !c.TakesExpr() {
		if strings.TrimSpace(expr) != "" {
			return nil, invalid("%s takes no expression", name)
		}
		return r.call(ctx, name, nil)
	}
	args, err := json.Marshal(spec.ExprParams{Expr: expr})
	if err != nil {
		return nil, invalid("%s: %v", name, err)
	}
	return r.call(ctx, name, args)
}

// Prepare readies the registry for calls expected soon (the user is at
// ai>): it loads the Python helper now, a job that would otherwise discard
// the session's ready copy at the first call, and asks pybridge for a ready
// copy, so that isolated evaluations need not fork while the user waits.
// It takes one short job on the interpreter's thread.
func (r *Registry) Prepare() error {
	if err := r.load(); err != nil {
		return err
	}
	r.in.PrepareIsolated()
	return nil
}

// Release lets the ready copy go (the user is back at py>), so that it
// does not hold the session's memory while nobody asks.
func (r *Registry) Release() { r.in.DiscardIsolated() }

func (r *Registry) load() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.loaded {
		return nil
	}
	if err := r.in.LoadModule(helperModule, python.Capabilities); err != nil {
		return fmt.Errorf("loading the capabilities helper: %w", err)
	}
	r.loaded = true
	return nil
}

func invalid(format string, a ...any) *spec.Error {
	return &spec.Error{Type: spec.InvalidArguments, Message: fmt.Sprintf(format, a...)}
}

// parseArgs checks a call before any Python runs: its arguments decoded
// into the capability's parameter struct (spec.Capability.Params), with
// no argument that the struct lacks, and an expression that is text of a
// sane size.
func parseArgs(c spec.Capability, args json.RawMessage) (request, *spec.Error) {
	req := request{Cap: c.Name}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	params := reflect.New(reflect.TypeOf(c.Params))
	if cerr := decodeParams(c, args, params.Interface()); cerr != nil {
		return req, cerr
	}
	p, ok := params.Elem().Interface().(spec.ExprParams)
	if !ok {
		return req, nil
	}
	switch {
	case strings.TrimSpace(p.Expr) == "":
		return req, invalid("%s: \"expr\" is missing or empty (a Python expression)", c.Name)
	case len(p.Expr) > MaxExprBytes:
		return req, invalid("%s: \"expr\" is %d bytes; the limit is %d", c.Name, len(p.Expr), MaxExprBytes)
	case strings.ContainsRune(p.Expr, 0):
		return req, invalid("%s: \"expr\" contains a NUL character", c.Name)
	}
	req.Expr = p.Expr
	return req, nil
}

// decodeParams decodes args, one JSON object, into params (a pointer to
// c's parameter struct), refusing any argument the struct has no field
// for, by its exact name: encoding/json alone would match a field whatever
// the case ("EXPR" for "expr"), and DisallowUnknownFields with it. The
// errors say what the model must change.
func decodeParams(c spec.Capability, args []byte, params any) *spec.Error {
	names := paramNames(reflect.TypeOf(c.Params))
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(args, &fields); err != nil {
		return invalid("%s: arguments must be a JSON object: %v", c.Name, err)
	}
	for k := range fields {
		if !slices.Contains(names, k) {
			return invalid("%s: unexpected argument %q; %s", c.Name, k, takesOnly(names))
		}
	}
	var typeErr *json.UnmarshalTypeError
	switch err := json.Unmarshal(args, params); {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return invalid("%s: %q must be a %s", c.Name, typeErr.Field, typeErr.Type.Kind())
	default:
		return invalid("%s: arguments must be a JSON object: %v", c.Name, err)
	}
}

// takesOnly says which arguments a capability takes.
func takesOnly(names []string) string {
	if len(names) == 0 {
		return "it takes none"
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	return "it takes only " + strings.Join(quoted, ", ")
}

// paramNames are the JSON names of a parameter struct's fields, read once
// per struct type.
func paramNames(t reflect.Type) []string {
	if names, ok := paramNamesOf.Load(t); ok {
		return names.([]string)
	}
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	paramNamesOf.Store(t, names)
	return names
}

var paramNamesOf sync.Map // reflect.Type to []string

func decode(name, out string) (envelope, *spec.Error) {
	var env envelope
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		return env, &spec.Error{Type: spec.Internal, Message: fmt.Sprintf("%s: unreadable helper result: %v", name, err)}
	}
	if env.OK == nil && env.Error == nil && !env.Isolate {
		return env, &spec.Error{Type: spec.Internal, Message: name + ": empty helper result"}
	}
	return env, nil
}

func fromBridge(name string, err error) *spec.Error {
	var pe *pybridge.Error
	if errors.As(err, &pe) {
		return &spec.Error{Type: pe.Type, Message: pe.Message}
	}
	return &spec.Error{Type: spec.Internal, Message: fmt.Sprintf("%s: %v", name, err)}
}
