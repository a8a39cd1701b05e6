#!/usr/bin/env bash
# Decision mode as the subject of ../shared/bench/loadbench.sh: nginx configured by
# examples/decide/nginx.conf (one worker, as loadbench's nginx) listens on 127.0.0.1:$1, asks
# robogate's decision listener (`[decide] listen`, one thread) about every request
# (`auth_request`) and proxies what it allows to 127.0.0.1:$ORIGIN_PORT. Against loadbench's
# nginx alone (its User-Agent map), the ratio is what keeping nginx and adding robogate beside it
# costs. Env: ROBOGATE_BIN (default target/release/robogate), ACCESS_LOG (0; 1: robogate's
# access log on, to a file), NGINX (nginx).
#   bash ../shared/bench/loadbench.sh 18090 "bash $PWD/benches/loadbench-decide.sh 18090"
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${ROBOGATE_BIN:-$repo/target/release/robogate}
origin=127.0.0.1:${ORIGIN_PORT:-18000}
decide=127.0.0.1:$(($1 + 2000))
mkdir -p logs
cat > robogate.toml <<T
[server]
listen = "127.0.0.1:$(($1 + 3000))"
threads = 1
keepalive_requests = 100000
trusted_proxies = ["127.0.0.1"]
[admin]
listen = "127.0.0.1:$(($1 + 1000))"
[decide]
listen = "$decide"
[origin]
address = "$origin"
[robots]
file = "robots.txt"
[trap]
paths = ["/private/trap/"]
[rapid_fire]
exempt = ["127.0.0.1"]
T
case "${ACCESS_LOG:-0}" in 0) log=warn ;; 1) log=info ;; *) echo "ACCESS_LOG: 0 or 1" >&2; exit 2 ;; esac
sed -e "s/127\.0\.0\.1:9191/$decide/g; s/127\.0\.0\.1:8000/$origin/g; s/listen 80;/listen 127.0.0.1:$1;/" \
  "$repo/examples/decide/nginx.conf" > decide-site.conf
cat > front.conf <<N
daemon off; worker_processes 1; pid $PWD/front.pid; error_log $PWD/logs/front.err;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 100000;
  include $PWD/decide-site.conf;
}
N
RUST_LOG=${RUST_LOG:-$log} "$bin" --config robogate.toml > logs/robogate.out 2>&1 &
for _ in $(seq 1 300); do (exec 3<>"/dev/tcp/${decide%:*}/${decide#*:}") 2>/dev/null && break; sleep 0.1; done
exec "${NGINX:-nginx}" -p "$PWD" -c "$PWD/front.conf"
