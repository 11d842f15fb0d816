#!/usr/bin/env bash
# Tries the README's first command on a minimal Debian 12 (debootstrap's
# minbase: no make, no compiler, no Python, no Go) in a chroot, and checks
# that the pyaichat it builds runs a line of Python; then makes the .deb
# there (make deb) and installs it with apt-get in a second, untouched
# minimal Debian 12, where it runs Python, pyaichat doctor (offline: no
# model configured) and numpy from a venv, and is removed again. Needs root; installs
# debootstrap when missing and keeps the bare system as a tarball in
# $FRESH_CACHE (default /var/tmp/pyaichat-fresh) for the next run.
#
#   sudo scripts/fresh-debian.sh          (make fresh-debian)
#   sudo scripts/fresh-debian.sh --test   then the README's second command,
#                                         `scripts/deps.sh && make test`, there
#                                         (make fresh-debian-test; RUNS=N runs
#                                         it N times with a busy loop per core)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian: needs root (chroot, mounts)" >&2; exit 1; }

cache="${FRESH_CACHE:-/var/tmp/pyaichat-fresh}"
mkdir -p "$cache"
tarball="$cache/bookworm-minbase.tar"
# The mirror this machine's apt already uses.
mirror="$(grep -hoE '(https?://[^ ]+/debian)/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | tr -d ' ' || true)"
mirror="${mirror:-http://deb.debian.org/debian}"

if [ ! -s "$tarball" ]; then
  command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
  base="$(mktemp -d "$cache/base.XXXXXX")"
  echo "fresh-debian: debootstrap --variant=minbase bookworm from $mirror" >&2
  debootstrap --variant=minbase bookworm "$base" "$mirror" >/dev/null
  tar -C "$base" -cf "$tarball" .
  rm -rf "$base"
fi

roots=()
cleanup() {
  local r m
  for r in "${roots[@]}"; do
    for m in dev/pts dev sys proc; do umount -l "$r/$m" 2>/dev/null || true; done
    rm -rf "$r"
  done
}
trap cleanup EXIT
# new_root unpacks the bare system into a new directory, $new, ready to
# chroot into (cleanup unmounts and removes it).
new_root() {
  new="$(mktemp -d "$cache/root.XXXXXX")"
  roots+=("$new")
  tar -C "$new" -xf "$tarball"
  for m in proc sys dev dev/pts; do mount --bind "/$m" "$new/$m"; done
  cp /etc/resolv.conf "$new/etc/resolv.conf"
  if [ -n "${SSL_CERT_FILE:-}" ] && [ -f "$SSL_CERT_FILE" ]; then cp "$SSL_CERT_FILE" "$new/etc/pyaichat-ca.crt"; fi
}
new_root
root="$new"
# This machine may reach the registries through its own certificate
# authority; a user's machine has its distribution's certificates.
extra=()
if [ -n "${SSL_CERT_FILE:-}" ] && [ -f "$SSL_CERT_FILE" ]; then
  extra+=("SSL_CERT_FILE=/etc/pyaichat-ca.crt" "NODE_EXTRA_CA_CERTS=/etc/pyaichat-ca.crt")
fi
for v in GOPROXY GOSUMDB GOFLAGS; do
  val="$(go env "$v" 2>/dev/null || true)"
  [ -n "$val" ] && extra+=("$v=$val")
done
mkdir -p "$root/root/pyaichat"
git ls-files -z | xargs -0 tar -cf - | tar -C "$root/root/pyaichat" -xf -

echo "fresh-debian: running the README's first command in the chroot" >&2
out="$(printf 'print(6 * 7)\n' | chroot "$root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 "${extra[@]}" bash -c 'cd /root/pyaichat && scripts/deps.sh && make -s run' 2>"$cache/last.log")" || {
  tail -n 20 "$cache/last.log" >&2
  echo "fresh-debian: the README's first command failed (log: $cache/last.log)" >&2
  exit 1
}
if [ "$(tail -n1 <<<"$out")" != "42" ]; then
  echo "fresh-debian: pyaichat printed $(tail -n1 <<<"$out" | head -c 200), not 42" >&2
  exit 1
