#!/usr/bin/env bash
# Writes the benchmark figures of `go test -bench` output (read from the
# files named, or standard input) into docs/performance.md, between its
# "latest run" markers, as one table per package, headed by the date, the
# machine and the commit they were measured on. make bench runs it.
#
#   scripts/bench-doc.sh bench.out
set -euo pipefail
cd "$(dirname "$0")/.."

doc=docs/performance.md
begin='<!-- latest make bench run: written by scripts/bench-doc.sh -->'
end='<!-- end of latest make bench run -->'
grep -qF "$begin" "$doc" && grep -qF "$end" "$doc" || { echo "bench-doc: $doc has no latest-run markers" >&2; exit 1; }

commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
git diff --quiet HEAD 2>/dev/null || commit="$commit with uncommitted changes"
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
block="$(mktemp)"
trap 'rm -f "$block"' EXIT
{
  echo "$begin"
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') at commit $commit on $(nproc) CPUs ($cpu),"
  echo "$(free -g | awk '/^Mem:/ {print $2}') GiB, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; $(go env GOVERSION), $(scripts/python-flags.sh | sed -n 3p)."
  awk '
    /^pkg: / { pkg = $2; sub("github.com/pyaichat/pyaichat/", "", pkg); next }
    # A benchmark that logs a table first has its figures on a line of
    # their own, which starts with the run count.
    /^Benchmark/ && $2 !~ /^[0-9]+$/ { pending = $1; next }
    /^Benchmark/ && NF >= 4 { row($1, 2); next }
    pending != "" && $1 ~ /^[0-9]+$/ && NF >= 3 { row(pending, 1); pending = "" }
    function row(name, from,   i, figs) {
      if (pkg != shown) { printf "\n**%s**\n\n| benchmark | runs | figures |\n|---|---|---|\n", pkg; shown = pkg }
      sub(/-[0-9]+$/, "", name)
      figs = ""
      for (i = from + 1; i + 1 <= NF; i += 2) figs = figs (figs == "" ? "" : ", ") $i " " $(i + 1)
      printf "| %s | %s | %s |\n", name, $from, figs
    }' "$@"
  echo
  echo "$end"
} >"$block"
awk -v b="$begin" -v e="$end" -v f="$block" '
  $0 == b { while ((getline line < f) > 0) print line; skip = 1; next }
  $0 == e { skip = 0; next }
  !skip' "$doc" >"$doc.new"
mv "$doc.new" "$doc"
echo "bench-doc: wrote the figures into $doc"
