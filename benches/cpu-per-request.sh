#!/usr/bin/env bash
# CPU time per request of one proxy alone (robogate or the nginx peer) under the loadbench mix:
# user and system nanoseconds a request from /proc/PID/task/*/stat around one wrk run, for the
# whole process and for each of its threads. Beside benches/callgrind.sh (instructions, exact)
# this says what the instructions cost on this machine, kernel included; it moves by +-20% from
# run to run on a shared 2-core machine, so alternate the binaries compared, several rounds.
#
# Usage: benches/cpu-per-request.sh [robogate|nginx] [SECONDS]
# Env:   ROBOGATE_BIN (target/release/robogate), ACCESS_LOG (1: logs on, as loadbench's
#        ACCESS_LOG=1 / PEER_LOG=1), WORK (the loadbench working folder, made here with one short
#        loadbench run if absent), CONN (50).
# Needs: nginx, wrk (apt-get install nginx-light wrk).
set -euo pipefail
WHO=${1:-robogate}; DUR=${2:-6}; CONN=${CONN:-50}
HERE=$(cd "$(dirname "$0")/.." && pwd)
BIN=${ROBOGATE_BIN:-$HERE/target/release/robogate}
W=${WORK:-/tmp/robogate-loadbench}
LOADBENCH=$HERE/../shared/bench/loadbench.sh
ORIGIN_PORT=18000; PORT=18080; PEER_PORT=18081
if [ ! -f "$W/mix.lua" ]; then # let loadbench.sh write its configs and the mix once
  WORK=$W DUR=1 ROUNDS=1 bash "$LOADBENCH" $PORT "ROBOGATE_BIN=$BIN bash $HERE/benches/loadbench-subject.sh $PORT" >/dev/null 2>&1 || true
fi
[ -f "$W/mix.lua" ] || { echo "no loadbench files in $W"; exit 3; }
PIDS=()
cleanup() { for p in "${PIDS[@]:-}"; do kill -KILL -- "-$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
wait_port() { for _ in $(seq 600); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened"; exit 3; }
setsid nginx -p "$W" -c "$W/origin.conf" >/dev/null 2>&1 & PIDS+=($!)
if [ "$WHO" = nginx ]; then
  log="access_log off;"; [ "${ACCESS_LOG:-1}" = 1 ] && log="access_log $W/logs/peer.access combined buffer=64k;"
  sed "s|access_log off;|$log|; s|daemon off;|daemon off; master_process off;|" "$W/peer.conf" > "$W/peer-alone.conf"
  setsid nginx -p "$W" -c "$W/peer-alone.conf" >/dev/null 2>&1 & PIDS+=($!)
  port=$PEER_PORT; pid=$!
else
  mkdir -p "$W/alone" && cp "$W/robots.txt" "$W/alone/"
  (cd "$W/alone" && ACCESS_LOG=${ACCESS_LOG:-1} ROBOGATE_BIN=$BIN exec setsid bash "$HERE/benches/loadbench-subject.sh" $PORT) \
    >"$W/logs/alone.out" 2>&1 & PIDS+=($!) # not in the watched conf folder
  port=$PORT
fi
wait_port $ORIGIN_PORT; wait_port $port
[ "$WHO" = nginx ] || pid=$(pgrep -f -- "--config robogate.toml" | head -1)
wrk -t1 -c"$CONN" -d2s -s "$W/mix.lua" "http://127.0.0.1:$port/" >/dev/null # warm up
# Per thread: its name, then utime and stime (fields 14 and 15; the name may hold spaces).
snap() { for t in /proc/"$pid"/task/*; do printf '%s %s\n' "$(tr ' ' _ <"$t/comm")" "$(sed 's/.*) //' "$t/stat" | awk '{print $12, $13}')"; done; }
before=$(snap)
out=$(wrk -t1 -c"$CONN" -d"${DUR}s" -s "$W/mix.lua" "http://127.0.0.1:$port/")
after=$(snap)
requests=$(awk '/requests in/ {print $1}' <<<"$out"); rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
join <(sort <<<"$before") <(sort <<<"$after") | awk -v req="$requests" -v hz="$(getconf CLK_TCK)" -v who="$WHO" -v rps="$rps" '
  { u = $4 - $2; s = $5 - $3; U += u; S += s; if (u + s > 0) t[$1] = sprintf("%.0f %.0f", u * 1e9 / hz / req, s * 1e9 / hz / req) }
  END { printf "%s requests=%d rps=%s user_ns=%.0f sys_ns=%.0f\n", who, req, rps, U * 1e9 / hz / req, S * 1e9 / hz / req
        for (n in t) { split(t[n], v, " "); printf "  thread %s: user_ns=%s sys_ns=%s\n", n, v[1], v[2] } }'
