#!/usr/bin/env bash
# TLS side by side: robogate's TLS listener vs nginx terminating TLS (HTTP/2 on, the same
# certificate, proxying to the same nginx origin with loadbench.sh's User-Agent rules).
#   1. full TLS 1.3 handshakes per second: `openssl s_time -new` (one client, no resumption)
#   2. HTTP/2 requests per second: h2load, browser User-Agent, a proxied 2.7 KiB page
# Usage: benches/tlsbench.sh   (after `cargo build --release`)
# Env: DUR (10) CONN (50) STREAMS (10) N (200000) ROUNDS (3) WORK (a fresh temp dir)
#      ROBOGATE (target/release/robogate) THREADS (1: workers of each server)
# Needs nginx, openssl and h2load (apt-get install nginx-light openssl nghttp2-client).
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${DUR:-10}; CONN=${CONN:-50}; STREAMS=${STREAMS:-10}; N=${N:-200000}; ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-1}; ROBOGATE=${ROBOGATE:-$PWD/target/release/robogate}
WORK=${WORK:-$(mktemp -d -t tlsbench.XXXXXX)}
ORIGIN=18300; PEER=18301; SUBJECT=18302; SUBJECT_TLS=18303; ADMIN=18304
for c in nginx openssl h2load; do command -v $c >/dev/null || [ -x /usr/sbin/$c ] || { echo "needs $c"; exit 2; }; done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
rm -rf "$WORK"; mkdir -p "$WORK/www/a" "$WORK/logs"
head -c 2048 /dev/urandom | base64 > "$WORK/www/a/page.html"
printf 'User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n' > "$WORK/robots.txt"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
  -keyout "$WORK/key.pem" -out "$WORK/cert.pem" -subj /CN=bench.local \
  -addext subjectAltName=DNS:bench.local 2>/dev/null
cat > "$WORK/origin.conf" <<N
daemon off; worker_processes 1; pid $WORK/origin.pid; error_log $WORK/logs/origin.err;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000;
  server { listen 127.0.0.1:$ORIGIN; root $WORK/www; default_type text/html; } }
N
cat > "$WORK/peer.conf" <<N
daemon off; worker_processes $THREADS; pid $WORK/peer.pid; error_log $WORK/logs/peer.err;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000;
  upstream origin { server 127.0.0.1:$ORIGIN; keepalive 64; }
  map \$http_user_agent \$robot_group { default ""; "~*\\b(gptbot|ccbot)\\b" "ai"; "~*(bot|crawl|spider)" "star"; }
  map "\$robot_group:\$uri" \$deny { default 0; "~^ai:" 1; "~^star:/private/" 1; }
  server { listen 127.0.0.1:$PEER ssl http2; ssl_certificate $WORK/cert.pem;
    ssl_certificate_key $WORK/key.pem; ssl_protocols TLSv1.2 TLSv1.3; ssl_session_tickets off;
    ssl_session_cache off;
    location = /robots.txt { root $WORK; }
    location / { if (\$deny) { return 403; } proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection ""; } } }
N
cat > "$WORK/robogate.toml" <<T
[server]
listen = "127.0.0.1:$SUBJECT"
tls_listen = "127.0.0.1:$SUBJECT_TLS"
threads = $THREADS
keepalive_requests = 100000
[[server.tls]]
cert = "cert.pem"
key = "key.pem"
[origin]
address = "127.0.0.1:$ORIGIN"
[admin]
listen = "127.0.0.1:$ADMIN"
[robots]
file = "robots.txt"
[rapid_fire]
exempt = ["127.0.0.0/8"]
T
cleanup() { for p in "${PIDS[@]:-}"; do kill -KILL -- "-$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT; PIDS=()
setsid "$NGINX" -p "$WORK" -c "$WORK/origin.conf" & PIDS+=($!)
setsid "$NGINX" -p "$WORK" -c "$WORK/peer.conf" & PIDS+=($!)
(cd "$WORK" && RUST_LOG=warn exec setsid "$ROBOGATE" --config robogate.toml) >"$WORK/logs/robogate.out" 2>&1 & PIDS+=($!)
wait_port() { for _ in $(seq 1 300); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened"; exit 3; }
wait_port $ORIGIN; wait_port $PEER; wait_port $SUBJECT_TLS
UA="Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
handshakes() { # port -> connections per second (wall clock)
  openssl s_time -connect "127.0.0.1:$1" -new -time "$DUR" 2>/dev/null \
    | awk '/connections in [0-9]+ real seconds/ {print $1 / $4; exit}'
}
h2() { # port -> "req/s ok-2xx"
  local out; out=$(h2load -n "$N" -c "$CONN" -m "$STREAMS" -t 1 -H "user-agent: $UA" \
    "https://127.0.0.1:$1/a/page.html" 2>&1)
  local rps ok; rps=$(awk '/^finished in/ {gsub(",", "", $4); print $4}' <<<"$out")
  ok=$(awk '/^status codes:/ {gsub(",", "", $3); print $3}' <<<"$out")
  echo "$rps $ok"
}
echo "round  handshakes/s (nginx robogate)   h2 req/s (nginx robogate)   2xx (nginx robogate)"
for r in $(seq 1 "$ROUNDS"); do
  hn=$(handshakes $PEER); hr=$(handshakes $SUBJECT_TLS)
  read -r qn okn <<<"$(h2 $PEER)"; read -r qr okr <<<"$(h2 $SUBJECT_TLS)"
  printf "%5s  %12s %9s   %12s %9s   %9s %9s\n" "$r" "$hn" "$hr" "$qn" "$qr" "$okn" "$okr"
done
