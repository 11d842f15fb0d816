#!/usr/bin/env bash
# Installs what building and testing pyaichat needs on a fresh Debian or
# Ubuntu machine, checking first and installing only what lacks (with
# apt-get, as root or through sudo): make, a C compiler, pkg-config,
# CPython's embedding headers (python3-dev), numpy and pandas (the
# capabilities' summaries are tested against them), nbformat (exported
# notebooks are validated with it), SQLAlchemy (the example of a user
# capability is tested with it), ipykernel and jupyter-console (the
# kernel client is tested against a real kernel, and compared with
# `jupyter console` on it), node and npm (the build fetches the
# xterm.js files `pyaichat serve` embeds with npm ci), the CA certificates
# the Go module proxy needs, zsh and fish (the completion scripts are
# tested in them), and a Go of 1.21 or newer. From 1.21 on, the
# go command fetches the toolchain that go.mod names through the module
# proxy (GOTOOLCHAIN=auto), so the distribution's own Go is enough:
# Debian 12's golang-go is 1.19, so its bookworm-backports golang-1.2x-go
# is taken; Ubuntu's golang-1.2x-go packages likewise.
#
#   scripts/deps.sh             install what is missing, then say in one line
#                               which Go builds pyaichat
#   scripts/deps.sh --quiet     the same, saying only what it installs or
#                               downloads (make's deps target)
#   scripts/deps.sh --which-go  print the go command to use (nothing installed)
#   scripts/deps.sh --toolchain fetch the toolchain go.mod names, if that go
#                               is older (nothing installed), and say which
#   scripts/deps.sh --browser   install Chromium only, which the serve page's
#                               browser test drives headless (make test runs
#                               this; building and running need no browser)
#
# Fails with a one-line reason when something cannot be had.
set -euo pipefail

die() { echo "deps: $*" >&2; exit 1; }

# go_minor prints the minor version of the go command $1 (21 for go1.21.x),
# or nothing when it does not run. GOTOOLCHAIN=local: in this repository
# a go older than go.mod's would otherwise fetch the newer toolchain,
# unannounced, just to answer.
go_minor() {
  local v
  v="$(GOTOOLCHAIN=local "$1" env GOVERSION 2>/dev/null)" || return 0
  v="${v#go1.}"
  echo "${v%%[!0-9]*}"
}

# which_go prints the first go of 1.21 or newer: on PATH, then in the Go
# installations of $DEPS_GO_DIRS (by default Go's own, /usr/local/go, then
# the distribution's /usr/lib/go-1.2x, newest first).
which_go() {
  local candidates=() g m
  g="$(command -v go 2>/dev/null)" && candidates+=("$g")
  for g in ${DEPS_GO_DIRS-/usr/local/go $(ls -d /usr/lib/go-1.* 2>/dev/null | sort -t. -k2 -n -r)}; do
    candidates+=("$g/bin/go")
  done
  for g in "${candidates[@]}"; do
    [ -x "$g" ] || continue
    m="$(go_minor "$g")"
    if [ -n "$m" ] && [ "$m" -ge 21 ]; then
      echo "$g"
      return 0
    fi
  done
  return 1
}

if [ "${1:-}" = "--which-go" ]; then
  which_go || die "no Go 1.21 or newer; run scripts/deps.sh to install one"
  exit 0
fi

repo="$(cd "$(dirname "$0")/.." && pwd)"

# go_mod_toolchain prints the toolchain go.mod asks for (go1.26.8): its
# toolchain line, or else its go line.
go_mod_toolchain() {
  local t g
  t="$(sed -n 's/^toolchain[[:space:]]*\(go[0-9.]*\).*/\1/p' "$repo/go.mod")"
  g="$(sed -n 's/^go[[:space:]]*\([0-9.]*\).*/go\1/p' "$repo/go.mod")"
  echo "${t:-$g}"
}

# use_toolchain fetches the toolchain go.mod names when the go found ($1)
# is older, saying so in one line first (the go command itself would do it
# silently at the first build), and sets built_by to a line that says which
# Go builds pyaichat.
use_toolchain() {
  local go="$1" base want cache
  base="$(GOTOOLCHAIN=local "$go" env GOVERSION)"
  want="$(go_mod_toolchain)"
  if [ "$(printf '%s\n%s\n' "${base#go}" "${want#go}" | sort -V | head -n1)" = "${want#go}" ]; then
    built_by="Go ${base#go} at $go"
    return 0
  fi
  cache="$(GOTOOLCHAIN=local "$go" env GOMODCACHE)/golang.org/toolchain@v0.0.1-$want.$(GOTOOLCHAIN=local "$go" env GOOS)-$(GOTOOLCHAIN=local "$go" env GOARCH)"
  if [ ! -d "$cache" ]; then
    echo "deps: go.mod needs ${want#go}; $go (${base#go}) downloads that toolchain once from the Go module proxy, now" >&2
  fi
  (cd "$repo" && GOTOOLCHAIN=auto "$go" version >/dev/null) || die "$go could not fetch the Go ${want#go} toolchain that go.mod names"
  built_by="Go ${want#go}, the toolchain go.mod names, run by $go (${base#go})"
}

quiet=""
case "${1:-}" in
  --quiet) quiet=1 ;;
  --toolchain)
    go="$(which_go)" || die "no Go 1.21 or newer; run scripts/deps.sh to install one"
    use_toolchain "$go"
    echo "deps: $built_by" >&2
    exit 0 ;;
