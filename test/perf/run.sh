#!/usr/bin/env bash
# Side-by-side performance of headgate against its references, on loopback:
#   upstream direct, plain httputil.ReverseProxy, nginx proxy_pass,
#   nginx sub_filter injecting the same tags, and headgate; and, to show
#   the collector's part, headgate with a collector floor ("hg-gc8":
#   -gc-floor 8, the default before 2026-12-06; headgate's default is the
#   Go collector's) and the plain proxy with that floor ("plain-gc":
#   -gc-floor 8; internal/gcfloor).
# req/s and p50/p99 latency from wrk, CPU time per request of each server
# (utime+stime from /proc/PID/stat before and after each run, divided by
# the requests wrk completed: the figure that holds on a shared machine),
# peak RSS (VmHWM) of each server, reported as ratios to the plain Go proxy,
# and the read and write system calls per request of each server (rd/req,
# wr/req: read, readv, recvfrom, recvmsg and write, writev, sendto,
# sendmsg, sendfile, counted by `perf stat` on the server's syscall
# tracepoints, all its threads; spl/req is splice(2), headgate's direct
# write path (proxy/direct.go: half of them read a socket into a pipe, half
# write a pipe into a socket); sys/req is every system call). nginx reads
# with recv and writes with writev, which /proc/PID/io's syscr/syscw do
# not count, hence perf. Counting costs the counted process about 1.3 us a
# system call (measured: a write to /dev/null 0.5 us, 1.8 us counted), a
# tenth of a proxied request's CPU, so the counts come from one run of
# SYS_SECS (default 2) seconds per target after the timed rounds, whose
# CPU is not used. SYSCALLS=0 skips it (the columns then say n/a), as does
# a machine where perf can not read tracepoints (not root).
# Targets are interleaved round by round. Not run in CI (it takes minutes);
# see docs/performance.md.
#
#   bash test/perf/run.sh [PAGE.html] [ROUNDS] [SECONDS]
#   MODES="repeat fresh browser" CONNS=32 bash test/perf/run.sh ...
#   TARGETS="headgate" MODES=repeat bash test/perf/run.sh PAGE 20 3
#            (an A/B of the named targets against the plain proxy only)
#   ALT=/tmp/headgate-other TARGETS="headgate alt" MODES=repeat bash test/perf/run.sh PAGE 12 4
#            (adds target "alt": another headgate binary, say a build of
#            another commit, on the same config: builds side by side)
#   ALT=self ALT_ARGS="-gc-floor 5" TARGETS="headgate alt" ...
#            ("alt" is this build with serve's extra flags ALT_ARGS: a
#            setting side by side with the default, no wrapper script)
#
# Each round runs the targets in turn, every other round in the reverse
# order, so that a machine that slows down or speeds up through a run
# charges no target more than another. Besides the medians of each
# target's rounds, "paired" is the median of its per-round ratios to the
# plain proxy's CPU per request in the same round: the steadier figure
# when the machine's speed drifts from round to round.
#
# Modes (each a table of its own; peak RSS is reset between them):
#   repeat   the upstream sends the same page every time (headgate's plan
#            cache answers), identity both ways;
#   fresh    the upstream's head changes on every request (test/perf/fresh:
#            a CSRF-token meta), identity both ways; nothing headgate
#            decides reads that token, so its plan cache replays the last
#            plan over the new bytes (rewrite/nearmatch.go);
#   rescan   the same, but the token is in the description meta, which
#            headgate reads: every head is scanned and rendered;
#   browser  a browser's navigation, against every target alike: its
#            Accept-Encoding (gzip, deflate, br, zstd) and its Accept
#            (text/html,application/xhtml+xml,application/xml;q=0.9,
#            */*;q=0.8), against an upstream that sends gzip when asked.
#            headgate asks that upstream for identity on such a request
#            (server.upstream_page_coding's default), rewrites and
#            encodes once; nginx sub_filter asks for identity too
#            (proxy_set_header Accept-Encoding "") and gets gzip on at
#            NGX_GZIP_LEVEL (default 4, headgate's gzip level); "recode"
#            is the plain proxy decoding and re-encoding gzip
#            (test/perf/peer plain -recode). nginx and the plain proxies
#            ignore the Accept; without it headgate would take the
#            request for a fetch() and ask for gzip.
#
# It installs wrk and nginx-light from Debian's packages when missing.
# Traffic goes to 127.0.0.1 only, bounded by ROUNDS x SECONDS per target.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
PAGE=${1:-../shared/corpus/wikipedia.html}
ROUNDS=${2:-3}
SECS=${3:-8}
CONNS=${CONNS:-32}
[ -f "$PAGE" ] || { echo "no page $PAGE (the corpus is in ../shared/corpus)"; exit 2; }

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk || ! need nginx; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx-light >/dev/null
fi

