#!/usr/bin/env bash
# Instructions per document of the head rewrite, counted by callgrind:
# repeatable on a shared, noisy machine where times are not. For each page,
# icount runs 100 and 600 rewrites; the difference over 500 is what one
# document costs (resolving the target, scanning, rendering, writing), with
# the process's setup taken out. The collector is off (GOGC=off), so that
# the two runs differ by documents only: allocation is counted, collection
# is not (the benchmarks report allocations). Not run in CI; see
# docs/performance.md.
#
#   bash test/perf/icount.sh [-whole] PAGE.html...
#
# It installs valgrind from Debian's packages when missing.
set -euo pipefail
flags=()
if [ "${1:-}" = -whole ]; then flags=(-whole); shift; fi
pages=()
for p in "$@"; do pages+=("$(realpath "$p")"); done
cd "$(dirname "$0")/../.."
[ ${#pages[@]} -gt 0 ] || pages=("$(realpath ../shared/corpus)"/*.html)
command -v valgrind >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
go build -o "$W/icount" ./test/perf/icount
count() { # page n -> total instructions
  rm -f "$W/out"
  if ! GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
      --callgrind-out-file="$W/out" "$W/icount" "${flags[@]}" "$1" "$2" >"$W/log" 2>&1 || [ ! -s "$W/out" ]; then
    echo "icount: valgrind failed on $1 ($2 documents):" >&2
    tail -5 "$W/log" >&2
    return 1
  fi
  awk '/^(summary|totals):/ {print $2; exit}' "$W/out"
}
for page in "${pages[@]}"; do
  a=$(count "$page" 100) || exit 1
  b=$(count "$page" 600) || exit 1
  printf '%-28s %9d instructions/document\n' "$(basename "$page" .html)" $(( (b - a) / 500 ))
done
