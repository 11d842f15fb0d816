#!/usr/bin/env bash
# Builds pyaichat against each other CPython on this machine (3.10 and
# newer: pyenv's, under $PYENV_ROOT or ~/.pyenv) and runs, for each, the
# interpreter's and the isolation's own tests and the end-to-end tests that
# hold py> to that version's python3 -i; then the same against the system
# Python linked the other way, through its shared libpython (the fallback
# for Pythons without a static one), and against the CPython built for
# speed when make python-fast has made one. The system Python gets the whole
# suite from `make test`; this is the matrix beside it. Fails if any
# version fails; says which ran what.
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
  echo "test-pythons: no other CPython 3.10+ under $root/versions"
fi
# The system Python again, linked through its shared library: "shared:"
# before a path sets PYAICHAT_LINK=shared for python-flags.sh.
system="$(scripts/python-flags.sh | sed -n 3p)"
[ -n "$system" ] && pythons+=("shared:$system")
# The CPython built for speed (make python-fast), when the cache holds one:
# "fast:" before its directory takes its flags file.
fast="$(scripts/python-fast.sh --dir)"
if [ -s "$fast/flags" ]; then
  pythons+=("fast:$fast")
else
  echo "test-pythons: no CPython built for speed in $fast (make python-fast): not tested against it"
fi

# The e2e tests that compare py> with the oracle, the terminal and signal
# tests whose behaviour depends on the Python, and the line editor's
# blocks and completion, which ask the Python whether a block is complete.
e2e='TestTranscripts|TestPTYBlock|TestPTYTab|TestPTYEditInEditor|TestPTYHighlighting|TestSetupCodeAgainstPython|TestStartupFileAgainstPython|TestSignalsAgainstPython|TestPython3OptionsAgainstPython|TestPTYPdb|TestPTYInputLineEditing|TestPTYCodeInteract|TestPTYChildPrograms|TestPTYCtrlC|TestPiped|TestMainThreadOverManyStarts|TestPTYPasteShowsLastValue|TestPTYBanner|TestSignalHandler|TestExit|TestPTYCtrlCStopsTheWait|TestForkAtExit|TestForkInScript|TestSafePath|TestMainObjects|TestPromptsInSys|TestPipedStdinAsPython|TestUnbufferedPipedStdin|TestTraceSeesUserCodeOnly|TestMorePython3Options|TestPTYInputAfterStdinClosed|TestClosedStandardStreams|TestSIGINTAtThePromptAsSet|TestSIGINTHandlerAtThePrompt|TestFaulthandlerReportAsPython'
# numpy and pandas are the system Python's; the others have none.
caps_skip='TestNumpy|TestPandas|TestDataFrame|TestScientific|TestSummariesImportNothing'

failed=()
for entry in "${pythons[@]}"; do
  link=auto py="$entry" skip="$caps_skip" e2e_skip='^$'
  case "$entry" in
    shared:*) link=shared py="${entry#shared:}" skip='^$' ;;
    # The fast build's banner names its own build date, not python3's.
    fast:*) py="$(sed -n 3p "${entry#fast:}/flags")" skip='^$' e2e_skip='^TestPTYBanner$' ;;
  esac
  if [ "${entry#fast:}" != "$entry" ]; then
    flags="$(cat "${entry#fast:}/flags")"
  else
    flags="$(PYAICHAT_LINK=$link scripts/python-flags.sh "$py")" || { failed+=("$entry (flags)"); continue; }
  fi
  cflags="$(sed -n 1p <<<"$flags")"
  ldflags="$(sed -n 2p <<<"$flags")"
  tags=pyaichat_python allow=
  if [ "${entry#fast:}" != "$entry" ]; then
    # pybridge/fastlink.go: the final link's LTO in one partition.
    tags=pyaichat_python,pyaichat_fast allow=-flto-partition=none
  fi
  goflags="${GOFLAGS:-} -tags=$tags -ldflags=-X=github.com/pyaichat/pyaichat/pybridge.buildPython=$(sed -n 3p <<<"$flags")"
  echo "=== $("$py" -c 'import sys; print(sys.version.split()[0])') ($entry): pybridge, capabilities, e2e against its python3 -i"
  start=$SECONDS
  if CGO_ENABLED=1 CGO_CFLAGS="-O2 -g $cflags" CGO_LDFLAGS="-O2 -g $ldflags" CGO_LDFLAGS_ALLOW="$allow" GOFLAGS="$goflags" \
      go test -count=1 ./pybridge ./capabilities -skip "$skip" &&
    CGO_ENABLED=1 CGO_CFLAGS="-O2 -g $cflags" CGO_LDFLAGS="-O2 -g $ldflags" CGO_LDFLAGS_ALLOW="$allow" GOFLAGS="$goflags" \
      go test -count=1 ./e2e -run "$e2e" -skip "$e2e_skip"; then
    echo "=== $entry: passed in $((SECONDS - start)) s"
  else
    echo "=== $entry: FAILED"
    failed+=("$entry")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "test-pythons: failed: ${failed[*]}"
  exit 1
fi
echo "test-pythons: passed: ${pythons[*]}"
