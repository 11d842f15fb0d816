#!/usr/bin/env bash
# Prints how to build pyaichat against one Python, read from that
# interpreter's own configuration (sysconfig, what python3.X-config reads
# too), as three lines: CGO_CFLAGS, CGO_LDFLAGS, and the interpreter's path
# (which becomes sys.executable; see pybridge.RealExecutable).
#
#   scripts/python-flags.sh /path/to/python3.X
#   scripts/python-flags.sh            # the system's python3-embed (pkg-config)
#
# The interpreter's static libpython (LIBPL/libpython3.X.a, which the
# -dev packages and pyenv install) is linked when it exists, as python3
# itself is linked: pure-Python code runs about 1.2x slower through a
# shared libpython (position-independent code, calls through the PLT).
# The executable then exports CPython's symbols (--export-dynamic) for the
# extension modules it loads, and holds every object of the library, as a
# shared libpython does: an extension module may need an object nothing in
# pyaichat calls (3.13's _interpreters needs interpconfig.o):
# libpython-objects.py names one symbol of each object undefined. Without
# a static library, or with PYAICHAT_LINK=shared, the shared libpython is
# linked instead, found again at run time through an rpath when it is not
# in a directory the loader searches anyway.
set -euo pipefail

link="${PYAICHAT_LINK:-auto}"
case "$link" in
  auto|static|shared) ;;
  *) echo "python-flags: PYAICHAT_LINK=$link: want auto, static or shared" >&2; exit 1 ;;
esac

python="${1:-}"
if [ -z "$python" ]; then
  if ! pkg-config --exists python3-embed 2>/dev/null; then
    echo "python-flags: no python3-embed for pkg-config (install python3-dev, or pass PYTHON=/path/to/python3.X)" >&2
    exit 1
  fi
  # The interpreter pkg-config describes, to read its configuration; a
  # system with the .pc file but without that interpreter gets
  # pkg-config's flags (the shared library) as they are.
  python="$(pkg-config --variable=exec_prefix python3-embed)/bin/python$(pkg-config --modversion python3-embed)"
  if [ ! -x "$python" ]; then
    pkg-config --cflags python3-embed
    pkg-config --libs python3-embed
    echo
    exit 0
  fi
fi

if ! command -v "$python" >/dev/null 2>&1; then
  echo "python-flags: $python: no such interpreter" >&2
  exit 1
fi
PYAICHAT_LINK="$link" PYAICHAT_OBJECTS="$(dirname "$0")/libpython-objects.py" "$python" - <<'PY'
import os, subprocess, sys, sysconfig

v = sysconfig.get_config_var
if sys.version_info < (3, 10):
    sys.exit("python-flags: %s is Python %d.%d; pyaichat needs 3.10 or newer" % ((sys.executable,) + sys.version_info[:2]))
link = os.environ["PYAICHAT_LINK"]


def libs(*names):
    # The -l flags of these configuration variables, each once, in order.
    seen = []
    for name in names:
        for f in (v(name) or "").split():
            if f.startswith("-l") and f not in seen:
                seen.append(f)
    return seen


static = os.path.join(v("LIBPL") or "", v("LIBRARY") or "")
shared = os.path.join(v("LIBDIR") or "", v("LDLIBRARY") or "")
has_shared = bool(v("Py_ENABLE_SHARED")) and os.path.exists(shared)
if link == "static" and not os.path.isfile(static):
    sys.exit("python-flags: %s has no static libpython (%s)" % (sys.executable, static))
if link == "auto":
    link = "static" if os.path.isfile(static) else "shared"
if link == "shared" and not has_shared:
    sys.exit("python-flags: %s has no shared libpython to embed (build it with --enable-shared)" % sys.executable)

if link == "static":
    undefined = subprocess.run([sys.executable, os.environ["PYAICHAT_OBJECTS"], static],
                               check=True, capture_output=True, text=True).stdout.split()
    ldflags = undefined + [static, "-Wl,--export-dynamic"]
    ldflags += libs("MODLIBS", "LIBS", "SYSLIBS")
else:
    libdir = v("LIBDIR")
    ldflags = ["-L" + libdir, "-lpython" + v("LDVERSION")]
    if not libdir.startswith(("/usr/lib", "/lib")):
        ldflags.append("-Wl,-rpath," + libdir)
    ldflags += libs("LIBS")
print("-I" + v("INCLUDEPY"))
print(" ".join(ldflags))
print(os.path.realpath(sys.executable))
PY
