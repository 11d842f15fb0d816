#!/usr/bin/env bash
# Prints the cgo flags that build pyaichat against one Python, read from
# that interpreter's own configuration (sysconfig, what python3.X-config
# reads too), as two lines: CGO_CFLAGS, then CGO_LDFLAGS. The library is the
# interpreter's shared libpython, found again at run time through an rpath
# when it is not in a directory the loader searches anyway.
#
#   scripts/python-flags.sh /path/to/python3.X
#   scripts/python-flags.sh            # the system's python3-embed (pkg-config)
set -euo pipefail

if [ $# -eq 0 ] || [ -z "$1" ]; then
  if ! pkg-config --exists python3-embed 2>/dev/null; then
    echo "python-flags: no python3-embed for pkg-config (install python3-dev, or pass PYTHON=/path/to/python3.X)" >&2
    exit 1
  fi
  pkg-config --cflags python3-embed
  pkg-config --libs python3-embed
  exit 0
fi

python="$1"
if ! command -v "$python" >/dev/null 2>&1; then
  echo "python-flags: $python: no such interpreter" >&2
  exit 1
fi
"$python" - <<'PY'
import os, sys, sysconfig

v = sysconfig.get_config_var
if sys.version_info < (3, 10):
    sys.exit("python-flags: %s is Python %d.%d; pyaichat needs 3.10 or newer" % ((sys.executable,) + sys.version_info[:2]))
libdir, name = v("LIBDIR"), "python" + v("LDVERSION")
if not v("Py_ENABLE_SHARED") or not os.path.exists(os.path.join(libdir, v("LDLIBRARY") or "")):
    sys.exit("python-flags: %s has no shared libpython to embed (build it with --enable-shared)" % sys.executable)
ldflags = ["-L" + libdir, "-l" + name]
if not libdir.startswith(("/usr/lib", "/lib")):
    ldflags.append("-Wl,-rpath," + libdir)
ldflags += [f for f in (v("LIBS") or "").split() if f.startswith("-l")]
print("-I" + v("INCLUDEPY"))
print(" ".join(ldflags))
PY
