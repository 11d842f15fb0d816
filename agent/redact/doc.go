// Package redact removes secrets from text before it leaves the machine.
//
// pyaichat sends tool results and session context to a remote model
// provider. A Filter finds secrets in that text and replaces each with a
// marker that names what was removed, such as
//
//	<redacted: AWS access key, 20 chars>
//
// so the model can still tell the user that a key is set without ever
// seeing it.
//
// Three sources of secrets are recognised:
//
//  1. exact values the policy knows: configured API keys and the values of
//     environment variables whose names look secret (SecretName), matched
//     only as whole tokens and only when at least 8 bytes long, so a dummy
//     key such as "x" or "ollama" never damages ordinary text;
//  2. well-known token formats (OpenAI, Anthropic, GitHub, AWS, Slack,
//     Google, JWT, PEM private keys, Authorization values, passwords in
//     URLs and connection strings), of which only the secret part is
//     replaced: "postgres://app:<redacted: ...>@db/orders";
//  3. long high-entropy tokens that look generated (letters of both cases
//     and digits, not hex, not a UUID, not a path, not an identifier made
//     of words).
//
// Each secret is replaced once. When findings overlap, an exact value wins
// over a format and a format over the entropy rule, since the earlier
// source knows more; within a source the longest finding wins, then the
// more specific format. Existing markers are never redacted again, so Text
// is idempotent.
//
// The filter is tuned to leave ordinary tool output alone: numbers, prose,
// file paths, URLs without passwords, UUIDs, git hashes, hex digests,
// pandas tables and Python reprs (see testdata/ordinary.txt and the
// false-positive test). Every expensive regular expression is guarded by a
// literal substring check, so text without candidates costs a few fast
// substring searches and one byte scan.
package redact
