#!/usr/bin/env bash
# robogate as the subject of ../shared/bench/loadbench.sh: listens on 127.0.0.1:$1, proxies to
# 127.0.0.1:$ORIGIN_PORT and enforces the robots.txt the script wrote to its working folder.
# Env: ROBOGATE_BIN (default: target/release/robogate of this repo), THREADS (1), MODE (enforce),
#      KEEPALIVE_REQUESTS (100000, what loadbench.sh gives nginx; robogate's default is 1000),
#      RAPID_FIRE (exempt): wrk is one loopback client at ~50,000 requests a second, which
#      rapid-fire pacing (on, 20/s) would answer with 429s, measuring the refusal instead of
#      the proxy. `exempt` lists 127.0.0.1 in rapid_fire.exempt (the check still runs: the
#      exemption lookup per request); `bucket` keeps wrk tracked under a rate it never reaches,
#      so every request pays the full bucket check; `off` disables rapid-fire.
#      STATE (local): `redis` keeps live state in the Redis at REDIS_URL
#      (redis://127.0.0.1:6379/0), as several instances would share it.
#      ACCESS_LOG (0): 1 runs with RUST_LOG=info, so the access log is on, written to stdout
#      (which loadbench.sh sends to a file) with the default [access_log] batching (64 KiB,
#      1s), as nginx's `access_log ... buffer=64k` beside it; 0 runs with RUST_LOG=warn (off).
#      An explicit RUST_LOG wins over both.
#      FAST_PATH (true): false sets server.fast_path = false (every request through pingora).
#      FINGERPRINT (true): false sets [fingerprint] enabled = false (browser User-Agents are
#      believed; the head shape is not read).
#      A trap path is set (/private/trap/: loadbench.sh's robots.txt disallows it to every
#      group, as a trap path must be), so every request pays the trap match.
set -euo pipefail
bin=${ROBOGATE_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/robogate}
cat > robogate.toml <<T
[server]
listen = "127.0.0.1:$1"
threads = ${THREADS:-1}
keepalive_requests = ${KEEPALIVE_REQUESTS:-100000}
fast_path = ${FAST_PATH:-true}
[admin]
listen = "127.0.0.1:$(($1 + 1000))"
[origin]
address = "127.0.0.1:${ORIGIN_PORT:-18000}"
[robots]
file = "robots.txt"
[enforce]
mode = "${MODE:-enforce}"
[trap]
paths = ["/private/trap/"]
T
case "${RAPID_FIRE:-exempt}" in
  exempt) printf '[rapid_fire]\nexempt = ["127.0.0.1"]\n' >> robogate.toml ;;
  bucket) printf '[rapid_fire]\nrate = 1000000\nburst = 1000000\n' >> robogate.toml ;;
  off) printf '[rapid_fire]\nenabled = false\n' >> robogate.toml ;;
  *) echo "RAPID_FIRE: exempt, bucket or off" >&2; exit 2 ;;
esac
case "${FINGERPRINT:-true}" in
  true) ;;
  false) printf '[fingerprint]\nenabled = false\n' >> robogate.toml ;;
  *) echo "FINGERPRINT: true or false" >&2; exit 2 ;;
esac
case "${STATE:-local}" in
  local) ;;
  redis) printf '[state]\nbackend = "redis"\nurl = "%s"\n' "${REDIS_URL:-redis://127.0.0.1:6379/0}" >> robogate.toml ;;
  *) echo "STATE: local or redis" >&2; exit 2 ;;
esac
case "${ACCESS_LOG:-0}" in
  0) log=warn ;;
  1) log=info ;;
  *) echo "ACCESS_LOG: 0 or 1" >&2; exit 2 ;;
esac
RUST_LOG=${RUST_LOG:-$log} exec "$bin" --config robogate.toml
