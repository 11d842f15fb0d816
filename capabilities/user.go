package capabilities

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pyaichat/pyaichat/capabilities/spec"
	"github.com/pyaichat/pyaichat/pybridge"
	"github.com/pyaichat/pyaichat/python"
)

// UserSpec is one of the user's own capabilities: what the model is told,
// and the module that defined it (for /tools).
type UserSpec struct {
	spec.Spec
	Module string
}

const userHelperModule = "_pyaichat_usercaps"

// maxUserArgsBytes bounds a user capability's arguments, as a call's
// expression is bounded.
const maxUserArgsBytes = MaxExprBytes

// LoadUser imports the user's capability modules, once, before the first
// question: modules (the config's capability_modules) and those that
// installed packages register under the "pyaichat.capabilities" entry
// point. Each function they decorate with @pyaichat.capability is a
// capability from then on, run as the built-in seven are (in a copy of
// the session, under the same deadline, bounds and refusals). It returns
// one line per problem (a module that fails to import, a function that
// cannot be a tool); the rest load. A module's own code runs here, in the
// session, as an import at py> would, so that the copy, which refuses
// imports, finds what it imports already there.
//
// cacheFile ("": none) keeps, from one start to the next, which
// directories on sys.path hold a package that registers the entry point;
// with Options.SysPathKey, it also lets a start with no modules skip
// Python when nothing registers it (entryPointsUnchanged). A broken
// module that a package registers is thus reported at every start while
// that package is installed: its directory declares the entry point.
func (r *Registry) LoadUser(ctx context.Context, modules []string, cacheFile string) []string {
	if len(modules) == 0 && entryPointsUnchanged(cacheFile, r.opts.SysPathKey) {
		return nil
	}
	if err := r.in.LoadModule(userHelperModule, python.UserCaps); err != nil {
		return []string{fmt.Sprintf("user capabilities: %v", err)}
	}
	if cacheFile != "" {
		// The helper writes the cache, and creates no directory: the
		// Python to create one is not free of the user's code (os.fspath).
		_ = os.MkdirAll(filepath.Dir(cacheFile), 0o700)
	}
	found, err := r.discover(ctx, modules, cacheFile)
	if err != nil {
		return []string{err.Error()}
	}
	if len(found.Sources) == 0 {
		return found.Problems
	}
	if err := r.load(); err != nil {
		return append(found.Problems, err.Error())
	}
	var loaded struct {
		Caps []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Schema      json.RawMessage `json:"schema"`
			Module      string          `json:"module"`
		} `json:"caps"`
		Problems []string `json:"problems"`
	}
	req := map[string]any{"sources": found.Sources, "reserved": Names(), "public": python.Pyaichat}
	if err := r.userCall(ctx, pybridge.CallUserCode, "load", req, &loaded); err != nil {
		return append(found.Problems, err.Error())
	}
	user := make([]UserSpec, len(loaded.Caps))
	for i, c := range loaded.Caps {
		user[i] = UserSpec{Spec: spec.Spec{Name: c.Name, Description: c.Description, Schema: c.Schema}, Module: c.Module}
	}
	r.mu.Lock()
	r.user = user
	r.mu.Unlock()
	return append(found.Problems, loaded.Problems...)
}

// entryPointsUnchanged reports whether the entry points' cache shows that
// a start whose sys.path key is key finds no package registering the
// entry point: the cache's last discovery had that key, no directory on
// its sys.path declared the entry point, and none has changed since (the
// same modification time; absent then, still absent). The helper's
// discovery would find nothing, so it need not be loaded.
func entryPointsUnchanged(cacheFile, key string) bool {
	if cacheFile == "" || key == "" {
		return false
	}
	data, err := os.ReadFile(cacheFile)
	if err != nil {
		return false
	}
	var onPath []string
	seen := map[string]string{} // directory: "mtime_ns TAB 0|1"
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.SplitN(line, "\t", 3)
		switch {
		case len(fields) != 3:
		case fields[0] == "=" && fields[1] != key:
			return false
		case fields[0] == "=":
			onPath = strings.Split(fields[2], "\x00")
		default:
			seen[fields[2]] = fields[0] + "\t" + fields[1]
		}
	}
	return onPath != nil && !slices.ContainsFunc(onPath, func(dir string) bool { return dirMayDeclare(dir, seen) })
}

