#!/usr/bin/env bash
# Lays pyaichat out as an installed tool and packs it: the binary, the
# bash, zsh and fish completions (made by the binary itself), the man page,
# and the licences of everything linked into it (pyaichat's Go modules, Go's
# runtime, CPython, the xterm.js files `pyaichat serve` embeds).
#
#   scripts/package.sh install DESTDIR PREFIX   install into DESTDIR/PREFIX (make install)
#   scripts/package.sh uninstall DESTDIR PREFIX remove what install put there (make uninstall)
#   scripts/package.sh deb OUTDIR               OUTDIR/pyaichat_VERSION_ARCH.deb (make deb)
#   scripts/package.sh dist OUTDIR              OUTDIR/pyaichat-VERSION-linux-ARCH.tar.gz (make dist)
#   scripts/package.sh check-deb FILE           check a .deb's metadata and contents
#
# PYAICHAT_BIN is the binary to pack (default ./pyaichat, from make build).
# The .deb depends on what the binary needs at run time, found from the
# binary itself: the packages of the shared libraries it loads (libc's
# version from the newest GLIBC_ symbol it uses) and the package of the
# embedded Python's standard library.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

die() { echo "package: $*" >&2; exit 1; }

bin="${PYAICHAT_BIN:-$root/pyaichat}"

# version is pyaichat's, as -V prints it ("pyaichat 0.1.0-dev (Python
# 3.11.2)"), in Debian's spelling: a pre-release sorts before the release
# with ~.
version() {
  local v
  v="$("$bin" -V | awk '{print $2}')" || die "$bin -V failed"
  [ -n "$v" ] || die "$bin -V printed no version"
  echo "${v//-/\~}"
}

arch() {
  if command -v dpkg >/dev/null; then dpkg --print-architecture; else uname -m; fi
}

# python_file prints the path of a module of the embedded Python's
# standard library.
python_file() {
  python_says "import $1; print($1.__file__)"
}

# python_says is what the embedded Python prints for code ($bin -c stays
# interactive, like python3 -i: at the end of stdin it leaves, after a
# prompt on stderr, which is dropped).
python_says() {
  local said
  said="$("$bin" -I -S -c "$1" </dev/null 2>/dev/null)" || true
  [ -n "$said" ] || die "$bin could not run Python ($bin -I -S -c '$1')"
  echo "$said"
}

# licences copies into $1 the licence of each Go module linked into
# pyaichat, Go's, CPython's and xterm.js's, one directory each.
licences() {
  local dest="$1" path dir f found
  mkdir -p "$dest"
  while read -r path dir; do
    [ -n "$dir" ] || continue
    found=
    for f in "$dir"/LICENSE* "$dir"/LICENCE* "$dir"/COPYING* "$dir"/NOTICE* "$dir"/license* "$dir"/licence*; do
      [ -f "$f" ] || continue
      mkdir -p "$dest/${path//\//_}"
      cp "$f" "$dest/${path//\//_}/"
      found=1
    done
    [ -n "$found" ] || die "no licence file in $dir ($path)"
  done < <(go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Dir}}{{end}}{{end}}' ./cmd/pyaichat | sort -u)
  mkdir -p "$dest/go" "$dest/cpython" "$dest/xterm.js"
  cp "$(go env GOROOT)/LICENSE" "$dest/go/LICENSE"
  local stdlib
  stdlib="$(dirname "$(python_file os)")"
  [ -f "$stdlib/LICENSE.txt" ] || die "no LICENSE.txt in the embedded Python's $stdlib"
  cp "$stdlib/LICENSE.txt" "$dest/cpython/LICENSE.txt"
  local modules="$root/cmd/pyaichat/serve/node_modules/@xterm"
  [ -f "$modules/xterm/LICENSE" ] || scripts/web-assets.sh
  for f in xterm addon-fit addon-unicode11; do
    cp "$modules/$f/LICENSE" "$dest/xterm.js/LICENSE-$f"
  done
  if [ -f "$root/LICENSE" ]; then cp "$root/LICENSE" "$dest/pyaichat-LICENSE"; fi
}

# copyright is /usr/share/doc/pyaichat/copyright: what is in the binary
# and where each part's licence is.
copyright() {
  local docdir="$1"
  {
    echo "pyaichat: a Python REPL with an AI assistant one TAB away"
    echo "Source: https://github.com/pyaichat/pyaichat"
    echo
    echo "The pyaichat binary links in, each under its own licence (files"
    echo "under ${docdir#/}/licenses/):"
    echo " - CPython $("$bin" -V | sed -n 's/.*(Python \(.*\))/\1/p') (statically linked or loaded; cpython/)"
    echo " - the Go runtime and standard library (go/)"
    echo " - xterm.js and two of its add-ons, embedded for pyaichat serve (xterm.js/)"
    go list -deps -f '{{with .Module}}{{if not .Main}} - {{.Path}} {{.Version}}{{end}}{{end}}' ./cmd/pyaichat | sort -u | sed 's/$/ (Go module)/'
  }
}

