#!/usr/bin/env bash
# The encoder floor of issue 18: a browser's Accept-Encoding
# ("gzip, deflate, br, zstd") against a gzip upstream. CPU-µs per request
# of headgate (its default server.compress, and gzip only) against nginx
# sub_filter injecting the same tags with gzip on, at gzip_comp_level 1
# (nginx's default) and at headgate's gzip level, and against the plain
# Go proxy passing the gzip through and re-encoding it (peer -recode).
# The pieces are run.sh's (the same headgate rules, the same tags for
# sub_filter, nginx buffers that fit the page); targets are interleaved
# round by round and the table gives medians. Not run in CI.
#
#   bash test/perf/encoding.sh [PAGE.html] [ROUNDS] [SECONDS]
#
# nginx's gunzip module only inflates for clients that do not accept gzip,
# so nginx asks its upstream for identity (proxy_set_header
# Accept-Encoding "") and compresses itself: it is spared the inflate that
# headgate does on the gzip upstream, which makes the comparison harder
# for headgate, not easier. Traffic goes to 127.0.0.1 only (ports
# 18721-18731), bounded by ROUNDS x SECONDS per target.
set -euo pipefail
cd "$(dirname "$0")/../.."
PAGE=${1:-../shared/corpus/bbc.html}
ROUNDS=${2:-5}
SECS=${3:-5}
CONNS=${CONNS:-32}
AE='Accept-Encoding: gzip, deflate, br, zstd'
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

P_UP=18721 P_PLAIN=18722 P_RECODE=18723 P_SUB1=18724 P_SUBL=18725 P_HG=18726 P_HGZ=18728
bench_config "$W/hg.toml" $P_HG 18727 $P_UP
bench_config "$W/hgz.toml" $P_HGZ 18729 $P_UP 'compress = ["gzip"]'
TAGS=$(bench_tags "$W/headgate" "$W/hg.toml")
mkdir -p "$W/nginx/logs"
{
  nginx_http "$W/nginx" $P_UP
  nginx_sub $P_SUB1 1 "$TAGS"
  nginx_sub $P_SUBL "$HG_GZIP_LEVEL" "$TAGS"
  echo "}"
} >"$W/nginx/nginx.conf"

"$W/peer" upstream -listen 127.0.0.1:$P_UP -page "$PAGE" & pids+=($!); PID_UP=$!
"$W/peer" plain -listen 127.0.0.1:$P_PLAIN -upstream http://127.0.0.1:$P_UP & pids+=($!); PID_PLAIN=$!
"$W/peer" plain -recode -recode-level "$HG_GZIP_LEVEL" -listen 127.0.0.1:$P_RECODE -upstream http://127.0.0.1:$P_UP 2>/dev/null & pids+=($!); PID_RECODE=$!
"$W/headgate" serve -config "$W/hg.toml" 2>"$W/hg.log" & pids+=($!); PID_HG=$!
"$W/headgate" serve -config "$W/hgz.toml" 2>"$W/hgz.log" & pids+=($!); PID_HGZ=$!
nginx -p "$W/nginx" -c nginx.conf
wait_up http://127.0.0.1:{$P_UP,$P_PLAIN,$P_RECODE,$P_SUB1,$P_SUBL,$P_HG,$P_HGZ}/page

names=(plain plain-recode sub_filter-gz1 "sub_filter-gz$HG_GZIP_LEVEL" headgate headgate-gzip)
declare -A PORT=([plain]=$P_PLAIN [plain-recode]=$P_RECODE [sub_filter-gz1]=$P_SUB1 ["sub_filter-gz$HG_GZIP_LEVEL"]=$P_SUBL [headgate]=$P_HG [headgate-gzip]=$P_HGZ)
# What each sends a browser: its coding and size, and the tags arrived.
declare -A CODING SIZE
for n in "${names[@]}"; do
  url="http://127.0.0.1:${PORT[$n]}/page"
  CODING[$n]=$(curl -fsS -o /dev/null -D - -H "$AE" "$url" | awk -F': ' 'tolower($1)=="content-encoding" {gsub(/\r/,"",$2); print $2}')
  SIZE[$n]=$(curl -fsS -H "$AE" "$url" | wc -c)
  case $n in plain*) ;; *)
    if [ "${CODING[$n]}" = br ] && ! command -v brotli >/dev/null; then echo "$n: br, not checked (no brotli tool)"; continue; fi
    body=$(curl -fsS -H "$AE" "$url" | case ${CODING[$n]:-identity} in gzip) gzip -dc;; zstd) zstd -dcq;; br) brotli -dc;; *) cat;; esac)
    grep -q 'rel="canonical" href="https://bench.example/page"' <<<"$body" || { echo "$n: no canonical in what it sent (${CODING[$n]})"; exit 1; } ;;
  esac
done

declare -A RPS CPU
for r in $(seq "$ROUNDS"); do
  for n in "${names[@]}"; do
    case $n in
      plain) p=$PID_PLAIN;; plain-recode) p=$PID_RECODE;; headgate) p=$PID_HG;; headgate-gzip) p=$PID_HGZ;;
      sub_filter*) p=$(nginx_pids "$W/nginx");;
    esac
    read -r rps reqs cpu errs < <(measure "http://127.0.0.1:${PORT[$n]}/page" "$SECS" "$CONNS" "$AE" $p)
    RPS[$n]="${RPS[$n]:-} $rps"; CPU[$n]="${CPU[$n]:-} $cpu"
    printf 'round %d %-16s %7s req/s %8s requests %7s CPU-µs/req errors: %s\n' "$r" "$n" "$rps" "$reqs" "$cpu" "$errs"
  done
done

echo
echo "page: $PAGE ($(stat -c %s "$PAGE") bytes), upstream gzip, client '$AE', $ROUNDS rounds x ${SECS}s, $CONNS connections, $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
base=$(echo "${CPU[plain]}" | median)
ref=$(echo "${CPU[sub_filter-gz$HG_GZIP_LEVEL]}" | median)
printf '%-16s %-9s %9s %9s %12s %8s %13s\n' target coding bytes req/s CPU-µs/req ×plain "×sub_filter-gz$HG_GZIP_LEVEL"
for n in "${names[@]}"; do
  c=$(echo "${CPU[$n]}" | median)
  printf '%-16s %-9s %9s %9s %12s %8.2f %13.2f\n' "$n" "${CODING[$n]:-identity}" "${SIZE[$n]}" "$(echo "${RPS[$n]}" | median)" "$c" \
    "$(awk -v a="$c" -v b="$base" 'BEGIN{print a/b}')" "$(awk -v a="$c" -v b="$ref" 'BEGIN{print a/b}')"
done