esac

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || die "not root and no sudo: run this as root to install packages"
  sudo="sudo"
fi
updated=""
apt_install() {
  echo "deps: installing $*" >&2
  if [ -z "$updated" ]; then
    $sudo apt-get update -qq || die "apt-get update failed"
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null || die "apt-get install $* failed"
}
available() { [ -n "$(apt-cache policy "$1" 2>/dev/null | sed -n 's/ *Candidate: //p' | grep -v '(none)')" ]; }

# --browser: Debian's chromium; Ubuntu has only a snap behind its
# chromium-browser, which containers cannot run: there, install a Chromium
# by hand and name it in PYAICHAT_CHROMIUM (the browser test says so when
# it finds none).
if [ "${1:-}" = "--browser" ]; then
  if [ -z "${PYAICHAT_CHROMIUM:-}" ] && ! command -v chromium >/dev/null; then
    if available chromium; then
      apt_install chromium
    else
      $sudo apt-get update -qq || die "apt-get update failed"
      updated=1
      if available chromium; then
        apt_install chromium
      else
        echo "deps: no chromium package here; the serve page's browser test needs one (PYAICHAT_CHROMIUM=/path/to/chromium)" >&2
      fi
    fi
  fi
  exit 0
fi

pkgs=()
command -v make >/dev/null || pkgs+=(make)
command -v gcc >/dev/null || pkgs+=(gcc libc6-dev)
command -v pkg-config >/dev/null || pkgs+=(pkg-config)
[ -e /etc/ssl/certs/ca-certificates.crt ] || pkgs+=(ca-certificates)
pkg-config --exists python3-embed 2>/dev/null || pkgs+=(python3-dev)
[ -x /usr/bin/python3 ] || pkgs+=(python3)
/usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null || pkgs+=(python3-venv)
/usr/bin/python3 -c 'import numpy, pandas' 2>/dev/null || pkgs+=(python3-numpy python3-pandas)
/usr/bin/python3 -c 'import nbformat' 2>/dev/null || pkgs+=(python3-nbformat)
/usr/bin/python3 -c 'import sqlalchemy' 2>/dev/null || pkgs+=(python3-sqlalchemy) # the user capabilities' example
[ -x /usr/bin/ipython3 ] || pkgs+=(ipython3) # the tests' oracle for the magics
/usr/bin/python3 -c 'import matplotlib, PIL' 2>/dev/null || pkgs+=(python3-matplotlib python3-pil) # plots at py>
/usr/bin/python3 -c 'import cairosvg' 2>/dev/null || pkgs+=(python3-cairosvg) # _repr_svg_ drawn as PNG
/usr/bin/python3 -c 'import ipykernel' 2>/dev/null || pkgs+=(python3-ipykernel)
/usr/bin/python3 -c 'import jupyter_console' 2>/dev/null || pkgs+=(python3-jupyter-console)
command -v npm >/dev/null || pkgs+=(nodejs npm)
command -v zsh >/dev/null || pkgs+=(zsh)
command -v fish >/dev/null || pkgs+=(fish)
[ ${#pkgs[@]} -eq 0 ] || apt_install "${pkgs[@]}"

if ! which_go >/dev/null; then
  [ -z "$updated" ] && { $sudo apt-get update -qq || die "apt-get update failed"; updated=1; }
  pick=""
  for v in 1.23 1.22 1.21; do
    if available "golang-$v-go"; then pick="golang-$v-go"; break; fi
  done
  if [ -z "$pick" ] && grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release; then
    # Debian 12: Go 1.21 and newer are in bookworm-backports, on the
    # mirror the machine already uses.
    mirror="$(grep -hoE '(https?://[^ ]+/debian)/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | tr -d ' ' || true)"
    [ -n "$mirror" ] || mirror="http://deb.debian.org/debian"
    echo "deps: adding bookworm-backports from $mirror for a newer Go" >&2
    echo "deb $mirror bookworm-backports main" | $sudo tee /etc/apt/sources.list.d/pyaichat-backports.list >/dev/null
    $sudo apt-get update -qq || die "apt-get update failed"
    for v in 1.23 1.22 1.21; do
      if available "golang-$v-go"; then pick="golang-$v-go"; break; fi
    done
  fi
  [ -n "$pick" ] || die "no Go 1.21 or newer among this distribution's packages; install one from https://go.dev/dl/"
  apt_install "$pick"
  which_go >/dev/null || die "installed $pick, yet found no Go 1.21 or newer"
fi

go="$(which_go)"
use_toolchain "$go"
[ -n "$quiet" ] || echo "deps: $built_by; python3-embed $(pkg-config --modversion python3-embed)" >&2
