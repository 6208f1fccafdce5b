# Sourced by test/perf/run.sh, encoding.sh and spike/spike.sh: the pieces
# every side-by-side run shares, so that each compares the same headgate
# rules, the same sub_filter tags and the same nginx buffers.

# The gzip level of a page headgate re-encodes (proxy/coding.go GzipLevel):
# nginx sub_filter's "same level".
HG_GZIP_LEVEL=${HG_GZIP_LEVEL:-$(awk '$1=="GzipLevel" {print $3}' proxy/coding.go)}

# bench_config FILE PORT ADMIN UPSTREAM_PORT [SERVER_LINES]: headgate's
# config for the bench page: a description, a canonical, Open Graph and
# Twitter tags on every page.
bench_config() {
  cat >"$1" <<TOML
[server]
listen = "127.0.0.1:$2"
admin_listen = "127.0.0.1:$3"
upstream = "http://127.0.0.1:$4"
access_log = false
${5:-}
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
}

# bench_tags HEADGATE CONFIG: the tags headgate writes on an empty head, on
# one line, for nginx sub_filter to inject the same.
bench_tags() {
  local tags
  tags=$(printf '<html><head></head><body></body></html>' | "$1" rewrite -config "$2" -path /page \
    | sed -e 's/.*<head>//' -e 's/<\/head>.*//' | tr -d '\n')
  [ -n "$tags" ] || { echo "headgate rewrite wrote no tags" >&2; return 1; }
  echo "$tags"
}

# nginx_http PREFIX UPSTREAM_PORT: the start of an nginx.conf whose http
# block ends open, for the caller's servers and a closing "}". Buffers hold
# the whole page, as an operator in front of pages this size sets them:
# nginx's default (proxy_buffers 8 4k) spills every response over 32 KiB to
# a temp file on disk, which no one would measure.
nginx_http() {
  mkdir -p "$1/logs"
  cat <<NGX
worker_processes 2;
worker_rlimit_nofile 4096;
pid $1/nginx.pid;
error_log $1/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  proxy_buffer_size 16k;
  proxy_buffers 64 16k;
  proxy_busy_buffers_size 64k;
  proxy_max_temp_file_size 0;
  upstream up { server 127.0.0.1:$2; keepalive 64; }
NGX
}

# nginx_pass PORT: a server that passes every request to the upstream.
nginx_pass() {
  cat <<NGX
  server {
    listen 127.0.0.1:$1;
    location / { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
NGX
}

# nginx_sub PORT LEVEL TAGS: a server that injects TAGS before </head> with
# sub_filter and gzips at LEVEL (asking the upstream for identity).
nginx_sub() {
  cat <<NGX
  server {
    listen 127.0.0.1:$1;
    location / {
      proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Accept-Encoding "";
      sub_filter '</head>' '$3</head>';
      sub_filter_once on;
      gzip on; gzip_comp_level $2; gzip_vary on;
    }
  }
NGX
}
