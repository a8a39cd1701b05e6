#!/usr/bin/env bash
# Instructions per request, user space, of robogate (or the nginx peer) under the loadbench mix,
# counted by valgrind's callgrind: deterministic to ~0.1% from run to run, where wall-clock
# throughput on this 2-core machine moves by +-10% within minutes. The right tool to tell
# whether a change to the request path made it cheaper; loadbench.sh says what that is worth.
#
# Usage: benches/callgrind.sh [robogate|nginx] [SECONDS]
# Env:   ROBOGATE_BIN (target/release/robogate), ACCESS_LOG (1: logs on, as loadbench's
#        ACCESS_LOG=1 / PEER_LOG=1), OUT (callgrind file prefix, /tmp/robogate-callgrind),
#        WORK (the loadbench working folder, made here with one short loadbench run if absent).
# Needs: valgrind, nginx, wrk (apt-get install valgrind nginx-light wrk), curl.
#
# Prints requests=N instructions=I per_request=I/N memcpy_per_request=M rest_per_request=R.
# callgrind counts a `rep movsb` copy one instruction per byte, so `memcpy` stands apart: most
# of it is pingora boxing its ~14 KiB request future once per request. The load is light (wrk,
# 10 connections, under valgrind ~1,000 requests a second). Compare runs of the same length.
# Per function: callgrind_annotate --inclusive=yes "$OUT.1" (OUT.1 is the window's dump).
set -euo pipefail
WHO=${1:-robogate}; DUR=${2:-6}
HERE=$(cd "$(dirname "$0")/.." && pwd)
BIN=${ROBOGATE_BIN:-$HERE/target/release/robogate}
W=${WORK:-/tmp/robogate-loadbench}; OUT=${OUT:-/tmp/robogate-callgrind}
LOADBENCH=$HERE/../shared/bench/loadbench.sh
ORIGIN_PORT=18000; PORT=18080; PEER_PORT=18081
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)"; exit 2; }
if [ ! -f "$W/mix.lua" ]; then # let loadbench.sh write its configs and the mix once
  WORK=$W DUR=1 ROUNDS=1 bash "$LOADBENCH" $PORT "ROBOGATE_BIN=$BIN bash $HERE/benches/loadbench-subject.sh $PORT" >/dev/null 2>&1 || true
fi
[ -f "$W/mix.lua" ] || { echo "no loadbench files in $W"; exit 3; }
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do kill -- "-$p" 2>/dev/null || true; done; }
trap cleanup EXIT
wait_port() { for _ in $(seq 600); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened"; exit 3; }
setsid nginx -p "$W" -c "$W/origin.conf" >/dev/null 2>&1 & PIDS+=($!)
rm -f "$OUT" "$OUT".*
CG=(valgrind --tool=callgrind "--callgrind-out-file=$OUT" --dump-instr=no)
if [ "$WHO" = nginx ]; then
  log="access_log off;"; [ "${ACCESS_LOG:-1}" = 1 ] && log="access_log $W/logs/peer.access combined buffer=64k;"
  sed "s|access_log off;|$log|; s|daemon off;|daemon off; master_process off;|" "$W/peer.conf" > "$W/peer-callgrind.conf"
  setsid "${CG[@]}" nginx -p "$W" -c "$W/peer-callgrind.conf" >/dev/null 2>&1 & PIDS+=($!)
  port=$PEER_PORT
else
  mkdir -p "$W/callgrind" && cp "$W/robots.txt" "$W/callgrind/"
  printf '#!/bin/sh\nexec %s "%s" "$@"\n' "${CG[*]}" "$BIN" > "$W/callgrind/under-valgrind.sh"
  chmod +x "$W/callgrind/under-valgrind.sh"
  (cd "$W/callgrind" && ACCESS_LOG=${ACCESS_LOG:-1} ROBOGATE_BIN=$W/callgrind/under-valgrind.sh \
    exec setsid bash "$HERE/benches/loadbench-subject.sh" $PORT) >"$W/callgrind/out.log" 2>&1 & PIDS+=($!)
  port=$PORT
fi
wait_port $port
vg=$(pgrep -f "callgrind.*(peer-callgrind.conf|--config robogate.toml)" | head -1)
wrk -t1 -c10 -d2s -s "$W/mix.lua" "http://127.0.0.1:$port/" >/dev/null # warm up
callgrind_control -z "$vg" >/dev/null 2>&1
out=$(wrk -t1 -c10 -d"${DUR}s" -s "$W/mix.lua" "http://127.0.0.1:$port/")
callgrind_control -d "$vg" >/dev/null 2>&1
requests=$(awk '/requests in/ {print $1}' <<<"$out")
dump=$(ls "$OUT".* | head -1)
total=$(awk '/^summary:/ {print $2}' "$dump")
memcpy=$(callgrind_annotate --threshold=100 "$dump" 2>/dev/null \
  | awk '/memcpy|memmove/ {gsub(",", "", $1); s += $1} END {printf "%d", s}')
echo "requests=$requests instructions=$total per_request=$((total / requests))" \
  "memcpy_per_request=$((memcpy / requests)) rest_per_request=$(((total - memcpy) / requests))"
