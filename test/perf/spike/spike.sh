#!/usr/bin/env bash
# The HTTP-core spike (issue 18): CPU-µs per request of the smallest
# streaming proxies on fasthttp and on net/http against the plain
# httputil.ReverseProxy (test/perf/peer plain), nginx proxy_pass (buffers
# that fit the page, as run.sh configures it) and headgate, passing one
# page through from test/perf/peer upstream. Targets are interleaved round
# by round; the table gives medians. Not run in CI.
#
#   bash test/perf/spike/spike.sh [PAGE.html] [ROUNDS] [SECONDS]
#
# SWEEP=1 adds ReverseProxy at 16 KiB and 128 KiB buffers beside 64 KiB;
# SYSCALLS=1 ends with the reads and writes per request of each Go target
# and nginx (strace -c over a short wrk -c4 run).
#
# Traffic goes to 127.0.0.1 only (ports 18701-18712), bounded by
# ROUNDS x SECONDS per target.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
PAGE=${1:-../shared/corpus/bbc.html}
ROUNDS=${2:-5}
SECS=${3:-5}
CONNS=${CONNS:-32}
[ -f "$PAGE" ] || { echo "no page $PAGE (the corpus is in ../shared/corpus): skipped"; exit 0; }
command -v wrk >/dev/null && command -v nginx >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk nginx-light >/dev/null; }
. test/perf/cpu.sh
. test/perf/bench.sh

W=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; nginx -p "$W/nginx" -c nginx.conf -s stop 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT

go build -o "$W/headgate" ./cmd/headgate
go build -o "$W/peer" ./test/perf/peer
(cd test/perf/spike && go build -o "$W/spike" .)

P_UP=18701 P_PLAIN=18702 P_RP=18703 P_NET=18704 P_FAST=18705 P_NGX=18706 P_HG=18707
bench_config "$W/headgate.toml" $P_HG 18708 $P_UP
mkdir -p "$W/nginx/logs"
{
  nginx_http "$W/nginx" $P_UP
  nginx_pass $P_NGX
  echo "}"
} >"$W/nginx/nginx.conf"

"$W/peer" upstream -listen 127.0.0.1:$P_UP -page "$PAGE" & pids+=($!); PID_UP=$!
"$W/peer" plain -listen 127.0.0.1:$P_PLAIN -upstream http://127.0.0.1:$P_UP & pids+=($!); PID_PLAIN=$!
"$W/spike" rp -listen 127.0.0.1:$P_RP -upstream 127.0.0.1:$P_UP & pids+=($!); PID_RP=$!
"$W/spike" nethttp -listen 127.0.0.1:$P_NET -upstream 127.0.0.1:$P_UP & pids+=($!); PID_NET=$!
"$W/spike" fasthttp -listen 127.0.0.1:$P_FAST -upstream 127.0.0.1:$P_UP 2>/dev/null & pids+=($!); PID_FAST=$!
"$W/headgate" serve -config "$W/headgate.toml" 2>"$W/headgate.log" & pids+=($!); PID_HG=$!
nginx -p "$W/nginx" -c nginx.conf
wait_up http://127.0.0.1:{$P_UP,$P_PLAIN,$P_RP,$P_NET,$P_FAST,$P_NGX,$P_HG}/page
names=(plain rp-tuned nethttp-min fasthttp nginx headgate)
declare -A PORT=([plain]=$P_PLAIN [rp-tuned]=$P_RP [nethttp-min]=$P_NET [fasthttp]=$P_FAST [nginx]=$P_NGX [headgate]=$P_HG)
declare -A PID=([plain]=$PID_PLAIN [rp-tuned]=$PID_RP [nethttp-min]=$PID_NET [fasthttp]=$PID_FAST [headgate]=$PID_HG)
if [ "${SWEEP:-}" = 1 ]; then
  "$W/spike" rp -buf 16384 -listen 127.0.0.1:18710 -upstream 127.0.0.1:$P_UP & pids+=($!); PID[rp-16k]=$!
  "$W/spike" rp -buf 131072 -listen 127.0.0.1:18711 -upstream 127.0.0.1:$P_UP & pids+=($!); PID[rp-128k]=$!
  PORT[rp-16k]=18710; PORT[rp-128k]=18711
  names=(plain rp-16k rp-tuned rp-128k fasthttp nginx)
  wait_up http://127.0.0.1:{18710,18711}/page
