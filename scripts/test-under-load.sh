#!/usr/bin/env bash
# Runs `make test` several times in a row (default 3) while a busy loop
# runs on every core, to show that the suite does not depend on a quiet
# machine: its deadlines bound hangs, they do not measure speed. Prints
# each run's time and result; each run's log is kept in $LOGDIR (default
# a new directory under /tmp). Fails if any run fails.
#
#   scripts/test-under-load.sh [RUNS] [make test ARGS...]   (make test-under-load)
set -uo pipefail
cd "$(dirname "$0")/.."

runs="${1:-3}"
shift || true
logdir="${LOGDIR:-$(mktemp -d /tmp/pyaichat-loaded.XXXXXX)}"
mkdir -p "$logdir"

hogs=()
stop_hogs() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null; }
trap stop_hogs EXIT
for _ in $(seq "$(nproc)"); do
  bash -c 'while :; do :; done' &
  hogs+=($!)
done
echo "test-under-load: ${#hogs[@]} busy loops running; logs in $logdir"

failed=0
for i in $(seq "$runs"); do
  start=$SECONDS
  if make --no-print-directory test "$@" >"$logdir/run$i.log" 2>&1; then
    result=passed
  else
    result=FAILED
    failed=$((failed + 1))
  fi
  echo "test-under-load: run $i of $runs $result in $((SECONDS - start)) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  [ "$result" = passed ] || grep -E '^(--- FAIL|FAIL|=== make test: .*FAILED)' "$logdir/run$i.log" | head -n 20
done
[ "$failed" -eq 0 ] || { echo "test-under-load: $failed of $runs runs failed"; exit 1; }
echo "test-under-load: all $runs runs passed"