fi
echo "fresh-debian: a minimal Debian 12 set up, built and ran pyaichat (6 * 7 = 42)" >&2

# The package, made where pyaichat was built and installed where nothing
# was: its Depends must bring everything the binary needs.
chroot "$root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 "${extra[@]}" bash -c 'cd /root/pyaichat && make -s deb' >"$cache/deb.log" 2>&1 || {
  tail -n 20 "$cache/deb.log" >&2
  echo "fresh-debian: make deb failed (log: $cache/deb.log)" >&2
  exit 1
}
debs=("$root"/root/pyaichat/pyaichat_*.deb)
new_root
clean="$new"
cp "${debs[0]}" "$clean/root/"
if ! chroot "$clean" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 "${extra[@]}" bash -ec '
  cd /root
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq ./pyaichat_*.deb >/dev/null
  out="$(pyaichat -q -c "print(6*7)" </dev/null 2>/dev/null)"
  [ "$out" = 42 ] || { echo "installed pyaichat printed $out, not 42"; exit 1; }
  status=0
  doctor="$(timeout 120 pyaichat doctor)" || status=$?
  echo "$doctor"
  [ "$status" = 1 ] && grep -q "^first thing to fix: configure a model" <<<"$doctor" ||
    { echo "pyaichat doctor with no model configured: status $status, not 1 and \"configure a model\""; exit 1; }
  apt-get install -y -qq python3-venv python3-numpy >/dev/null
  python3 -m venv --system-site-packages /root/venv
  out="$(pyaichat --venv /root/venv -q -c "import sys, numpy; print(sys.prefix, numpy.arange(7).sum())" </dev/null 2>/dev/null)"
  [ "$out" = "/root/venv 21" ] || { echo "numpy from a venv: $out"; exit 1; }
  apt-get purge -y -qq pyaichat >/dev/null
  ! command -v pyaichat >/dev/null || { echo "pyaichat is still installed"; exit 1; }
  [ ! -e /usr/share/doc/pyaichat ] && [ ! -e /usr/share/man/man1/pyaichat.1.gz ] ||
    { echo "apt-get purge left files of pyaichat"; exit 1; }
' >"$cache/install.log" 2>&1; then
  tail -n 20 "$cache/install.log" >&2
  echo "fresh-debian: installing the .deb in a clean Debian 12 failed (log: $cache/install.log)" >&2
  exit 1
fi
echo "fresh-debian: $(basename "${debs[0]}") installed in a clean Debian 12, ran Python, doctor and numpy from a venv, and was purged" >&2

[ "${1:-}" = "--test" ] || exit 0
runs="${RUNS:-1}"
hogs=()
stop_hogs() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null || true; }
if [ "$runs" -gt 1 ]; then
  for _ in $(seq "$(nproc)"); do bash -c 'while :; do :; done' & hogs+=($!); done
  trap 'stop_hogs; cleanup' EXIT
  echo "fresh-debian: ${#hogs[@]} busy loops running" >&2
fi
for i in $(seq "$runs"); do
  start=$SECONDS
  if chroot "$root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      LANG=C.UTF-8 "${extra[@]}" bash -c 'cd /root/pyaichat && scripts/deps.sh && make test' >"$cache/test$i.log" 2>&1; then
    echo "fresh-debian: make test run $i of $runs passed in $((SECONDS - start)) s" >&2
  else
    grep -E '^(--- FAIL|FAIL|=== make test: .*FAILED|make test:)' "$cache/test$i.log" | head -n 20 >&2
    echo "fresh-debian: make test run $i of $runs failed after $((SECONDS - start)) s (log: $cache/test$i.log)" >&2
    exit 1
  fi
done