fi
for port in $P_PLAIN $P_RP $P_NET $P_FAST $P_NGX; do
  curl -fsS "http://127.0.0.1:$port/page" | cmp -s - "$PAGE" || { echo "port $port does not pass the page through"; exit 1; }
done

declare -A RPS CPU UPCPU
for r in $(seq "$ROUNDS"); do
  for n in "${names[@]}"; do
    if [ "$n" = nginx ]; then p=$(nginx_pids "$W/nginx"); else p=${PID[$n]}; fi
    u0=$(ticks $PID_UP)
    read -r rps reqs cpu errs < <(measure "http://127.0.0.1:${PORT[$n]}/page" "$SECS" "$CONNS" "" $p)
    u1=$(ticks $PID_UP)
    up=$(awk -v d=$((u1 - u0)) -v hz="$HZ" -v n="$reqs" 'BEGIN{printf "%.1f", n ? d*1e6/hz/n : 0}')
    RPS[$n]="${RPS[$n]:-} $rps"; CPU[$n]="${CPU[$n]:-} $cpu"; UPCPU[$n]="${UPCPU[$n]:-} $up"
    printf 'round %d %-12s %7s req/s %8s requests %7s CPU-µs/req (upstream %s) errors: %s\n' "$r" "$n" "$rps" "$reqs" "$cpu" "$up" "$errs"
  done
done

echo
echo "page: $PAGE ($(stat -c %s "$PAGE") bytes), $ROUNDS rounds x ${SECS}s, $CONNS connections, $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
base=$(echo "${CPU[plain]}" | median)
printf '%-12s %9s %12s %9s %14s\n' target req/s CPU-µs/req ×plain upstream-µs/req
for n in "${names[@]}"; do
  c=$(echo "${CPU[$n]}" | median)
  printf '%-12s %9s %12s %9.2f %14s\n' "$n" "$(echo "${RPS[$n]}" | median)" "$c" "$(awk -v a="$c" -v b="$base" 'BEGIN{print a/b}')" "$(echo "${UPCPU[$n]}" | median)"
done

if [ "${SYSCALLS:-}" = 1 ]; then
  echo
  echo "system calls per request (strace -c over wrk -t1 -c4 -d2s; strace slows the target, the counts hold)"
  printf '%-12s %9s %9s %9s\n' target reads writes requests
  for n in "${names[@]}"; do
    if [ "$n" = nginx ]; then p=$(nginx_pids "$W/nginx"); else p=${PID[$n]}; fi
    args=(); for q in $p; do args+=(-p "$q"); done
    strace -f -c -e trace=read,readv,recvfrom,write,writev,sendto,sendmsg,sendfile "${args[@]}" -o "$W/strace.$n" 2>/dev/null & sp=$!
    sleep 0.5
    reqs=$(wrk -t1 -c4 -d2s "http://127.0.0.1:${PORT[$n]}/page" | awk '/requests in/ {print $1}')
    kill -INT $sp; wait $sp 2>/dev/null || true
    awk -v n="$n" -v r="$reqs" '$NF ~ /^(read|readv|recvfrom)$/ {rd += $4} $NF ~ /^(write|writev|sendto|sendmsg|sendfile)$/ {wr += $4}
      END {printf "%-12s %9.1f %9.1f %9d\n", n, rd/r, wr/r, r}' "$W/strace.$n"
  done
fi
