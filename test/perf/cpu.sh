# Sourced by test/perf/encoding.sh and test/perf/spike/spike.sh: CPU-µs per
# request from /proc/PID/stat (utime + stime of the server processes over
# the requests wrk completed), the figure that holds on a shared machine,
# where req/s moves with everything else that runs.

HZ=$(getconf CLK_TCK)

# ticks PID...: the CPU clock ticks (user + system) the processes used so far.
ticks() {
  local s=0 p t
  for p in "$@"; do
    # Fields after the command name (which may hold spaces): utime is the
    # 12th, stime the 13th.
    t=$(sed -e 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}') || t=0
    s=$((s + ${t:-0}))
  done
  echo "$s"
}

# nginx_pids DIR: the master and workers of the nginx whose prefix is DIR.
nginx_pids() {
  local m
  m=$(cat "$1/nginx.pid")
  echo "$m" $(pgrep -P "$m")
}

# measure URL SECS CONNS HEADER PID...: one wrk run; prints
# "req/s requests cpu_us_per_request errors".
measure() {
  local url=$1 secs=$2 conns=$3 header=$4 out t0 t1 reqs rps errs
  shift 4
  t0=$(ticks "$@")
  if [ -n "$header" ]; then
    out=$(wrk -t2 -c"$conns" -d"${secs}s" -H "$header" "$url")
  else
    out=$(wrk -t2 -c"$conns" -d"${secs}s" "$url")
  fi
  t1=$(ticks "$@")
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  errs=$(echo "$out" | awk '/Socket errors|Non-2xx/ {printf "%s;", $0}')
  awk -v r="$rps" -v n="$reqs" -v d=$((t1 - t0)) -v hz="$HZ" -v e="${errs:-none}" \
    'BEGIN { printf "%.0f %d %.1f %s\n", r, n, (n > 0 ? d * 1e6 / hz / n : 0), e }'
}

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{ if (NR) print a[int((NR+1)/2)]; else print 0 }'; }

# wait_up URL...: until each answers (10 s at most).
wait_up() {
  local u
  for u in "$@"; do
    for _ in $(seq 100); do curl -fsS -o /dev/null "$u" 2>/dev/null && break; sleep 0.1; done
  done
}