// dirMayDeclare reports whether dir, on sys.path, may hold a package
// registering the entry point by what the cache (seen) says of it: it
// did, it changed, or it appeared.
func dirMayDeclare(dir string, seen map[string]string) bool {
	info, err := os.Stat(dir)
	was, known := seen[dir]
	if !known {
		return err == nil
	}
	return err != nil || was != fmt.Sprintf("%d\t0", info.ModTime().UnixNano())
}

// userSources are the modules to import, and the problems met finding
// them.
type userSources struct {
	Sources []userSource
	// Problems are lines for the user.
	Problems []string
}

// userSource is a module to import and where it is named.
type userSource struct {
	Module string `json:"module"`
	From   string `json:"from"`
}

// discover finds the modules to import. Its request and answer are lines,
// not JSON: the helper that reads them is loaded at every start, and
// importing json there would cost milliseconds each time.
func (r *Registry) discover(ctx context.Context, modules []string, cacheFile string) (userSources, error) {
	var found userSources
	for _, m := range modules {
		if m == "" || strings.ContainsAny(m, "\n\t") {
			found.Problems = append(found.Problems, fmt.Sprintf("capability_modules: %q is not a module name", m))
		}
	}
	key := r.opts.SysPathKey
	if found.Problems != nil || strings.ContainsAny(cacheFile+key, "\n\t") {
		modules, cacheFile, key = nil, "", ""
	}
	out, err := r.in.Call(ctx, pybridge.CallHelper, userHelperModule, "discover", strings.Join(append([]string{cacheFile, key}, modules...), "\n"))
	if err != nil {
		return found, fmt.Errorf("user capabilities: %w", err)
	}
	for _, line := range strings.Split(out, "\n") {
		if problem, ok := strings.CutPrefix(line, "!"); ok {
			found.Problems = append(found.Problems, problem)
		} else if module, from, ok := strings.Cut(line, "\t"); ok {
			found.Sources = append(found.Sources, userSource{Module: module, From: from})
		}
	}
	return found, nil
}

// userCall calls fn of the user capabilities helper with req as JSON and
// decodes its JSON answer into out.
func (r *Registry) userCall(ctx context.Context, kind pybridge.CallKind, fn string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("user capabilities: %w", err)
	}
	res, err := r.in.Call(ctx, kind, userHelperModule, fn, string(body))
	if err != nil {
		return fmt.Errorf("user capabilities: %w", err)
	}
	if err := json.Unmarshal([]byte(res), out); err != nil {
		return fmt.Errorf("user capabilities: unreadable helper result: %w", err)
	}
	return nil
}

// User lists the user's capabilities that loaded, in the order their
// modules defined them.
func (r *Registry) User() []UserSpec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.user)
}

// userCap reports whether name is one of the user's capabilities.
func (r *Registry) userCap(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.user, func(u UserSpec) bool { return u.Name == name })
}

// userRequest is the helper's request for a call of the user's capability
// name: its arguments are checked against the function's signature in the
// session, before the copy runs it.
func userRequest(name string, args json.RawMessage) (request, *spec.Error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if len(args) > maxUserArgsBytes {
		return request{}, invalid("%s: the arguments are %d bytes; the limit is %d", name, len(args), maxUserArgsBytes)
	}
	if args[0] != '{' || !json.Valid(args) {
		return request{}, invalid("%s: arguments must be a JSON object", name)
	}
	return request{Cap: "user", Name: name, Args: args}, nil
}

// userArgsText is a user capability's arguments as typed after /cap
// NAME: a JSON object, or nothing for none.
func userArgsText(name, text string) (json.RawMessage, *spec.Error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	if !strings.HasPrefix(text, "{") {
		return nil, invalid("%s is the user's capability: its arguments are a JSON object, e.g. {\"name\": \"value\"}", name)
	}
	return json.RawMessage(text), nil
}

// unknown is the error for a call of a capability that does not exist.
func (r *Registry) unknown(name string) *spec.Error {
	names := Names()
	for _, u := range r.User() {
		names = append(names, u.Name)
	}
	return invalid("unknown capability %q; the capabilities are %s", name, strings.Join(names, ", "))
}
