#!/usr/bin/env bash
# Builds pyaichat against each other CPython on this machine (3.10 and
# newer, with a shared libpython: pyenv's, under $PYENV_ROOT or ~/.pyenv)
# and runs, for each, the interpreter's and the isolation's own tests and
# the end-to-end tests that hold py> to that version's python3 -i. The
# system Python gets the whole suite from `make test`; this is the matrix
# beside it. Fails if any version fails; says which ran what.
set -uo pipefail
cd "$(dirname "$0")/.."


root="${PYENV_ROOT:-$HOME/.pyenv}"
pythons=()
for dir in "$root"/versions/3.*; do
  [ -d "$dir" ] || continue
  v="${dir##*/}"
  minor="${v#3.}"; minor="${minor%%.*}"
  case "$minor" in ''|*[!0-9]*) continue ;; esac
  [ "$minor" -ge 10 ] || continue
  py="$dir/bin/python3.$minor"
  [ -x "$py" ] && pythons+=("$py")
done
if [ ${#pythons[@]} -eq 0 ]; then
  echo "test-pythons: no other CPython 3.10+ under $root/versions; only the system Python was tested"
  exit 0
fi

# The e2e tests that compare py> with the oracle, and the terminal and
# signal tests whose behaviour depends on the Python.
e2e='TestTranscripts|TestSetupCodeAgainstPython|TestStartupFileAgainstPython|TestSignalsAgainstPython|TestPython3OptionsAgainstPython|TestPTYPdb|TestPTYInputLineEditing|TestPTYCodeInteract|TestPTYChildPrograms|TestPTYCtrlC|TestPiped|TestMainThreadOverManyStarts|TestPTYPasteShowsLastValue|TestPTYBanner'
# numpy and pandas are the system Python's; the others have none.
caps_skip='TestNumpy|TestPandas|TestDataFrame|TestScientific|TestSummariesImportNothing'

failed=()
for py in "${pythons[@]}"; do
  flags="$(scripts/python-flags.sh "$py")" || { failed+=("$py (flags)"); continue; }
  cflags="$(sed -n 1p <<<"$flags")"
  ldflags="$(sed -n 2p <<<"$flags")"
  echo "=== $("$py" -c 'import sys; print(sys.version.split()[0])') ($py): pybridge, capabilities (less numpy/pandas), e2e against its python3 -i"
  start=$SECONDS
  if CGO_ENABLED=1 CGO_CFLAGS="-O2 -g $cflags" CGO_LDFLAGS="-O2 -g $ldflags" GOFLAGS="${GOFLAGS:-} -tags=pyaichat_python" \
      go test -count=1 ./pybridge ./capabilities -skip "$caps_skip" &&
    CGO_ENABLED=1 CGO_CFLAGS="-O2 -g $cflags" CGO_LDFLAGS="-O2 -g $ldflags" GOFLAGS="${GOFLAGS:-} -tags=pyaichat_python" \
      go test -count=1 ./e2e -run "$e2e"; then
    echo "=== $py: passed in $((SECONDS - start)) s"
  else
    echo "=== $py: FAILED"
    failed+=("$py")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "test-pythons: failed: ${failed[*]}"
  exit 1
fi
echo "test-pythons: passed: ${pythons[*]}"
