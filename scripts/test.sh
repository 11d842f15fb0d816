#!/usr/bin/env bash
# Runs every step of `make test` even when one fails, and reports all the
# failures at the end with a non-zero status: a failing step early on must
# not hide what the later ones (the race detector, the build without cgo,
# the Python versions) would have found. `make test` passes the cgo
# settings for the chosen Python in the environment, and the user's own
# GOFLAGS in USER_GOFLAGS.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=()
step() {
  local name="$1" start=$SECONDS
  shift
  echo "=== make test: $name"
  if "$@"; then
    echo "=== make test: $name: passed in $((SECONDS - start)) s"
  else
    echo "=== make test: $name: FAILED after $((SECONDS - start)) s"
    failed+=("$name")
  fi
}

# The steps that choose their own cgo settings (vet, and the matrix, which
# builds for each Python) get the user's environment back.
own_cgo() {
  env -u CGO_ENABLED -u CGO_CFLAGS -u CGO_LDFLAGS GOFLAGS="${USER_GOFLAGS:-}" "$@"
}

step "vet" own_cgo make --no-print-directory vet
step "go test ./..." go test -count=1 ./...
step "go test -race ./pybridge" go test -count=1 -race ./pybridge
step "go test without cgo ./repl/... ./agent/..." own_cgo env CGO_ENABLED=0 go test -count=1 ./repl/... ./agent/...
step "Python versions (scripts/test-pythons.sh)" own_cgo scripts/test-pythons.sh

if [ ${#failed[@]} -gt 0 ]; then
  echo "make test: ${#failed[@]} step(s) failed:"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "make test: every step passed"