W=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; nginx -p "$W/nginx" -c nginx.conf -s stop 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT

go build -o "$W/headgate" ./cmd/headgate
go build -o "$W/peer" ./test/perf/peer
go build -o "$W/fresh" ./test/perf/fresh

P_UP=18001 P_PLAIN=18002 P_NGX=18003 P_SUB=18004 P_HG=18005 P_ADMIN=18006 P_RECODE=18007
P_HG8=18008 P_ADMIN8=18009 P_PLAINGC=18010 P_ALT=18011 P_ADMINALT=18012
MODES=${MODES:-repeat fresh browser}
. test/perf/bench.sh
NGX_GZIP_LEVEL=${NGX_GZIP_LEVEL:-$HG_GZIP_LEVEL}

bench_config "$W/headgate.toml" $P_HG $P_ADMIN $P_UP
bench_config "$W/headgate-gc8.toml" $P_HG8 $P_ADMIN8 $P_UP
bench_config "$W/headgate-alt.toml" $P_ALT $P_ADMINALT $P_UP
# sub_filter injects exactly the tags headgate writes on an empty head.
TAGS=$(bench_tags "$W/headgate" "$W/headgate.toml")
mkdir -p "$W/nginx/logs"
{
  nginx_http "$W/nginx" $P_UP
  nginx_pass $P_NGX
  nginx_sub $P_SUB "$NGX_GZIP_LEVEL" "$TAGS"
  echo "}"
} >"$W/nginx/nginx.conf"

"$W/peer" plain -listen 127.0.0.1:$P_PLAIN -upstream http://127.0.0.1:$P_UP & pids+=($!); PID_PLAIN=$!
"$W/peer" plain -recode -listen 127.0.0.1:$P_RECODE -upstream http://127.0.0.1:$P_UP 2>"$W/recode.log" & pids+=($!); PID_RECODE=$!
"$W/headgate" serve -config "$W/headgate.toml" 2>"$W/headgate.log" & pids+=($!); PID_HG=$!
# The collector's part, both ways (docs/performance.md, "The collector"):
# headgate with a floor of 8 MiB, and the plain proxy with the same floor.
"$W/headgate" serve -config "$W/headgate-gc8.toml" -gc-floor 8 2>"$W/headgate-gc8.log" & pids+=($!); PID_HG8=$!
"$W/peer" plain -gc-floor 8 -listen 127.0.0.1:$P_PLAINGC -upstream http://127.0.0.1:$P_UP & pids+=($!); PID_PLAINGC=$!
PID_ALT=
if [ -n "${ALT:-}" ]; then
  [ "$ALT" = self ] && ALT=$W/headgate
  # shellcheck disable=SC2086 # ALT_ARGS is a list of flags
  "$ALT" serve -config "$W/headgate-alt.toml" ${ALT_ARGS:-} 2>"$W/headgate-alt.log" & pids+=($!); PID_ALT=$!
fi
nginx -p "$W/nginx" -c nginx.conf
PID_UP=

# start_upstream MODE: the upstream of the mode on P_UP (the proxies keep
# pointing at it; their idle connections to the last one are dropped).
start_upstream() {
  if [ -n "$PID_UP" ]; then kill "$PID_UP" 2>/dev/null || true; wait "$PID_UP" 2>/dev/null || true; fi
  case $1 in
    fresh) "$W/fresh" -listen 127.0.0.1:$P_UP -page "$PAGE" & ;;
    rescan) "$W/fresh" -in description -listen 127.0.0.1:$P_UP -page "$PAGE" & ;;
    *) "$W/peer" upstream -listen 127.0.0.1:$P_UP -page "$PAGE" & ;;
  esac
  PID_UP=$!; pids+=($PID_UP)
  for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$P_UP/page" 2>/dev/null && break; sleep 0.1; done
}

ngx_pids() { pgrep -P "$(cat "$W/nginx/nginx.pid")"; }
# pids_of TARGET: the server processes whose CPU and memory are the target's.
pids_of() {
  case $1 in
    direct) echo "$PID_UP";; plain) echo "$PID_PLAIN";; recode) echo "$PID_RECODE";; headgate) echo "$PID_HG";;
    hg-gc8) echo "$PID_HG8";; plain-gc) echo "$PID_PLAINGC";; alt) echo "$PID_ALT";;
    *) ngx_pids;;
  esac
}
# Syscall counting (perf stat on the tracepoints), when it works here.
SC_READ="read readv recvfrom recvmsg"
SC_WRITE="write writev sendto sendmsg sendfile64"
SC_SPLICE="splice"
SC_EV="raw_syscalls:sys_enter"
for c in $SC_READ $SC_WRITE $SC_SPLICE; do SC_EV="$SC_EV,syscalls:sys_enter_$c"; done
if [ "${SYSCALLS:-1}" = 1 ] && need perf && perf stat -x, -e "$SC_EV" -o /dev/null -- true 2>/dev/null; then
  SYSCALLS=1