# stage lays the files out under $1 with prefix $2 (/usr, /usr/local...);
# with $3 = strip, the binary without its debug information (a third of
# its size; Go's own tables for stack traces and Python's dynamic symbols,
# which extension modules link against, stay).
stage() {
  local dest="$1" prefix="$2"
  local share="$dest$prefix/share"
  install -D -m 0755 "$bin" "$dest$prefix/bin/pyaichat"
  if [ "${3:-}" = strip ]; then strip --strip-unneeded "$dest$prefix/bin/pyaichat"; fi
  install -d "$share/man/man1" "$share/bash-completion/completions" \
    "$share/zsh/vendor-completions" "$share/fish/vendor_completions.d" "$share/doc/pyaichat"
  gzip -9n <packaging/pyaichat.1 >"$share/man/man1/pyaichat.1.gz"
  chmod 0644 "$share/man/man1/pyaichat.1.gz"
  "$bin" completion bash >"$share/bash-completion/completions/pyaichat"
  "$bin" completion zsh >"$share/zsh/vendor-completions/_pyaichat"
  "$bin" completion fish >"$share/fish/vendor_completions.d/pyaichat.fish"
  licences "$share/doc/pyaichat/licenses"
  copyright "$prefix/share/doc/pyaichat" >"$share/doc/pyaichat/copyright"
  cp README.md "$share/doc/pyaichat/README.md"
  find "$dest$prefix" -type d -exec chmod 0755 {} +
  find "$share" -type f -exec chmod 0644 {} +
}

# depends prints the Depends line: the package of each shared library the
# binary loads (libc with the newest GLIBC_ version it uses) and of the
# embedded Python's standard library.
depends() {
  local lib pkg deps=() glibc stdlib
  while read -r lib; do
    pkg="$(dpkg -S "$(readlink -f "$lib")" 2>/dev/null | head -n1 | cut -d: -f1)" ||
      true
    if [ -z "$pkg" ]; then
      pkg="$(dpkg -S "$lib" 2>/dev/null | head -n1 | cut -d: -f1)" || true
    fi
    [ -n "$pkg" ] || die "no Debian package holds $lib, which pyaichat loads"
    deps+=("$pkg")
  done < <(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}')
  stdlib="$(python_file json)"
  pkg="$(dpkg -S "$stdlib" 2>/dev/null | head -n1 | cut -d: -f1)" ||
    die "the embedded Python's standard library ($stdlib) is not from a Debian package; build with Debian's python3 (or FAST=1) for make deb"
  deps+=("$pkg")
  glibc="$(objdump -T "$bin" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1)"
  printf '%s\n' "${deps[@]}" | sort -u | while read -r pkg; do
    if [ "$pkg" = libc6 ] && [ -n "$glibc" ]; then echo "libc6 (>= $glibc)"; else echo "$pkg"; fi
  done | paste -sd, | sed 's/,/, /g'
}


deb() {
  local out="$1" ver arch work major_minor
  command -v dpkg-deb >/dev/null || die "no dpkg-deb (Debian's dpkg package)"
  ver="$(version)"
  arch="$(arch)"
  major_minor="$(python_says 'import sys; print("%d.%d" % sys.version_info[:2])')"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  chmod 0755 "$work"
  stage "$work" /usr strip
  mv "$work/usr/share/doc/pyaichat/README.md" "$work/usr/share/doc/pyaichat/README.md.tmp"
  gzip -9n <"$work/usr/share/doc/pyaichat/README.md.tmp" >"$work/usr/share/doc/pyaichat/README.md.gz"
  rm "$work/usr/share/doc/pyaichat/README.md.tmp"
  chmod 0644 "$work/usr/share/doc/pyaichat/README.md.gz"
  mkdir -p "$work/DEBIAN"
  cat >"$work/DEBIAN/control" <<EOF
Package: pyaichat
Version: $ver
Architecture: $arch
Maintainer: ${DEB_MAINTAINER:-pyaichat developers <pyaichat@users.noreply.github.com>}
Installed-Size: $(du -sk --exclude=DEBIAN "$work" | cut -f1)
Depends: $(depends)
Recommends: python$major_minor
Suggests: python$major_minor-venv
Section: python
Priority: optional
Homepage: https://github.com/pyaichat/pyaichat
Description: Python REPL with an AI assistant one TAB away
 pyaichat embeds CPython $major_minor: at its py> prompt it behaves like
 python3 -i; TAB switches to ai>, where questions about the live session
 go to any OpenAI-compatible API (OpenAI, Ollama, llama.cpp, vLLM...).
 The model sees the session only through seven read-only capabilities.
 .
 python$major_minor gives the interpreter that pip, venv and subprocess
 run from inside pyaichat.
EOF
  (cd "$work" && find usr -type f -exec md5sum {} + | sort -k2) >"$work/DEBIAN/md5sums"
  mkdir -p "$out"
  local file="$out/pyaichat_${ver}_${arch}.deb"
  dpkg-deb --root-owner-group -Zxz --build "$work" "$file" >/dev/null
  echo "$file"
}

