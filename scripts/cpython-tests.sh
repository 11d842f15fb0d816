#!/usr/bin/env bash
# Runs some of CPython's own regression tests with pyaichat as the
# interpreter, beside the same tests in the python3 pyaichat embeds, and
# compares them case by case. For each CPython given (default: pyenv's
# 3.10 and newer, whose installs carry Lib/test), pyaichat is built against
# it, then `-m test TESTS --junit-xml FILE` runs in both: pyaichat with
# stdin from /dev/null, so that it leaves its prompt at once when the
# tests end. A case that passes in one and not the other is a difference;
# the script lists them and fails if there are any. Takes minutes per
# version: not part of make test (make test-cpython).
#
#   scripts/cpython-tests.sh [PYTHON...]
#   TESTS="test_atexit test_signal" scripts/cpython-tests.sh
#
# The children these tests start run sys.executable, which inside pyaichat
# is the python3 it embeds (docs/compatibility.md says why); test_cmd_line
# therefore checks that its own process, pyaichat, gives python3's results
# when it starts python3, not pyaichat's command line.
set -uo pipefail
cd "$(dirname "$0")/.."

tests=(${TESTS:-test_threading test_atexit test_signal test_cmd_line})
# A test that hangs (3.12.1's own test_threading has one that recurses
# forever in python3 as well) fails after this many seconds, in both.
timeout="${TIMEOUT:-300}"
# Cases left out in both: 3.12.1's test_print_exception_gh_102056 recurses
# through exception groups for tens of minutes in python3 itself on this
# machine (a timeout ends the whole run, with no results at all).
ignore=(${IGNORE:-test_print_exception_gh_102056})
ignore_args=()
for pattern in "${ignore[@]}"; do ignore_args+=(--ignore "$pattern"); done
pythons=("$@")
if [ ${#pythons[@]} -eq 0 ]; then
  for dir in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*; do
    v="${dir##*/}" minor="${v#3.}" minor="${minor%%.*}"
    case "$minor" in ''|*[!0-9]*) continue ;; esac
    py="$dir/bin/python3.$minor"
    [ "$minor" -ge 10 ] && [ -x "$py" ] && pythons+=("$py")
  done
fi
[ ${#pythons[@]} -gt 0 ] || { echo "cpython-tests: no CPython 3.10+ with Lib/test found; name one" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# cases FILE prints "CLASS.NAME RESULT" for each case of a JUnit file,
# RESULT one of ok, failure, error, skipped.
cases() {
  "${pythons[0]}" - "$1" <<'EOF'
import sys
import xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).iter("testcase"):
    result = "ok"
    for kind in ("failure", "error", "skipped"):
        if case.find(kind) is not None:
            result = kind
    print(f"{case.get('classname')}.{case.get('name')} {result}")
EOF
}

status=0
for py in "${pythons[@]}"; do
  version="$("$py" -c 'import sys; print(sys.version.split()[0])')"
  if ! "$py" -c 'import test.libregrtest' 2>/dev/null; then
    echo "=== $version ($py): no Lib/test (Debian: libpython3.X-testsuite)"
    status=1
    continue
  fi
  flags="$(scripts/python-flags.sh "$py")" || { status=1; continue; }
  bin="$work/pyaichat-$version"
  if ! CGO_ENABLED=1 CGO_CFLAGS="-O2 -g $(sed -n 1p <<<"$flags")" CGO_LDFLAGS="-O2 -g $(sed -n 2p <<<"$flags")" \
      go build -tags=pyaichat_python \
      -ldflags="-X=github.com/pyaichat/pyaichat/pybridge.buildPython=$(sed -n 3p <<<"$flags")" \
      -o "$bin" ./cmd/pyaichat; then
    echo "=== $version: pyaichat does not build against $py"
    status=1
    continue
  fi
  echo "=== $version: ${tests[*]}, in python3 and in pyaichat"
  (cd "$work" && "$py" -m test --timeout "$timeout" "${ignore_args[@]}" "${tests[@]}" --junit-xml "$work/python-$version.xml" >"$work/python-$version.out" 2>&1)
  (cd "$work" && "$bin" -q -m test --timeout "$timeout" "${ignore_args[@]}" "${tests[@]}" --junit-xml "$work/pyaichat-$version.xml" </dev/null >"$work/pyaichat-$version.out" 2>&1)
  for who in python pyaichat; do
    if [ ! -s "$work/$who-$version.xml" ]; then
      echo "$who wrote no results; its output ends:"
      tail -20 "$work/$who-$version.out"
      status=1
      continue 2
    fi
    cases "$work/$who-$version.xml" | sort >"$work/$who-$version.cases"
    echo "$who: $(awk '{n[$NF]++} END {printf "%d cases: %d ok, %d failure, %d error, %d skipped", NR, n["ok"], n["failure"], n["error"], n["skipped"]}' "$work/$who-$version.cases")"
  done
  diff -U0 "$work/python-$version.cases" "$work/pyaichat-$version.cases" | grep -E '^[-+][^-+]' >"$work/diff"
  if [ -s "$work/diff" ]; then
    echo "=== $version: cases that differ (- python3, + pyaichat):"
    cat "$work/diff"
    status=1
  else
    echo "=== $version: the same $(wc -l <"$work/python-$version.cases") cases, each with the same result"
  fi
done
exit $status
