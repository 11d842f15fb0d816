package redact

import "strings"

// secretWords are the name fragments that make an environment variable
// look like it holds a credential.
var secretWords = []string{
	"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "PWD",
	"CREDENTIAL", "AUTH", "COOKIE", "SESSION", "PRIVATE", "DSN",
}

// benignNames are common variables whose names contain a secret word but
// whose values are paths, sockets or desktop plumbing; redacting them would
// only damage tracebacks and listings.
var benignNames = map[string]bool{
	"PWD":                      true, // the shell's working directory
	"OLDPWD":                   true,
	"SESSION_MANAGER":          true,
	"DESKTOP_SESSION":          true,
	"GDMSESSION":               true,
	"DBUS_SESSION_BUS_ADDRESS": true,
	"GNOME_KEYRING_CONTROL":    true,
	"SSH_AUTH_SOCK":            true,
	"XAUTHORITY":               true,
	"PASSWORD_STORE_DIR":       true,
	"TOKENIZERS_PARALLELISM":   true, // Hugging Face switch, "true"/"false"
}

// benignPrefixes and benignSuffixes cover families of such variables: a
// *_FILE or *_PATH variable names where a secret lives, not the secret.
var (
	benignPrefixes = []string{"XDG_SESSION_", "KONSOLE_DBUS_"}
	benignSuffixes = []string{"_PATH", "_FILE", "_DIR", "_DIRS", "_SOCK", "_SOCKET"}
)

// benignWords contain a secret word without meaning one: KEYBOARD holds
// KEY, AUTHOR holds AUTH. They are blanked out before the secret words are
// looked for, except AUTHORIZATION, which is a credential.
var benignWords = strings.NewReplacer(
	"KEYBOARD", "-", "KEYMAP", "-", "AUTHORIZ", "AUTHZ", "AUTHOR", "-",
	"TOKENIZER", "-", "PASSTHROUGH", "-", "BYPASS", "-", "COMPASS", "-",
)

// SecretName reports whether an environment variable's name looks secret
// under the policy: Allow wins over Hide, Hide over the built-in rule.
// Names are compared case-insensitively. A nil Filter applies the built-in
// rule only.
func (f *Filter) SecretName(name string) bool {
	up := strings.ToUpper(name)
	if f != nil {
		if f.allow[up] {
			return false
		}
		if f.hide[up] {
			return true
		}
	}
	return builtinSecretName(up)
}

func builtinSecretName(up string) bool {
	if benignNames[up] {
		return false
	}
	for _, p := range benignPrefixes {
		if strings.HasPrefix(up, p) {
			return false
		}
	}
	for _, s := range benignSuffixes {
		if strings.HasSuffix(up, s) {
			return false
		}
	}
	// PW is a word of its own only: MYAPP_PW, PW_ADMIN, not PWM or NPW.
	if up == "PW" || strings.HasSuffix(up, "_PW") || strings.HasPrefix(up, "PW_") || strings.Contains(up, "_PW_") {
		return true
	}
	up = benignWords.Replace(up)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// secretVariableWords are the words of a Python variable's name that say
// its value is a secret; narrower than secretWords, since "key" and
// "session" name ordinary variables (for key in d).
var secretVariableWords = map[string]bool{
	"password": true, "passwd": true, "pw": true, "passphrase": true, "secret": true,
	"token": true, "apikey": true, "credential": true, "credentials": true,
}

// secretVariablePairs are two-word names that do: api_key, private_key.
var secretVariablePairs = map[string]bool{
	"api key": true, "access key": true, "private key": true, "secret key": true, "auth key": true,
}

// SecretVariableName reports whether a Python variable's name says its
// value is a secret (password, db_password, api_key, apiKey, TOKEN): its
// value is redacted whatever it looks like.
func SecretVariableName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	lower := strings.ToLower(name)
	if secretVariableWords[strings.ReplaceAll(lower, "_", "")] {
		return true
	}
	words := strings.FieldsFunc(lower, func(r rune) bool { return r == '_' })
	for i, w := range words {
		if secretVariableWords[w] || i > 0 && secretVariablePairs[words[i-1]+" "+w] {
			return true
		}
	}
	return false
}
