#!/usr/bin/env bash
# The collector's floor (serve -gc-floor) by the collector's own account:
# for each floor, one headgate at a time behind the fresh-head upstream
# (test/perf/fresh, bbc.html by default) under wrk -c32, with
# GODEBUG=gctrace=1; prints requests per collection, the mark CPU of a
# collection and of a request (gctrace's assist + background + idle mark
# times; its stop-the-world figures are wall time times GOMAXPROCS, not
# CPU, and are left out), the process's CPU per request and its peak RSS.
# run.sh's CPU per request moves more between rounds than the floor is
# worth on a shared machine; these counts do not.
#
#   bash test/perf/gcfloor.sh [PAGE.html] [ROUNDS] [SECONDS]
#   FLOORS="0 4 8" bash test/perf/gcfloor.sh ../shared/corpus/bbc.html 2 5
#   BINS="/tmp/headgate-a /tmp/headgate-b" bash test/perf/gcfloor.sh ../shared/corpus/bbc.html 4 5
#            (two headgate binaries, say builds of two commits, at their
#            default floor, instead of this build at each floor: the
#            collector's account of a change, side by side)
#
# Traffic goes to 127.0.0.1 only, bounded by ROUNDS x SECONDS per floor.
set -euo pipefail
cd "$(dirname "$0")/../.."
PAGE=${1:-../shared/corpus/bbc.html}
ROUNDS=${2:-2}
SECS=${3:-5}
[ -f "$PAGE" ] || { echo "no page $PAGE (the corpus is in ../shared/corpus)"; exit 2; }
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
W=$(mktemp -d)
pids=()
hg=
cleanup() { for p in "${pids[@]}" $hg; do kill "$p" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
go build -o "$W/headgate" ./cmd/headgate
go build -o "$W/fresh" ./test/perf/fresh
. test/perf/bench.sh
P_UP=18101 P_HG=18102 P_ADMIN=18103
bench_config "$W/hg.toml" $P_HG $P_ADMIN $P_UP
"$W/fresh" -listen 127.0.0.1:$P_UP -page "$PAGE" & pids+=($!)
for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$P_UP/page" 2>/dev/null && break; sleep 0.1; done
TCK=$(getconf CLK_TCK)
for r in $(seq "$ROUNDS"); do
  for f in ${BINS:-${FLOORS:-0 4 8}}; do
    if [ -n "${BINS:-}" ]; then
      GODEBUG=gctrace=1 "$f" serve -config "$W/hg.toml" 2>"$W/gc.log" & hg=$!
    else
      GODEBUG=gctrace=1 "$W/headgate" serve -config "$W/hg.toml" -gc-floor "$f" 2>"$W/gc.log" & hg=$!
    fi
    for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$P_HG/page" 2>/dev/null && break; sleep 0.1; done
    echo 5 >"/proc/$hg/clear_refs" 2>/dev/null || true
    t0=$(awk '{print $14+$15}' "/proc/$hg/stat")
    n=$(wrk -c32 -t2 -d"${SECS}s" "http://127.0.0.1:$P_HG/page" | awk '/requests in/ {print $1}')
    t1=$(awk '{print $14+$15}' "/proc/$hg/stat")
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$hg/status")

    kill "$hg"; wait "$hg" 2>/dev/null || true; hg=
    awk -v n="$n" -v f="$f" -v what="${BINS:+build}" -v r="$r" -v t=$((t1 - t0)) -v tck="$TCK" -v hwm="$hwm" '
      /^gc [0-9]+ @/ {
        split($0, a, "ms clock, "); split(a[2], b, " ms cpu")
        split(b[1], c, "+"); split(c[2], m, "/")
        mark += m[1] + m[2] + m[3]; g++
      }
      END {
        if (what == "") what = "floor"
        if (!g || !n) { print what " " f ": no collections or no requests"; exit }
        printf "round %d " what " %-2s %7d req  one collection per %4d req  mark %.2f ms/collection  %.2f us/req  process %.1f us/req  peak %d KiB\n",
          r, f, n, n / g, mark / g, mark * 1000 / n, t * 1e6 / tck / n, hwm
      }' "$W/gc.log"
  done
done
