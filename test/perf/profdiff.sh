#!/usr/bin/env bash
# Per-request CPU by function, two pprof CPU profiles side by side: A's and
# B's microseconds per request for every function, and B minus A, sorted
# by the difference (largest first). Each profile is divided by the
# requests served while it was taken (wrk's count over the profile's
# seconds), so that two servers profiled under the same load compare even
# when one served fewer requests.
#
#   bash test/perf/profdiff.sh A.prof A_REQUESTS B.prof B_REQUESTS [cum|flat]
#
# For example, the plain proxy (test/perf/peer plain -pprof ADDR) and
# headgate (its admin port) each under `wrk -c32`, 30 s profiles
# (/debug/pprof/profile?seconds=30), their request counts being wrk's
# req/s times 30. Functions of one binary only show 0 on the other side;
# "cum" (the default) includes callees, "flat" does not.
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,16p "$0"; exit 2; }
col=${5:-cum}
dump() {
  go tool pprof -top -nodecount=5000 $([ "$col" = cum ] && echo -cum) "$1" 2>/dev/null |
    awk -v n="$2" -v c="$col" '
      f { v = (c == "cum") ? $4 : $1; u = 1
          if (v ~ /ms$/) { sub(/ms$/, "", v); u = 1000 } else if (v ~ /us$/) { sub(/us$/, "", v); u = 1e6 } else sub(/s$/, "", v)
          name = $6; for (i = 7; i <= NF; i++) name = name " " $i
          printf "%s\t%.3f\n", name, v * 1e6 / u / n }
      /flat%/ { f = 1 }'
}
printf '%8s %8s %8s  %s\n' A_us B_us B-A function
join -t$'\t' -a1 -a2 -e0 -o 0,1.2,2.2 <(dump "$1" "$2" | sort -t$'\t' -k1,1) <(dump "$3" "$4" | sort -t$'\t' -k1,1) |
  awk -F'\t' '{ printf "%8.2f %8.2f %8.2f  %s\n", $2, $3, $3 - $2, $1 }' | sort -k3,3 -g -r
