#!/usr/bin/env bash
# Profile-guided release build of robogate (PGO). Three steps:
#   1. build an instrumented robogate (target/pgo/gen);
#   2. train it with its access log on, in front of an nginx origin: wrk drives
#      benches/pgo-train.lua, a general traffic mix (browsers, robots, tools and unknown clients
#      over allowed, disallowed, trap and missing paths, robots.txt), over plain HTTP/1.1 (3/5
#      of the time), then over TLS (1/5), then h2load over HTTP/2 (1/5) and `openssl s_time`
#      full handshakes; curl scrapes /metrics; SIGTERM stops it so the profile is written.
#      Code no phase runs is laid out as cold, so every listener kind gets its share;
#   3. merge the profile and build robogate with it: target/pgo/robogate.
# Both builds name the target (`--target`), so RUSTFLAGS reach robogate and its dependencies
# only: build scripts and proc macros neither write profiles nor get built with one.
# The result behaves exactly as `cargo build --release` does (same code, same tests); its code
# is laid out and inlined for the paths the training took, which cuts the instructions and the
# instruction-cache misses of a request (BENCHMARKS.md, stop 21).
# Needs: rustup's llvm-tools component (an llvm-profdata of rustc's LLVM version; this script
#        adds it), nginx, wrk, h2load, openssl and python3 (.ci/test-deps installs them); about
#        3 GB of memory and 5 GB of disk under target/pgo. One run at a time (a lock).
# The training's wrk output counts many non-2xx answers: the mix asks for disallowed paths on
# purpose. Its files (target/pgo/train) are removed when it succeeds and kept when it fails.
# Env: DUR (20, at least 5) training seconds; CONN (32) training connections.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$repo/target/pgo
DUR=${DUR:-20}; CONN=${CONN:-32}
[[ $DUR =~ ^[0-9]+$ ]] && ((DUR >= 5)) || { echo "DUR: whole seconds, at least 5" >&2; exit 2; }
missing=()
# Debian puts nginx in /usr/sbin, off a non-root PATH (as .ci/test-deps and tlsbench.sh allow)
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || missing+=(nginx)
for c in wrk h2load openssl python3 curl; do command -v $c >/dev/null || missing+=("$c"); done
if ((${#missing[@]})); then
  echo "needs ${missing[*]}: bash $repo/.ci/test-deps installs them" >&2; exit 2
fi
mkdir -p "$out"
exec 9>"$out/lock"
flock -n 9 || { echo "another benches/pgo.sh is running on $out" >&2; exit 2; }
sysroot=$(rustc --print sysroot)
host=$(rustc -vV | awk '/^host:/ {print $2}')
profdata=$sysroot/lib/rustlib/$host/bin/llvm-profdata
[ -x "$profdata" ] || rustup component add llvm-tools
[ -x "$profdata" ] || { echo "no llvm-profdata at $profdata (rustup component add llvm-tools)" >&2; exit 2; }

echo "== 1/3 instrumented build" >&2
rm -rf "$out/raw" "$out/train"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$out/raw" \
  cargo build --release --locked --bin robogate --target "$host" --target-dir "$out/gen" \
  --manifest-path "$repo/Cargo.toml"

echo "== 2/3 training for ${DUR}s" >&2
w=$out/train
mkdir -p "$w/www/a" "$w/www/private/press" "$w/www/admin"
head -c 6000 /dev/urandom | base64 > "$w/www/index.html"
for f in a/page.html private/x private/press/y admin/z search; do cp "$w/www/index.html" "$w/www/$f"; done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -keyout "$w/key.pem" -out "$w/cert.pem" -subj /CN=train.local \
  -addext subjectAltName=DNS:train.local 2>/dev/null
read -r origin proxy tls admin < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(4)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
cat > "$w/origin.conf" <<N
daemon off; worker_processes 1; pid $w/origin.pid; error_log $w/origin.err;
events { worker_connections 1024; }
http { access_log off; server { listen 127.0.0.1:$origin; root $w/www; default_type text/html; } }
N
# the shipped robots.txt, its * group also disallowing the trap path
sed 's|^User-agent: \*$|User-agent: *\nDisallow: /private/trap/|' "$repo/conf/robots.txt" > "$w/robots.txt"
cat > "$w/robogate.toml" <<T
[server]
listen = "127.0.0.1:$proxy"
tls_listen = "127.0.0.1:$tls"
threads = 1
grace_period = "1s"
[[server.tls]]
cert = "cert.pem"
key = "key.pem"
[admin]
listen = "127.0.0.1:$admin"
[origin]
address = "127.0.0.1:$origin"
[robots]
file = "robots.txt"
[trap]
paths = ["/private/trap/"]
ban = "0s"
[rapid_fire]
rate = 1000000
burst = 1000000
[access_log]
file = "access.log"
T
pids=()
# TERM: nginx's master then stops its worker too
cleanup() { for p in "${pids[@]:-}"; do kill -TERM "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
"$nginx" -p "$w" -c "$w/origin.conf" & pids+=($!)
(cd "$w" && RUST_LOG=info exec "$out/gen/$host/release/robogate" --config robogate.toml) >"$w/robogate.out" 2>&1 & rg=$!; pids+=($rg)
up() {
  for _ in $(seq 1 300); do curl -kfso /dev/null "$1" && return 0; sleep 0.1; done
  echo "$1 never answered: see $w/robogate.out and $w/origin.err" >&2; exit 3
}
up "http://127.0.0.1:$origin/"; up "http://127.0.0.1:$admin/readyz"; up "https://127.0.0.1:$tls/robots.txt"
# a load command, with /metrics scraped each second while it runs; fails if the load fails
load() {
  "$@" >&2 & local p=$!; pids+=("$p")
  while kill -0 "$p" 2>/dev/null; do
    curl -fsS --max-time 5 -o /dev/null "http://127.0.0.1:$admin/metrics" \
      || { echo "/metrics did not answer: see $w/robogate.out" >&2; exit 3; }
    sleep 1
  done
  wait "$p"
}
part=$(( DUR / 5 )) # DUR is at least 5
load wrk -t1 -c"$CONN" -d"$(( DUR - 2 * part ))s" -s "$repo/benches/pgo-train.lua" "http://127.0.0.1:$proxy/"
load wrk -t1 -c"$CONN" -d"${part}s" -s "$repo/benches/pgo-train.lua" "https://127.0.0.1:$tls/"
ua="Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
load h2load -D "$part" -c 8 -m 10 -t 1 -H "user-agent: $ua" \
  "https://127.0.0.1:$tls/" "https://127.0.0.1:$tls/a/page.html" "https://127.0.0.1:$tls/private/x"
openssl s_time -connect "127.0.0.1:$tls" -new -time 2 >/dev/null 2>&1 || true
# robogate writes its profile as it exits; the origin is not needed any more
kill -TERM "$rg"; wait "$rg" || true
cleanup; wait; pids=()
ls "$out"/raw/*.profraw >/dev/null 2>&1 || { echo "training wrote no profile: see $w/robogate.out" >&2; exit 1; }
rm -rf "$w" # its access log alone is some 200 MB

echo "== 3/3 optimised build" >&2
rm -f "$out"/robogate-*.profdata # an earlier run's
"$profdata" merge -o "$out/robogate.profdata" "$out"/raw/*.profraw
# The profile's hash in its name: cargo sees RUSTFLAGS, not the file, and must rebuild when it
# changes.
sum=$(sha256sum "$out/robogate.profdata" | cut -c1-12)
mv "$out/robogate.profdata" "$out/robogate-$sum.profdata"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$out/robogate-$sum.profdata" \
  cargo build --release --locked --bin robogate --target "$host" --target-dir "$out" \
  --manifest-path "$repo/Cargo.toml"
# copied, then renamed: a copy over a running binary would fail ("Text file busy")
cp "$out/$host/release/robogate" "$out/robogate.new" && mv -f "$out/robogate.new" "$out/robogate"
echo "$out/robogate"
