#!/usr/bin/env bash
# Side-by-side performance of headgate against its references, on loopback:
#   upstream direct, plain httputil.ReverseProxy, nginx proxy_pass,
#   nginx sub_filter injecting the same tags, and headgate.
# req/s and p50/p99 latency from wrk, peak RSS (VmHWM) of each server,
# reported as ratios to the plain Go proxy. Not run in CI (it takes minutes
# and wants the machine to itself); see docs/performance.md.
#
#   bash test/perf/run.sh [PAGE.html] [ROUNDS] [SECONDS]
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

P_UP=18001 P_PLAIN=18002 P_NGX=18003 P_SUB=18004 P_HG=18005 P_ADMIN=18006

cat >"$W/headgate.toml" <<TOML
[server]
listen = "127.0.0.1:$P_HG"
admin_listen = "127.0.0.1:$P_ADMIN"
upstream = "http://127.0.0.1:$P_UP"
access_log = false
[site]
base_url = "https://bench.example"
correct_upstream = false
og_url_from_canonical = true
[[rule]]
match = "/*"
description = "A page behind a proxy."
canonical = "/page"
[rule.open_graph]
title = "Bench page"
[rule.twitter]
card = "summary"
title = "Bench page"
TOML

# sub_filter injects exactly the tags headgate writes on an empty head.
TAGS=$(printf '<html><head></head><body></body></html>' | "$W/headgate" rewrite -config "$W/headgate.toml" -path /page \
  | sed -e 's/.*<head>//' -e 's/<\/head>.*//' | tr -d '\n')
[ -n "$TAGS" ] || { echo "headgate rewrite wrote no tags"; exit 1; }

mkdir -p "$W/nginx/logs"
cat >"$W/nginx/nginx.conf" <<NGX
worker_processes 2;
pid $W/nginx/nginx.pid;
error_log $W/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  # Buffers that hold the whole page, as an operator in front of pages this
  # size sets them: nginx's default (proxy_buffers 8 4k) spills every
  # response over 32 KiB to a temp file on disk, which no one would measure.
  proxy_buffer_size 16k;
  proxy_buffers 64 16k;
  proxy_busy_buffers_size 64k;
  proxy_max_temp_file_size 0;
  upstream up { server 127.0.0.1:$P_UP; keepalive 64; }
  server {
    listen 127.0.0.1:$P_NGX;
    location / { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
  server {
    listen 127.0.0.1:$P_SUB;
    location / {
      proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Accept-Encoding "";
      sub_filter '</head>' '$TAGS</head>';
      sub_filter_once on;
    }
  }
}
NGX

"$W/peer" upstream -listen 127.0.0.1:$P_UP -page "$PAGE" & pids+=($!); PID_UP=$!
"$W/peer" plain -listen 127.0.0.1:$P_PLAIN -upstream http://127.0.0.1:$P_UP & pids+=($!); PID_PLAIN=$!
"$W/headgate" serve -config "$W/headgate.toml" 2>"$W/headgate.log" & pids+=($!); PID_HG=$!
nginx -p "$W/nginx" -c nginx.conf

for port in $P_UP $P_PLAIN $P_NGX $P_SUB $P_HG; do
  for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$port/page" 2>/dev/null && break; sleep 0.1; done
done
# The same tags must arrive from sub_filter and headgate.
sub=$(curl -fsS "http://127.0.0.1:$P_SUB/page"); hg=$(curl -fsS "http://127.0.0.1:$P_HG/page")
grep -q 'rel="canonical" href="https://bench.example/page"' <<<"$sub" || { echo "sub_filter did not inject"; exit 1; }
grep -q 'rel="canonical" href="https://bench.example/page"' <<<"$hg" || { echo "headgate did not rewrite"; cat "$W/headgate.log"; exit 1; }

declare -A RPS P50 P99
names=(direct plain nginx sub_filter headgate)
declare -A PORT=([direct]=$P_UP [plain]=$P_PLAIN [nginx]=$P_NGX [sub_filter]=$P_SUB [headgate]=$P_HG)
for n in "${names[@]}"; do RPS[$n]=0; P50[$n]=""; P99[$n]=""; done

ms() { # wrk latency to milliseconds
  awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us$/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v); print v} else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} else print v }'
}
for r in $(seq "$ROUNDS"); do
  for n in "${names[@]}"; do
    out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency "http://127.0.0.1:${PORT[$n]}/page")
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    p50=$(ms "$(echo "$out" | awk '$1=="50%" {print $2}')")
    p99=$(ms "$(echo "$out" | awk '$1=="99%" {print $2}')")
    RPS[$n]=$(awk -v a="${RPS[$n]}" -v b="$rps" 'BEGIN{print a+b}')
    P50[$n]="${P50[$n]} $p50"; P99[$n]="${P99[$n]} $p99"
    printf 'round %d %-10s %10.0f req/s  p50 %7.2f ms  p99 %7.2f ms\n' "$r" "$n" "$rps" "$p50" "$p99"
  done
done

hwm() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
ngx_hwm() { local s=0; for p in $(pgrep -f "nginx: .*$W/nginx" ) $(pgrep -P "$(cat "$W/nginx/nginx.pid")"); do s=$((s + $(hwm "$p"))); done; echo $s; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }

echo
echo "page: $PAGE ($(stat -c %s "$PAGE") bytes), $ROUNDS rounds x ${SECS}s, $CONNS connections, $(nproc) cores"
printf '%-10s %10s %8s %9s %9s %10s\n' target req/s ratio p50_ms p99_ms peak_KiB
base=$(awk -v a="${RPS[plain]}" -v r="$ROUNDS" 'BEGIN{print a/r}')
for n in "${names[@]}"; do
  avg=$(awk -v a="${RPS[$n]}" -v r="$ROUNDS" 'BEGIN{print a/r}')
  case $n in direct) mem=$(hwm $PID_UP);; plain) mem=$(hwm $PID_PLAIN);; headgate) mem=$(hwm $PID_HG);; *) mem="$(ngx_hwm) (all nginx)";; esac
  printf '%-10s %10.0f %8.2f %9s %9s %10s\n' "$n" "$avg" "$(awk -v a="$avg" -v b="$base" 'BEGIN{print a/b}')" \
    "$(echo "${P50[$n]}" | median)" "$(echo "${P99[$n]}" | median)" "$mem"
done
