#!/usr/bin/env bash
# Builds the embedded Python's CPython for speed, once, into a cache
# directory: the distribution's own source of the version pyaichat embeds
# (apt-get source python3.X, with Debian's patches), configured as Debian
# configures it but with profile-guided and link-time optimisation
# (--enable-optimizations --with-lto) and without a shared library. Debian's
# own libpython3.X.a carries no link-time-optimisation code, which is most
# of why pyaichat runs Python up to 1.1x slower than /usr/bin/python3.X
# (docs/performance.md). About 16 minutes on a 2-CPU machine.
#
#   scripts/python-fast.sh            build (or find) it; print its directory
#   scripts/python-fast.sh --dir      print the directory it is (or would be) in
#
# The build keeps Debian's prefix (/usr) and is installed under
# $DIR/root, so that the pyaichat linked with it (make build FAST=1) finds
# the standard library of the distribution's libpython3.X-stdlib package at
# run time, as the pyaichat of the .deb must: the same version's Python
# files and extension modules (lib-dynload), which load against the fast
# libpython as they load against Debian's. The modules Debian builds into
# libpython (its Setup.local: math, _struct, pyexpat...) are built in here
# too, since its lib-dynload lacks them. $DIR/flags holds what
# scripts/python-flags.sh prints for an interpreter: the three lines the
# Makefile passes to cgo.
#
# Needs: dpkg-dev (dpkg-source), autoconf and autoconf-archive, gcc, make, libexpat1-dev and
# zlib1g-dev, installed when missing (as root, or through sudo), and the
# distribution's source packages (a deb-src line is made from the mirror apt
# uses, in the cache only; /etc/apt is not changed). The cache is
# $PYAICHAT_FAST_CACHE, else $XDG_CACHE_HOME/pyaichat/python-fast.
set -euo pipefail
cd "$(dirname "$0")/.."
objects="$PWD/scripts/libpython-objects.py"
this="$PWD/scripts/python-fast.sh"

die() { echo "python-fast: $*" >&2; exit 1; }

system_python="${PYTHON_FAST_BASE:-/usr/bin/python3}"
[ -x "$system_python" ] || die "no $system_python"
mm="$("$system_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
stdlib_pkg="libpython$mm-stdlib"
# The version of the standard library installed here, which the fast
# libpython will run with: its source is the one to build.
version="$(dpkg-query -W -f '${Version}' "$stdlib_pkg" 2>/dev/null)" || die "$stdlib_pkg is not installed (apt-get install $stdlib_pkg)"
cache="${PYAICHAT_FAST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pyaichat/python-fast}"
dir="$cache/python$mm-$version"

if [ "${1:-}" = --dir ]; then
  echo "$dir"
  exit 0
fi

# write_flags writes $dir/flags from the build installed in $dir/root:
# the three lines scripts/python-flags.sh prints for a static libpython,
# from the build's own configuration. (The link's one-partition LTO option
# is pybridge's, under the pyaichat_fast tag: see pybridge/fastlink.go.)
write_flags() {
  local lib include sysconfigdata libs
  # The copy in LIBPL (config-3.X-...), where python-flags.sh finds it.
  lib="$(find "$dir/root" -path "*/config-$mm*/libpython$mm.a" | head -n1)"
  [ -f "$lib" ] || lib="$(find "$dir/root" -name "libpython$mm.a" | head -n1)"
  [ -f "$lib" ] || die "the build installed no libpython$mm.a"
  include="$(find "$dir/root/usr/include" -maxdepth 1 -type d -name "python$mm*" | head -n1)"
  sysconfigdata="$(find "$dir/root/usr/lib/python$mm" -maxdepth 1 -name '_sysconfigdata_*.py' | head -n1)"
  [ -f "$sysconfigdata" ] || die "the build installed no _sysconfigdata_*.py"
  # The libraries are those the build links python with.
  libs="$("$system_python" - "$sysconfigdata" <<'PY'
import runpy, sys
v = runpy.run_path(sys.argv[1])["build_time_vars"]
seen = []
for name in ("MODLIBS", "LIBS", "SYSLIBS"):
    for f in str(v.get(name) or "").split():
        if f.startswith("-l") and f not in seen:
            seen.append(f)
print(" ".join(seen))
PY
)"
  {
    echo "-I$include"
    echo "$("$system_python" "$objects" "$lib") $lib -Wl,--export-dynamic $libs"
    echo "/usr/bin/python$mm"
  } >"$dir/flags.tmp"
  mv "$dir/flags.tmp" "$dir/flags"
}

# A build made before this script last changed keeps its libpython; only
# its flags are written again.
if [ -s "$dir/flags" ] && [ "$dir/flags" -nt "$this" ]; then
  echo "$dir"
  exit 0
