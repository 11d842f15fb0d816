#!/usr/bin/env bash
# Installs what building pyaichat needs on a fresh Debian/Ubuntu machine:
# a C compiler, pkg-config and CPython's embedding headers (python3-dev),
# plus Go itself when it is missing, and numpy and pandas, against which the
# capabilities' summaries are tested. Checks first; installs only what lacks.
set -euo pipefail

export PATH="$PATH:/usr/local/go/bin"
pkgs=()
command -v gcc >/dev/null || pkgs+=(gcc libc6-dev)
command -v pkg-config >/dev/null || pkgs+=(pkg-config)
if ! pkg-config --exists python3-embed 2>/dev/null; then pkgs+=(python3-dev); fi
[ -x /usr/bin/python3 ] || pkgs+=(python3)
/usr/bin/python3 -c 'import venv' 2>/dev/null || pkgs+=(python3-venv)
/usr/bin/python3 -c 'import numpy, pandas' 2>/dev/null || pkgs+=(python3-numpy python3-pandas)
command -v go >/dev/null || pkgs+=(golang-go)

if [ ${#pkgs[@]} -gt 0 ]; then
  echo "deps: installing ${pkgs[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${pkgs[@]}" >/dev/null
fi
go version >&2
pkg-config --modversion python3-embed | sed 's/^/deps: python3-embed /' >&2
