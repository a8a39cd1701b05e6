#!/usr/bin/env bash
# Decisions a second on one core: robogate's decision listener (`[decide] listen`, one thread)
# asked by wrk (one thread, 50 connections) as nginx's auth_request asks it (X-Original-URI,
# X-Original-Method, X-Forwarded-For), with loadbench.sh's mix of browsers and robots (a browser
# with the head Chrome sends), access log on (written to a file, as loadbench's logged runs).
# Env: ROBOGATE_BIN (target/release/robogate), DUR (8), ROUNDS (3), ACCESS_LOG (1).
# Prints each round's decisions/s and answers by status, then the median.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${ROBOGATE_BIN:-$repo/target/release/robogate}
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)"; exit 2; }
work=$(mktemp -d -t decidebench.XXXXXX)
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
cat > robots.txt <<'R'
User-agent: GPTBot
User-agent: CCBot
Disallow: /

User-agent: *
Disallow: /private/
Disallow: /search
Allow: /private/public/
R
cat > robogate.toml <<'T'
[server]
listen = "127.0.0.1:0"
threads = 1
keepalive_requests = 100000
trusted_proxies = ["127.0.0.1"]
[admin]
listen = "127.0.0.1:0"
[decide]
listen = "127.0.0.1:0"
[origin]
address = "127.0.0.1:9"
[robots]
file = "robots.txt"
[trap]
paths = ["/private/trap/"]
[rapid_fire]
exempt = ["127.0.0.1", "192.0.2.0/24"]
T
case "${ACCESS_LOG:-1}" in 0) log=warn ;; 1) log=info ;; *) echo "ACCESS_LOG: 0 or 1" >&2; exit 2 ;; esac
RUST_LOG=$log "$bin" --config robogate.toml --ports-file ports > robogate.out 2>&1 &
pid=$!
for _ in $(seq 1 300); do grep -q decide.listen ports 2>/dev/null && break; sleep 0.1; done
decide=$(sed -n 's/^decide.listen = "\(.*\)"/\1/p' ports)
cat > mix.lua <<'L'
local B = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
local G = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
local O = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
local mix = {}
local function add(n, ua, path) for i = 1, n do mix[#mix + 1] = {ua, path} end end
add(40, B, "/"); add(20, B, "/a/page.html"); add(10, B, "/private/x"); add(10, B, "/search")
add(8, G, "/a/page.html"); add(2, G, "/private/public/y"); add(5, G, "/private/x"); add(5, O, "/")
i, s2, s4, sx = 0, 0, 0, 0
local threads = {}
setup = function(thread) table.insert(threads, thread) end
local BH = 'sec-ch-ua: "Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"\r\n' ..
  "sec-ch-ua-mobile: ?0\r\n" .. 'sec-ch-ua-platform: "Windows"\r\n' .. "Upgrade-Insecure-Requests: 1\r\n" ..
  "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" ..
  "Sec-Fetch-Site: none\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-User: ?1\r\nSec-Fetch-Dest: document\r\n" ..
  "Accept-Encoding: gzip, deflate, br, zstd\r\nAccept-Language: en-US,en;q=0.9\r\n"
request = function()
  i = i % #mix + 1
  local ua, path = mix[i][1], mix[i][2]
  local extra = ""
  if ua == B then extra = BH end
  return "GET /_robogate HTTP/1.1\r\nHost: bench.local\r\nX-Original-URI: " .. path ..
    "\r\nX-Original-Method: GET\r\nX-Forwarded-For: 192.0.2.7\r\nX-Forwarded-Proto: https\r\n" ..
    "User-Agent: " .. ua .. "\r\n" .. extra .. "\r\n"
end
response = function(status, headers, body)
  if status < 300 then s2 = s2 + 1 elseif status == 403 then s4 = s4 + 1 else sx = sx + 1 end
end
done = function(summary, latency, requests)
  local a, b, c = 0, 0, 0
  for _, t in ipairs(threads) do a = a + t:get("s2"); b = b + t:get("s4"); c = c + t:get("sx") end
  io.write(string.format("STATUS 2xx=%d 403=%d other=%d\n", a, b, c))
end
L
for r in $(seq 1 "${ROUNDS:-3}"); do
  out=$(wrk -t1 -c50 -d"${DUR:-8}s" -s mix.lua "http://$decide/")
  echo "round $r: $(awk '/Requests\/sec/ {print $2}' <<<"$out") decisions/s, $(awk '/^STATUS/ {print $2, $3, $4}' <<<"$out")"
done | tee results.txt
awk '{print $3}' results.txt | sort -n | awk '{v[NR]=$1} END {print "median:", v[int((NR+1)/2)], "decisions/s (one robogate thread, access log", (ENVIRON["ACCESS_LOG"]=="0" ? "off)" : "on)")}'