fi
if [ -d "$dir/root" ]; then
  write_flags
  echo "$dir"
  exit 0
fi

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
need=()
command -v dpkg-source >/dev/null || need+=(dpkg-dev)
command -v autoreconf >/dev/null || need+=(autoconf)
[ -e /usr/share/aclocal/ax_c_float_words_bigendian.m4 ] || need+=(autoconf-archive)
command -v gcc >/dev/null || need+=(gcc)
command -v make >/dev/null || need+=(make)
[ -e /usr/include/expat.h ] || need+=(libexpat1-dev)
[ -e /usr/include/zlib.h ] || need+=(zlib1g-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "python-fast: installing ${need[*]}" >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi

mkdir -p "$cache"
work="$(mktemp -d "$cache/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The source, through apt with a list of its own: a deb-src line for each
# suite the machine's apt uses, from the same mirrors.
{
  grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed 's/^deb /deb-src /' || true
  awk '/^URIs:/ {uris=$2} /^Suites:/ {for (i = 2; i <= NF; i++) print "deb-src " uris " " $i " main"}' \
    /etc/apt/sources.list.d/*.sources 2>/dev/null || true
} | sort -u >"$work/sources.list"
[ -s "$work/sources.list" ] || die "no apt sources found to make a deb-src line from"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=$work/none"
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/apt-cache" -o "Debug::NoLocking=1")
mkdir -p "$work/lists/partial" "$work/apt-cache/archives/partial" "$work/none"
echo "python-fast: fetching the source of python$mm $version" >&2
apt-get "${apt_opts[@]}" update -qq >&2 || die "apt-get update of the source lists failed"
src="python$mm"
# The installed standard library's version first, then what the mirror
# has, newest first (a mirror may list a version whose files it lacks).
candidates=("$version")
while read -r v; do candidates+=("$v"); done < <(apt-cache "${apt_opts[@]}" showsrc "$src" 2>/dev/null |
  sed -n 's/^Version: //p' | sort -urV)
fetched=
for v in "${candidates[@]}"; do
  if (cd "$work" && apt-get "${apt_opts[@]}" source -qq "$src=$v" >/dev/null 2>&1); then
    fetched="$v"
    break
  fi
done
[ -n "$fetched" ] || die "apt-get source $src failed for each of ${candidates[*]}"
[ "$fetched" = "$version" ] || echo "python-fast: the source of $version is not on the mirror; building $fetched (the same upstream version, with Debian's later patches)" >&2
tree="$(find "$work" -maxdepth 1 -type d -name "$src-*" | head -n1)"
[ -d "$tree" ] || die "apt-get source left no $src-* directory"

# Debian's configuration, less what is for its shared and debug builds,
# plus the optimisations; its patches change configure.ac, so configure is
# made again.
config_args="$("$system_python" -c 'import sysconfig; print(sysconfig.get_config_var("CONFIG_ARGS"))')"
eval "set -- $config_args"
args=()
for a in "$@"; do
  case "$a" in
    --enable-shared|--with-dtrace|--libdir=*|CC=*|MKDIR_P=*) ;;
    *) args+=("$a") ;;
  esac
done
args+=(--enable-optimizations --with-lto)
setup_local="$("$system_python" -c 'import sysconfig; print(sysconfig.get_config_var("LIBPL"))')/Setup.local"
cp "$setup_local" "$tree/Modules/Setup.local" 2>/dev/null || die "no $setup_local (is libpython$mm-dev installed?)"
jobs="$(nproc)"
log="$cache/python$mm-$version.log"
echo "python-fast: building in $tree (log: $log); about 16 minutes on 2 CPUs" >&2
(
  cd "$tree"
  autoreconf -fi
  ./configure "${args[@]}"
  # The steps of CPython's profile-run-stamp, so that a test of the
  # profile task that fails here (Debian's build makes any failure fatal;
  # its own runs drop some tests) still leaves a profile: the task is
  # there to exercise the interpreter, not to pass.
  make -j"$jobs" profile-gen-stamp
  make run_profile_task || echo "python-fast: some tests of the profile task failed; their profile is used all the same"
  make build_all_merge_profile
  make clean-retain-profile
  touch profile-run-stamp
  make -j"$jobs"
  make install DESTDIR="$work/root"
) >"$log" 2>&1 || die "the build failed (log: $log)"

[ -n "$(find "$work/root" -name "libpython$mm.a" | head -n1)" ] || die "the build installed no libpython$mm.a (log: $log)"
rm -rf "$dir"
mkdir -p "$dir"
mv "$work/root" "$dir/root"
write_flags
echo "$dir"
