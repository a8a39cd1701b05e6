-- wrk script: the training traffic of benches/pgo.sh. A general mix, not loadbench's: browsers
-- of several engines, search, AI and SEO robots, tools and unknown clients, over allowed,
-- disallowed, trap and missing paths, robots.txt and query strings. Every
-- client and path pair comes up in turn (the counts are coprime), so the profile weighs the
-- decision's branches as a mixed site's traffic does, not as one benchmark's. No HEAD requests:
-- wrk waits for the body a HEAD response announces and never gets, stalling the connection.
local agents = {
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
  "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Mobile Safari/537.36",
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/129.0.0.0 Safari/537.36 Edg/129.0.0.0",
  "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
  "CCBot/2.0 (https://commoncrawl.org/faq/)",
  "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
  "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)",
  "curl/8.5.0",
  "python-requests/2.31.0",
  "Wget/1.21.4",
  "Go-http-client/1.1",
  "Mozilla/5.0 (compatible; SomeNewCrawler/0.3; +https://crawler.example/about)",
  "okhttp/4.12.0",
  "",
}
local paths = {
  "/", "/index.html", "/a/page.html", "/a/page.html?utm_source=feed&id=42", "/private/x",
  "/private/press/y", "/admin/z", "/search?q=robots+txt", "/robots.txt", "/missing/page",
  "/private/trap/z", "/a/%70age.html",
}
local i = 0
request = function()
  i = i + 1
  local ua = agents[i % #agents + 1]
  local path = paths[i % #paths + 1]
  local headers = { ["Host"] = "train.local", ["Accept"] = "text/html,*/*;q=0.8" }
  if ua ~= "" then headers["User-Agent"] = ua end
  if i % 3 == 0 then headers["Accept-Language"] = "en-US,en;q=0.9" end
  if i % 5 == 0 then headers["Accept-Encoding"] = "gzip, deflate, br" end
  return wrk.format("GET", path, headers)
end
