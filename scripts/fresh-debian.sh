#!/usr/bin/env bash
# Tries the README's first command on a minimal Debian 12 (debootstrap's
# minbase: no make, no compiler, no Python, no Go) in a chroot, and checks
# that the pyaichat it builds runs a line of Python. Needs root; installs
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

root="$(mktemp -d "$cache/root.XXXXXX")"
cleanup() {
  for m in dev/pts dev sys proc; do umount -l "$root/$m" 2>/dev/null || true; done
  rm -rf "$root"
}
trap cleanup EXIT
tar -C "$root" -xf "$tarball"
for m in proc sys dev dev/pts; do mount --bind "/$m" "$root/$m"; done
cp /etc/resolv.conf "$root/etc/resolv.conf"
# This machine may reach the registries through its own certificate
# authority; a user's machine has its distribution's certificates.
extra=()
if [ -n "${SSL_CERT_FILE:-}" ] && [ -f "$SSL_CERT_FILE" ]; then
  cp "$SSL_CERT_FILE" "$root/etc/pyaichat-ca.crt"
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
