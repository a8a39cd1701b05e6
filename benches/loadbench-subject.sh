#!/usr/bin/env bash
# robogate as the subject of ../shared/bench/loadbench.sh: listens on 127.0.0.1:$1, proxies to
# 127.0.0.1:$ORIGIN_PORT and enforces the robots.txt the script wrote to its working folder.
# Env: ROBOGATE_BIN (default: target/release/robogate of this repo), THREADS (1), MODE (enforce),
#      KEEPALIVE_REQUESTS (100000, what loadbench.sh gives nginx; robogate's default is 1000).
set -euo pipefail
bin=${ROBOGATE_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/robogate}
cat > robogate.toml <<T
[server]
listen = "127.0.0.1:$1"
threads = ${THREADS:-1}
keepalive_requests = ${KEEPALIVE_REQUESTS:-100000}
[admin]
listen = "127.0.0.1:$(($1 + 1000))"
[origin]
address = "127.0.0.1:${ORIGIN_PORT:-18000}"
[robots]
file = "robots.txt"
[enforce]
mode = "${MODE:-enforce}"
T
RUST_LOG=${RUST_LOG:-warn} exec "$bin" --config robogate.toml