dist() {
  local out="$1" ver arch work name major_minor
  ver="$("$bin" -V | awk '{print $2}')"
  arch="$(uname -m)"
  name="pyaichat-$ver-linux-$arch"
  major_minor="$(python_says 'import sys; print("%d.%d" % sys.version_info[:2])')"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  stage "$work/$name" "" strip
  local needs="the embedded Python's standard library"
  if command -v dpkg >/dev/null; then needs="$(depends)"; fi
  cat >"$work/$name/INSTALL" <<EOF
pyaichat $ver for Linux $arch, embedding CPython $major_minor.

It runs on a machine of the distribution it was built on, with these
packages installed:
  $needs
and, for pip, venv and subprocess inside pyaichat, python$major_minor.

Install under /usr/local (or any PREFIX):
  sudo cp -r bin share /usr/local/
or run bin/pyaichat from here. Then: pyaichat doctor
EOF
  mkdir -p "$out"
  local file="$out/$name.tar.gz"
  tar -C "$work" --owner=0 --group=0 --numeric-owner --sort=name -czf "$file" "$name"
  echo "$file"
}

# check_deb checks what make deb promises: the metadata, and the binary,
# man page, completions and licences at their places.
check_deb() {
  local file="$1" info contents want problems=0
  info="$(dpkg-deb -I "$file")"
  contents="$(dpkg-deb -c "$file" | awk '{print $1, $6}')"
  for want in 'Package: pyaichat' 'Depends: .*libc6 (>= 2\.[0-9]*)' 'Depends: .*libpython3\.[0-9]*-stdlib' \
    'Architecture: ' 'Maintainer: ' 'Description: '; do
    grep -q "^ $want" <<<"$info" || { echo "package: $file: no '$want' in its control file" >&2; problems=1; }
  done
  if grep -q 'Depends: .*\(python3-dev\|golang\|gcc\|libpython3\.[0-9]*-dev\)' <<<"$info"; then
    echo "package: $file depends on a build tool" >&2
    problems=1
  fi
  for want in '-rwxr-xr-x ./usr/bin/pyaichat' '-rw-r--r-- ./usr/share/man/man1/pyaichat.1.gz' \
    '-rw-r--r-- ./usr/share/bash-completion/completions/pyaichat' '-rw-r--r-- ./usr/share/zsh/vendor-completions/_pyaichat' \
    '-rw-r--r-- ./usr/share/fish/vendor_completions.d/pyaichat.fish' '-rw-r--r-- ./usr/share/doc/pyaichat/copyright' \
    '-rw-r--r-- ./usr/share/doc/pyaichat/licenses/cpython/LICENSE.txt' '-rw-r--r-- ./usr/share/doc/pyaichat/licenses/go/LICENSE' \
    '-rw-r--r-- ./usr/share/doc/pyaichat/licenses/xterm.js/LICENSE-xterm'; do
    grep -qxF -- "$want" <<<"$contents" || { echo "package: $file lacks $want" >&2; problems=1; }
  done
  if grep -v '^d' <<<"$contents" | grep -v ' ./usr/\(bin\|share/\(man\|doc\|bash-completion\|zsh\|fish\)\)/' | grep -q .; then
    echo "package: $file has files outside /usr/bin and /usr/share's man, doc and completion directories" >&2
    problems=1
  fi
  [ "$problems" = 0 ] || exit 1
  echo "package: $file: metadata and contents as expected" >&2
}

# unstage removes what stage put under $1$2.
unstage() {
  local at="$1$2"
  rm -f "$at/bin/pyaichat" "$at/share/man/man1/pyaichat.1.gz" \
    "$at/share/bash-completion/completions/pyaichat" "$at/share/zsh/vendor-completions/_pyaichat" \
    "$at/share/fish/vendor_completions.d/pyaichat.fish"
  rm -rf "$at/share/doc/pyaichat"
}

case "${1:-}" in
  uninstall) [ $# -eq 3 ] || die "usage: package.sh uninstall DESTDIR PREFIX"; unstage "$2" "$3" ;;
  install) [ $# -eq 3 ] || die "usage: package.sh install DESTDIR PREFIX"; stage "$2" "$3" ;;
  deb) deb "${2:-$root}" ;;
  dist) dist "${2:-$root}" ;;
  check-deb) [ $# -eq 2 ] || die "usage: package.sh check-deb FILE"; check_deb "$2" ;;
  *) die "usage: package.sh install DESTDIR PREFIX | deb [OUTDIR] | dist [OUTDIR] | check-deb FILE" ;;
esac