else
  SYSCALLS=0
fi
# counted TARGET FILE CMD...: runs CMD, counting TARGET's syscalls into FILE.
counted() {
  local n=$1 f=$2; shift 2
  if [ "$SYSCALLS" = 1 ]; then
    perf stat -x, -e "$SC_EV" -p "$(pids_of "$n" | paste -sd,)" -o "$f" -- "$@"
  else
    : >"$f"; "$@"
  fi
}
# per_req FILE REQS KIND: KIND (read, write, splice, all) syscalls per request from
# a counted FILE, "n/a" when nothing was counted.
per_req() {
  awk -F, -v n="$2" -v kind="$3" -v rd=" $SC_READ " -v wr=" $SC_WRITE " -v sp=" $SC_SPLICE " '
    $3 ~ /^(raw_)?syscalls:/ && $1 ~ /^[0-9]+$/ {
      e=$3; sub(/.*sys_enter_?/, "", e)
      if (e == "") all += $1; else if (index(rd, " " e " ")) r += $1; else if (index(wr, " " e " ")) w += $1; else if (index(sp, " " e " ")) s += $1
      seen=1
    }
    END { v = kind == "read" ? r : kind == "write" ? w : kind == "splice" ? s : all
      if (!seen || n+0 <= 0) print "n/a"; else printf "%.1f", v / n }' "$1"
}
ticks() { local s=0; for p in $(pids_of "$1"); do s=$((s + $(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo $s; }
hwm() { local s=0; for p in $(pids_of "$1"); do s=$((s + $(awk '/VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null || echo 0))); done; echo $s; }
reset_hwm() { for p in "$PID_UP" "$PID_PLAIN" "$PID_RECODE" "$PID_HG" "$PID_HG8" "$PID_PLAINGC" $PID_ALT $(ngx_pids); do echo 5 >"/proc/$p/clear_refs" 2>/dev/null || true; done; }
median() { tr ' ' '\n' | grep -E '^[0-9.eE+-]+$' | sort -g | awk '{a[NR]=$1} END{ if (!NR) print "n/a"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2 }'; } # the middle value, or the mean of the two middle ones
ms() { # wrk latency to milliseconds
  awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us$/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v); print v} else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} else print v }'
}
TCK=$(getconf CLK_TCK)
declare -A PORT=([direct]=$P_UP [plain]=$P_PLAIN [recode]=$P_RECODE [nginx]=$P_NGX [sub_filter]=$P_SUB [headgate]=$P_HG
  [hg-gc8]=$P_HG8 [plain-gc]=$P_PLAINGC [alt]=$P_ALT)

for mode in $MODES; do
  start_upstream "$mode"
  hdr=()
  names=(direct plain plain-gc nginx sub_filter headgate hg-gc8)
  if [ "$mode" = browser ]; then
    hdr=(-H "Accept-Encoding: gzip, deflate, br, zstd" -H "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
    names=(direct plain recode nginx sub_filter headgate hg-gc8)
  fi
  if [ -n "${ALT:-}" ]; then names+=(alt); fi
  if [ -n "${TARGETS:-}" ]; then
    keep=()
    for n in "${names[@]}"; do case " plain $TARGETS " in *" $n "*) keep+=("$n") ;; esac; done
    names=("${keep[@]}")
  fi
  for n in "${names[@]}"; do
    for _ in $(seq 50); do curl -fsS -o /dev/null "${hdr[@]}" "http://127.0.0.1:${PORT[$n]}/page" 2>/dev/null && break; sleep 0.1; done
  done
  # The same tags must arrive from sub_filter and headgate.
  sub=$(curl -fsS --compressed "${hdr[@]}" "http://127.0.0.1:$P_SUB/page"); hg=$(curl -fsS --compressed "${hdr[@]}" "http://127.0.0.1:$P_HG/page")
  grep -q 'rel="canonical" href="https://bench.example/page"' <<<"$sub" || { echo "sub_filter did not inject"; exit 1; }
  grep -q 'rel="canonical" href="https://bench.example/page"' <<<"$hg" || { echo "headgate did not rewrite"; cat "$W/headgate.log"; exit 1; }
  reset_hwm

  declare -A RPS=() CPU=() P50=() P99=() BAD=() RCPU=() SR=() SW=() SS=() SA=()
  for n in "${names[@]}"; do RPS[$n]=""; CPU[$n]=""; P50[$n]=""; P99[$n]=""; BAD[$n]=0; SR[$n]=""; SW[$n]=""; SA[$n]=""; done
  for r in $(seq "$ROUNDS"); do
    order=("${names[@]}")
    if (( r % 2 == 0 )); then
      order=(); for (( i=${#names[@]}-1; i>=0; i-- )); do order+=("${names[i]}"); done
    fi
    for n in "${order[@]}"; do
      t0=$(ticks "$n")
      out=$(wrk -t"$(( CONNS < 2 ? CONNS : 2 ))" -c"$CONNS" -d"${SECS}s" --latency "${hdr[@]}" "http://127.0.0.1:${PORT[$n]}/page")
      t1=$(ticks "$n")
      reqs=$(echo "$out" | awk '/requests in/ {print $1}')
      rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
      p50=$(ms "$(echo "$out" | awk '$1=="50%" {print $2}')")
      p99=$(ms "$(echo "$out" | awk '$1=="99%" {print $2}')")
      bad=$(echo "$out" | awk '/Non-2xx/ {s+=$NF} /Socket errors/ {gsub(",",""); s+=$4+$6+$8+$10} END{print s+0}')
      us=$(awk -v d=$((t1 - t0)) -v n="${reqs:-0}" -v t="$TCK" 'BEGIN{ if (n > 0) printf "%.1f", d * 1e6 / t / n; else print "n/a" }')
      RPS[$n]="${RPS[$n]} $rps"; CPU[$n]="${CPU[$n]} $us"; P50[$n]="${P50[$n]} $p50"; P99[$n]="${P99[$n]} $p99"
      BAD[$n]=$((BAD[$n] + bad))
      RCPU[$n,$r]=$us
      printf '%-7s round %d %-10s %8.0f req/s %8s CPU-us/req  p50 %7.2f ms  p99 %7.2f ms  errors %d\n' "$mode" "$r" "$n" "$rps" "$us" "$p50" "$p99" "$bad"
    done
  done

  # Peak memory before the counting runs; then the system calls, counted
  # apart from the timed rounds (counting slows the counted).
  declare -A MEM=()
  for n in "${names[@]}"; do MEM[$n]=$(hwm "$n"); done
  if [ "$SYSCALLS" = 1 ]; then
    for n in "${names[@]}"; do
      reqs=$(counted "$n" "$W/sys" wrk -t"$(( CONNS < 2 ? CONNS : 2 ))" -c"$CONNS" -d"${SYS_SECS:-2}s" "${hdr[@]}" "http://127.0.0.1:${PORT[$n]}/page" | awk '/requests in/ {print $1}')
      SR[$n]=$(per_req "$W/sys" "${reqs:-0}" read); SW[$n]=$(per_req "$W/sys" "${reqs:-0}" write); SS[$n]=$(per_req "$W/sys" "${reqs:-0}" splice); SA[$n]=$(per_req "$W/sys" "${reqs:-0}" all)
    done
  fi
  echo
  echo "mode $mode: page $PAGE ($(stat -c %s "$PAGE") bytes), $ROUNDS rounds x ${SECS}s, $CONNS connections, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "(medians over the rounds; ratios to the plain proxy; CPU is the server's own, not wrk's)"
  printf '%-10s %9s %7s %9s %7s %7s %8s %8s %10s %7s %6s %6s %6s %7s %7s\n' target req/s x_plain CPU-us/req x_plain paired p50_ms p99_ms peak_KiB x_plain errors rd/req wr/req spl/req sys/req
  base_rps=$(echo "${RPS[plain]}" | median); base_cpu=$(echo "${CPU[plain]}" | median); base_mem=${MEM[plain]}
  for n in "${names[@]}"; do
    rps=$(echo "${RPS[$n]}" | median); cpu=$(echo "${CPU[$n]}" | median); mem=${MEM[$n]}
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a+0 > 0 && b+0 > 0) printf "%.2f", a/b; else print "n/a" }'; }
    pr=""
    for r in $(seq "$ROUNDS"); do pr="$pr $(awk -v a="${RCPU[$n,$r]}" -v b="${RCPU[plain,$r]}" 'BEGIN{ if (a+0 > 0 && b+0 > 0) printf "%.3f", a/b }')"; done
    printf '%-10s %9.0f %7s %9s %7s %7s %8s %8s %10s %7s %6d %6s %6s %7s %7s\n' "$n" "$rps" "$(ratio "$rps" "$base_rps")" "$cpu" "$(ratio "$cpu" "$base_cpu")" "$(echo "$pr" | median)" \
      "$(echo "${P50[$n]}" | median)" "$(echo "${P99[$n]}" | median)" "$mem" "$(ratio "$mem" "$base_mem")" "${BAD[$n]}" \
      "${SR[$n]:-n/a}" "${SW[$n]:-n/a}" "${SS[$n]:-n/a}" "${SA[$n]:-n/a}"
  done
  echo "(nginx, sub_filter: CPU, memory and syscalls of all nginx workers together; syscalls/req from one ${SYS_SECS:-2} s run apart, with the request to the upstream and reads that found nothing (EAGAIN))"
  echo
done
