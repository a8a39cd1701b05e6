#!/usr/bin/env python3
"""Generate conf/agents.toml from the MIT-licensed UA sources plus hand-checked entries.

Usage (from the crate root):  python3 docs/catalog/generate.py [../shared/data/ua] > conf/agents.toml

The output is the reviewed, shipped artefact; this script only saves typing. See README.md here.
Rules, in order:
  1. HAND entries (below) are written exactly as given; they win over generated ones and absorb the
     match tokens of any generated entry with the same name.
  2. ai-robots.json: one entry per robots.txt token; `function` mapped to a category (ai_category);
     names in ROBOTS_TXT_ONLY never appear in a User-Agent and get `match = []`.
  3. crawler-user-agents.json: each pattern is turned into whole tokens (literalise); a token that
     never occurs as a whole token in the entry's own instances is widened to the token it sits in;
     TRAP patterns (SOURCES.md) are dropped, and so is any token that occurs as a whole token in
     browsers-dev.jsonl (printed to stderr so a reviewer sees them).
"""
import json
import re
import sys
import tomllib
from collections import Counter, OrderedDict
from pathlib import Path

SRC = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/ua")
# Crawlers that gather for several uses under one name (see `mixed_use` in the header).
MIXED_USE = {
    "Applebot",
    "bingbot",
    "Googlebot",
    "Googlebot-Image",
    "Googlebot-Mobile",
    "Googlebot-News",
    "Googlebot-Video",
}

# Crawlers documented to ignore `Crawl-delay` (see `honours_crawl_delay` in the header), by
# operator or by name, with where that is said.
CRAWL_DELAY_IGNORED_BY_OPERATOR = {
    "Google": "Google: developers.google.com/search/docs/crawling-indexing/robots/robots_txt "
              "(crawl-delay is not supported)",
    "Yandex": "Yandex: yandex.com/support/webmaster/ (Crawl-delay is no longer taken into "
              "account since February 2018)",
}
CRAWL_DELAY_IGNORED_BY_NAME = {
    "Scrapy": "Scrapy 2.19: RobotsTxtMiddleware never calls RobotParser.crawl_delay "
              "(github.com/scrapy/scrapy/issues/892)",
}

# Published proofs of identity (ranges, rdns, signature_agent) per agent name, kept by hand.
PROOFS = tomllib.loads((Path(__file__).parent / "proofs.toml").read_text())
TOKEN_CHARS = re.compile(r"[A-Za-z0-9._-]")
CATEGORIES = ["search", "ai-training", "ai-search", "ai-assistant", "seo", "monitoring",
              "archiver", "feed-reader", "social-preview", "http-library", "scanner", "other"]

# Patterns from crawler-user-agents that match real browsers (SOURCES.md "Known traps").
TRAPS = {r"AP3A\.240617\.008", "MetaIAB Facebook", r"Code\/1\.", r"Trae\/", "Fluid", "Sogou",
         "Butterfly", "Sonic", "WhatsApp", "Viber", "^LCC "}
# ai.robots.txt names that are robots.txt tokens only, or too generic to match as a UA token.
ROBOTS_TXT_ONLY = {
    "Google-Extended": "robots.txt-only token: Google never sends it in a User-Agent",
    "Applebot-Extended": "robots.txt-only token: Apple never sends it in a User-Agent",
    "Code": "too generic: matches VS Code's `Code/1.x` Electron browser",
    "Trae": "too generic: matches the Trae IDE's Electron browser",
    "Spider": "too generic: a bare `Spider` word is a marker, not an agent",
    "Cursor": "too generic as a UA word",
    "Operator": "too generic as a UA word",
    "OpenAI": "robots.txt token; OpenAI's crawlers send GPTBot / OAI-SearchBot / ChatGPT-User",
    "Devin": "too generic as a UA word",
    "opencode": "robots.txt token; the agent sends opencode-smartfetch",
    "UseAI": "robots.txt token only",
    "YandexAdditional": "robots.txt token; the crawler sends YandexAdditionalBot",
    "NotebookLM": "robots.txt token; the fetcher sends Google-NotebookLM",
    "Panscient": "robots.txt token; the crawler sends panscient.com",
}
# Hand-made regexes for crawler-user-agents patterns that are not plain literals.
REGEX_TO_TOKENS = {
    "AdsBot-Google([^-]|$)": ["AdsBot-Google"], "[wW]get": ["Wget"], "^Seekbot": ["Seekbot"],
    "(sistrix|SISTRIX) [cC]rawler": ["SISTRIX Crawler"],
    "Ahrefs(Bot|SiteAudit)": ["AhrefsBot", "AhrefsSiteAudit"], "^CrunchBot": ["CrunchBot"],
    "S[eE][mM]rushBot": ["SemrushBot"], "Livelap[bB]ot": ["LivelapBot"],
    "[pP]ingdom": ["Pingdom.com_bot_version", "PingdomPageSpeed", "PingdomTMS"],
    "Bark[rR]owler": ["Barkrowler"], "^dcrawl": ["dcrawl"], "^Apache-HttpClient": ["Apache-HttpClient"],
    "(^| )sentry\\/": ["sentry"], "^curl": ["curl"], "[Cc]urebot": ["Curebot"],
    "BlogTraffic\\/\\d\\.\\d+ Feed-Fetcher": ["BlogTraffic"], "^PHP-Curl-Class": ["PHP-Curl-Class"],
    "(^| )PTST\\/": ["PTST"], "^BW\\/": ["BW"], "[cC]laude[bB]ot": ["ClaudeBot"],
    "[aA]cunetix": ["acunetix-product", "Acunetix"], "[dD]ir[Bb]uster": ["DirBuster"],
    "[mM]echanize": ["Mechanize", "WWW-Mechanize"], "^HTTPie\\/": ["HTTPie"],
    "^ArenaUnfurlBot": ["ArenaUnfurlBot"], "Automaton|Newsify Feed Fetcher": ["Newsify Feed Fetcher"],
    "Chirp|gotosocial": ["gotosocial"], "[cC]ludo": ["Cludo"],
    "ContextualBot[\\s\\S]*outcomes\\.net": ["ContextualBot"],
    "Current[\\s\\S]*RSS Reader": ["RSS Reader"], "Netumo|netumo": ["Netumo"],
    "Spider[\\s\\S]*spider\\.com": [], "GoogleAssociationService$": ["GoogleAssociationService"],
    "^Silk\\/": [], "Unshorten\\.It\\!": ["Unshorten.It!"], "SSL Labs$": ["SSL Labs"],
}
# Generated names that read badly in a 403 body or a metric label (a pattern's punctuation, a
# URL, a generic phrase): the product a site operator knows instead. Their match literals stay.
RENAME = {
    "Odin;": "Odin",                                            # Mozilla/5.0 (compatible; Odin; https://docs.getodin.com/)
    "developers.google.com/+/web/snippet": "Google-PageRenderer",  # ... Google-PageRenderer Google (+https://developers.google.com/+/web/snippet/)
    "sindresorhus/got": "got",                                  # got (https://github.com/sindresorhus/got)
    "RSS Reader": "Current RSS Reader",                         # Mozilla/5.0 (compatible; Current/1.0; +https://currentreader.app; RSS Reader)
    "Optimizer)": "Optimizer",                                  # Mozilla/5.0 (compatible; Optimizer)
    "Rigor)": "Rigor",                                          # Mozilla/5.0 (X11; Linux x86_64; Rigor) AppleWebKit/...
    "dbot)": "dbot",                                            # ... (KHTML, like Gecko) (dbot)
    "yandex.com/bots": "Yandex",                                # Yandex's robots, by their contact URL
    "https://developers.cloudflare.com/security-center": "Cloudflare-SecurityCenter",  # ... (compatible; +https://developers.cloudflare.com/security-center/)
    "scraping@nytimes.com": "NYTimes-Scraping",                 # scraping@nytimes.com
    "grub.org": "grub-client",                                  # Mozilla/4.0 (compatible; grub-client-1.0.4; Crawl your own stuff with http://grub.org)
    "WeSEE:Search": "WeSEE",                                    # WeSEE:Search/0.1 (Alpha, http://www.wesee.com/en/support/bot/)
}
# Sites whose pages describe other people's robots (bot directories, UA databases): an entry's
# `url` there says nothing about who runs the robot.
DIRECTORY_HOSTS = {"datadome.co", "knownagents.com", "useragentstring.com"}
# Hosts a robot's contact URL may name without being its operator's: code hosts, shorteners,
# form services, placeholders.
NOT_OPERATOR_HOSTS = {"github.com", "gitlab.com", "code.google.com", "sourceforge.net", "example.com",
                      "g.co", "forms.gle", "bit.ly"}
TAG_CATEGORY = [("ai-crawler", "ai-training"), ("http-library", "http-library"),
                ("archiver", "archiver"), ("feed-reader", "feed-reader"),
                ("social-preview", "social-preview"), ("scanner", "scanner"),
                ("monitoring", "monitoring"), ("search-engine", "search"), ("seo", "seo"),
                ("advertising", "other"), ("academic", "other"), ("browser-automation", "other")]


def A(name, category, operator, tokens=None, match=None, ignores_star=False, regex=None, note=None,
      checked=True):
    return dict(name=name, category=category, operator=operator,
                tokens=tokens if tokens is not None else default_tokens(name),
                match=match if match is not None else [name], ignores_star=ignores_star,
                regex=regex, note=note, hand=True, checked=checked)


def default_tokens(name):
    """robots-spec §2: a group key is the leading run of [A-Za-z_-], lower-cased."""
    m = re.match(r"[A-Za-z_-]+", name)
    return [m.group(0).lower()] if m else []


HAND = [
    # Google (https://developers.google.com/search/docs/crawling-indexing/google-common-crawlers)
    A("Googlebot", "search", "Google"),
    A("Googlebot-Image", "search", "Google", ["googlebot-image", "googlebot"], ["Googlebot-Image", "Googlebot-Images"]),
    A("Googlebot-Video", "search", "Google", ["googlebot-video", "googlebot"]),
    A("Googlebot-News", "search", "Google", ["googlebot-news", "googlebot"]),
    A("Googlebot-Mobile", "search", "Google", ["googlebot-mobile", "googlebot"], note="legacy feature-phone crawler"),
    A("Storebot-Google", "search", "Google"),
    A("Google-InspectionTool", "search", "Google", ["google-inspectiontool", "googlebot"]),
    A("GoogleOther", "ai-training", "Google"),
    A("GoogleOther-Image", "ai-training", "Google", ["googleother-image", "googleother"]),
    A("GoogleOther-Video", "ai-training", "Google", ["googleother-video", "googleother"]),
    A("Google-CloudVertexBot", "ai-training", "Google"),
    A("Google-Extended", "ai-training", "Google", match=[], note="robots.txt-only token: never sent in a User-Agent"),
    A("AdsBot-Google", "other", "Google", ignores_star=True, note="ignores the * group"),
    A("AdsBot-Google-Mobile", "other", "Google", ["adsbot-google-mobile", "adsbot-google"], ignores_star=True, note="ignores the * group"),
    A("APIs-Google", "other", "Google", ignores_star=True, note="ignores the * group"),
    A("Mediapartners-Google", "other", "Google"),
    A("FeedFetcher-Google", "feed-reader", "Google"),
    A("Google-Read-Aloud", "ai-assistant", "Google"),
    A("Google Web Preview", "social-preview", "Google", ["googlebot"], ["Google Web Preview"]),
    A("Google-Site-Verification", "other", "Google"),
    # Microsoft, Yandex, Apple, DuckDuckGo, Baidu, ...
    A("bingbot", "search", "Microsoft", ["bingbot", "msnbot"]),
    A("BingPreview", "social-preview", "Microsoft", ["bingpreview", "bingbot", "msnbot"]),
    A("msnbot", "search", "Microsoft"),
    A("YandexBot", "search", "Yandex", ["yandexbot", "yandex"]),
    A("Applebot", "search", "Apple"),
    A("Applebot-Extended", "ai-training", "Apple", match=[], note="robots.txt-only token: never sent in a User-Agent"),
    A("DuckDuckBot", "search", "DuckDuckGo"),
    A("DuckAssistBot", "ai-assistant", "DuckDuckGo"),
    A("Baiduspider", "search", "Baidu"),
    A("Yahoo! Slurp", "search", "Yahoo", ["slurp"], ["Yahoo! Slurp", "Slurp"]),
    A("Sogou web spider", "search", "Sogou", ["sogou"], ["Sogou web spider", "Sogou inst spider", "Sogou News Spider", "Sogou Pic Spider", "Sogou Orion spider", "Sogou spider2", "Sogou head spider"]),
    # AI
    A("GPTBot", "ai-training", "OpenAI"),
    A("OAI-SearchBot", "ai-search", "OpenAI"),
    A("ChatGPT-User", "ai-assistant", "OpenAI"),
    A("ClaudeBot", "ai-training", "Anthropic"),
    A("Claude-User", "ai-assistant", "Anthropic"),
    A("Claude-SearchBot", "ai-search", "Anthropic"),
    A("PerplexityBot", "ai-search", "Perplexity"),
    A("Perplexity-User", "ai-assistant", "Perplexity"),
    A("CCBot", "ai-training", "Common Crawl"),
    A("Bytespider", "ai-training", "ByteDance"),
    A("Amazonbot", "ai-training", "Amazon"),
    A("PetalBot", "search", "Huawei (Petal Search)"),
    A("meta-externalagent", "ai-training", "Meta", match=["meta-externalagent"]),
    A("meta-externalfetcher", "ai-assistant", "Meta", match=["meta-externalfetcher"]),
    A("facebookexternalhit", "social-preview", "Meta"),
    A("facebookcatalog", "other", "Meta"),
    A("WhatsApp", "social-preview", "Meta", ["whatsapp"], [], regex=r"^WhatsApp(/[0-9.]+)?(\s*/?[A-Za-z])?$",
      note="link-preview fetcher: only the bare product, never WhatsApp Desktop's browser string"),
    A("Viber", "social-preview", "Rakuten Viber", ["viber"], [], regex=r"^Viber(/[0-9.]+)?$",
      note="link-preview fetcher: only the bare product, never Viber Desktop's browser string"),
    # Archivers
    A("archive.org_bot", "archiver", "Internet Archive", ["archive", "ia_archiver"],
      note="robots.txt key of `archive.org_bot` is `archive` (robots-spec §2)"),
    A("ia_archiver", "archiver", "Internet Archive / Alexa", ["ia_archiver"], ["ia_archiver", "ia_archiver-web.archive.org"]),
    # Feed readers that poll on their own schedule, desktop and phone apps included (issue 43:
    # `Reeder/5.0 CFNetwork/... Darwin/...` is the app fetching feeds, not a person reading a
    # page); unchecked: the names are the apps' own, their exact User-Agents not confirmed here
    A("NetNewsWire", "feed-reader", "Ranchero Software", checked=False),
    A("Reeder", "feed-reader", "Silvio Rizzi", checked=False),
    A("ReadKit", "feed-reader", "Webin", checked=False),
    A("Newsify", "feed-reader", "Newsify", checked=False),
    A("Liferea", "feed-reader", "Liferea project", checked=False),
    A("QuiteRSS", "feed-reader", "QuiteRSS project", checked=False),
    A("RSSOwl", "feed-reader", "RSSOwl project", checked=False),
    A("Akregator", "feed-reader", "KDE", checked=False),
    A("NewsFire", "feed-reader", "David Watanabe", checked=False),
    A("Inoreader", "feed-reader", "Innologica", checked=False),
    A("Feedbro", "feed-reader", "Nodetics", checked=False),
    A("FeedDemon", "feed-reader", "NewsGator", checked=False),
    A("Newsboat", "feed-reader", "Newsboat project", checked=False),
    A("newsbeuter", "feed-reader", "newsbeuter project", checked=False),
    A("Feeddler", "feed-reader", "Feeddler", checked=False),
    A("Unread", "feed-reader", "Golden Hill Software", checked=False),
    A("Vienna", "feed-reader", "Vienna project", checked=False),
    # crawler-user-agents tags it seo; its documented use is payment webhooks and checks of
    # merchants' sites (https://stripe.com/docs/webhooks)
    A("Stripe", "other", "stripe.com", match=["Stripe"], checked=False),
    # Tools
    A("curl", "http-library", "curl project", match=["curl", "libcurl"]),
    A("Wget", "http-library", "GNU"),
    A("python-requests", "http-library", "Python Software Foundation"),
    A("Python-urllib", "http-library", "Python Software Foundation"),
    A("python-httpx", "http-library", "Encode"),
    A("aiohttp", "http-library", "aio-libs"),
    A("Go-http-client", "http-library", "Go project"),
    A("okhttp", "http-library", "Square"),
    A("axios", "http-library", "axios project"),
    A("node-fetch", "http-library", "node-fetch project"),
    A("undici", "http-library", "Node.js"),
    A("libwww-perl", "http-library", "Perl LWP", match=["libwww-perl", "lwp-trivial", "lwp-request", "LWP::Simple"]),
    A("Java", "http-library", "Oracle / OpenJDK", match=[], regex=r"(^|[\s(])Java/[0-9]",
      note="JDK HttpURLConnection: `Java/<version>` only, never the word Java in a phone UA"),
    A("Apache-HttpClient", "http-library", "Apache Software Foundation"),
    A("HTTPie", "http-library", "HTTPie"),
    A("PostmanRuntime", "http-library", "Postman"),
    A("insomnia", "http-library", "Kong"),
    A("GuzzleHttp", "http-library", "Guzzle"),
    A("Faraday", "http-library", "lostisland", match=["Faraday"]),
    # Headless page renderers and SOAP clients that send an engine-like string of their own
    A("jsdom", "http-library", "jsdom project", checked=False),
    A("Splash", "http-library", "Zyte", match=["splash"], checked=False,
      note="Scrapy's rendering service: `AppleWebKit/538.1 (KHTML, like Gecko) splash Safari/538.1`"),
    A("MS Web Services Client Protocol", "http-library", "Microsoft", ["ms"],
      match=["MS Web Services Client Protocol"], checked=False),
    # crawler-user-agents' `Fetch\/` (a CMS-detection tool): only `Fetch/<version>`, never the
    # word in a person's app (`Acme Fetch`)
    A("Fetch", "seo", "unknown", match=[], regex=r"(^|\s)Fetch/[0-9]", checked=False),
    # PowerShell's Invoke-WebRequest: `... WindowsPowerShell/5.1.19041` (5.x), `... PowerShell/7.4.0`
    A("PowerShell", "http-library", "Microsoft", ["powershell"], match=["WindowsPowerShell", "PowerShell"], checked=False),
    # Cloud SDKs and CLIs, as their vendors document their User-Agents: the SDK is the client
    # (a `Python/3.11` or `go1.20` after it is its runtime).
    A("Botocore", "http-library", "Amazon Web Services", ["botocore"], match=["Botocore", "Boto3"], checked=False),
    A("aws-cli", "http-library", "Amazon Web Services", checked=False),
    A("aws-sdk", "http-library", "Amazon Web Services", match=[], regex=r"(^|\s)aws-sdk-[a-z0-9]+/[0-9]", checked=False),
    A("azsdk", "http-library", "Microsoft", match=[], regex=r"(^|\s)azsdk-[a-z]+-[A-Za-z0-9.-]+/[0-9]", checked=False),
    A("google-api", "http-library", "Google", ["google-api"], match=[], regex=r"(^|\s)google-api-[a-z]+-client/[0-9]", checked=False),
    A("Ruby", "http-library", "Ruby net/http", match=[], regex=r"^Ruby$"),
    A("Scrapy", "http-library", "Zyte", note="a scraping framework (a tool, like the HTTP libraries): its users crawl for any purpose; ai.robots.txt files it under AI training"),
    A("HeadlessChrome", "other", "Google (automation)"),
    A("PhantomJS", "other", "PhantomJS project"),
    A("Puppeteer", "other", "Google (automation)"),
    A("Playwright", "other", "Microsoft (automation)"),
    A("Selenium", "other", "Selenium project"),
    A("Chrome-Lighthouse", "monitoring", "Google"),
    # crawler-user-agents' pattern is its contact URL (`pinterest\.com\/bot`), which sits inside a
    # URL token and so became no agent. Not the app's in-app browser (`[Pinterest/Android]`,
    # `Pinterest for Android`): those are people.
    A("Pinterestbot", "social-preview", "pinterest.com", ["pinterestbot", "pinterest"],
      ["Pinterestbot", "Pinterest/0.2", "www.pinterest.com/bot.html"], checked=False),
    # Members of a crawler family, split out of a family entry that hid their own token: each
    # chain is its own token, then the family's (robots-spec §5 step 1). Not checked against the
    # operators' documentation.
    A("YandexImages", "search", "Yandex", ["yandeximages", "yandex"], checked=False),
    A("YandexMobileBot", "search", "Yandex", ["yandexmobilebot", "yandex"], checked=False),
    A("YandexVideo", "search", "Yandex", ["yandexvideo", "yandex"], checked=False),
    A("YandexMetrika", "search", "Yandex", ["yandexmetrika", "yandex"], checked=False),
    A("Baiduspider-render", "search", "Baidu", ["baiduspider-render", "baiduspider"], checked=False),
    A("AhrefsSiteAudit", "seo", "Ahrefs", ["ahrefssiteaudit", "ahrefsbot"], checked=False),
    A("SemrushBot-BA", "seo", "Semrush", ["semrushbot-ba", "semrushbot"], checked=False),
    A("SemrushBot-SA", "seo", "Semrush", ["semrushbot-sa", "semrushbot"], checked=False),
    A("SemrushBot-SI", "seo", "Semrush", ["semrushbot-si", "semrushbot"], checked=False),
    A("Seekport", "search", "bot.seekport.com", ["seekportbot", "seekport"], ["Seekport", "SeekportBot"],
      checked=False),
    A("Alexabot", "ai-training", "unknown", checked=False,
      note="was filed under ExaBot, whose token it does not share"),
]


def ai_category(function):
    f = function.lower()
    if f in ("ai assistants", "ai agents", "undocumented ai agents", "ai coding agents") or \
            re.search(r"assistant|user-initiated|user prompts|user queries|answers|action|chat", f):
        return "ai-assistant"
    if f == "ai search crawlers" or re.search(r"search", f):
        return "ai-search"
    return "ai-training"


def operator_of(text):
    m = re.match(r"\[([^\]]+)\]", text)
    text = m.group(1) if m else text
    return "unknown" if text.lower().startswith(("unclear", "unknown", "no information")) else text.split(",")[0].strip()


def registrable(host):
    """The last two labels of a host (`www.notion.so` -> `notion.so`): enough to compare sites."""
    return ".".join(host.lower().split(".")[-2:])


def operator_for(entry, name):
    """Who runs a crawler-user-agents robot: the host of the entry's `url`, unless that site is
    not the one the robot names. The `url` is often a page about the robot on a bot directory
    (DIRECTORY_HOSTS) or simply wrong (Notion's was iubenda.com); the contact URL in the robot's
    own User-Agent is then the better word: the one whose site carries the robot's name
    (`Notion` -> notion.so), else, for a directory page, the only site the instances name.
    No `url` and no site named after the robot, or nothing usable: "unknown"."""
    url_host = re.sub(r"^https?://(www\.)?", "", entry.get("url") or "").split("/")[0].lower()
    named = sorted({m.group(1).lower() for ua in entry["instances"]
                    for m in re.finditer(r"https?://(?:www\.)?([A-Za-z0-9.-]+\.[A-Za-z]{2,})", ua)})
    named = [h for h in named if h not in NOT_OPERATOR_HOSTS and registrable(h) not in NOT_OPERATOR_HOSTS]
    word = re.sub(r"[^a-z0-9]", "", name.lower())
    if url_host and (not named or registrable(url_host) in {registrable(h) for h in named}
                     or site_is_named_for(url_host, word)):
        return url_host if registrable(url_host) not in DIRECTORY_HOSTS else "unknown"
    own = [h for h in named if site_is_named_for(h, word)]
    if own:
        return own[0]
    if not url_host:
        return "unknown"
    if registrable(url_host) not in DIRECTORY_HOSTS:
        return url_host
    return named[0] if len({registrable(h) for h in named}) == 1 else "unknown"


def site_is_named_for(host, word):
    """Whether a host carries a robot's name (`notion` in notion.so) or the robot's name carries
    the host's site name (`sistrix` in `sistrixcrawler`; at least 4 letters, so `t.me` is not
    named for `rssbot`)."""
    site = registrable(host).split(".")[0].replace("-", "")
    return bool(word) and (word in host.replace("-", "") or (len(site) >= 4 and site in word))


def literalise(pattern):
    if pattern in REGEX_TO_TOKENS:
        return REGEX_TO_TOKENS[pattern]
    s = re.sub(r"\\(.)", r"\1", pattern).split(" (")[0]
    return [s.strip().rstrip("/").strip()]


def whole_token_positions(token, ua):
    low, t = ua.lower(), token.lower()
    start = low.find(t)
    while start >= 0:
        end = start + len(t)
        if (start == 0 or not TOKEN_CHARS.match(ua[start - 1])) and (end == len(ua) or not TOKEN_CHARS.match(ua[end])):
            yield start
        start = low.find(t, start + 1)


def has_whole_token(token, ua):
    return next(whole_token_positions(token, ua), None) is not None


def enclosing_token(token, ua):
    """The whole token around the first occurrence of `token` outside a URL."""
    i = ua.lower().find(token.lower())
    while i >= 0 and "://" in ua[:i].rsplit(" ", 1)[-1]:
        i = ua.lower().find(token.lower(), i + 1)
    if i < 0:
        return None
    a, b = i, i + len(token)
    while a > 0 and TOKEN_CHARS.match(ua[a - 1]):
        a -= 1
    while b < len(ua) and TOKEN_CHARS.match(ua[b]):
        b += 1
    return ua[a:b]


def main():
    browsers = [json.loads(line)["ua"] for line in open(SRC / "browsers-dev.jsonl")]
    hits_browser = lambda tok: any(True for ua in browsers if tok.lower() in ua.lower() and has_whole_token(tok, ua))
    agents = OrderedDict((a["name"].lower(), a) for a in HAND)
    used = {m.lower(): a["name"] for a in HAND for m in a["match"]}
    dropped = []

    def add(name, category, operator, matches, note=None):
        matches = [m for m in dict((m.lower(), m) for m in reversed(matches)).values() if m.lower() not in used][::-1]
        key = name.lower()
        if key in agents:
            a = agents[key]
            if not a["hand"] or a["match"]:  # token-only and regex-only hand entries stay so
                a["match"] += matches
        else:
            agents[key] = dict(name=name, category=category, operator=operator, tokens=default_tokens(name),
                               match=list(matches), ignores_star=False, regex=None, note=note, hand=False)
        for m in matches:
            used[m.lower()] = name

    for name, info in json.load(open(SRC / "ai-robots.json")).items():
        if " " in name and name.lower().replace(" ", "") in (n.lower() for n in agents) or re.search(r"/[0-9.]+$", name):
            continue  # "Brightbot 1.0", "MistralAI-User/1.0": duplicates of a token entry
        cat, op = ai_category(info["function"]), operator_of(info["operator"])
        if name in ROBOTS_TXT_ONLY:
            if name.lower() not in agents:
                agents[name.lower()] = dict(name=name, category=cat, operator=op, tokens=default_tokens(name), match=[],
                                            ignores_star=False, regex=None, note=ROBOTS_TXT_ONLY[name], hand=False)
            continue
        if hits_browser(name):
            dropped.append((name, "ai-robots", "whole token in a browser UA"))
            continue
        add(name, cat, op, [name])

    for e in json.load(open(SRC / "crawler-user-agents.json")):
        if e["pattern"] in TRAPS:
            dropped.append((e["pattern"], "crawler-user-agents", "known trap (SOURCES.md)"))
            continue
        tokens = []
        for lit in literalise(e["pattern"]):
            if not lit:
                continue
            if not e["instances"] or any(has_whole_token(lit, ua) for ua in e["instances"]):
                tokens.append(lit)
            # An instance that holds the literal only inside a longer token: take that token,
            # unless it embeds a version (`binlar_2.6.3`) or punctuation.
            unmatched = [ua for ua in e["instances"] if not has_whole_token(lit, ua)]
            widened = sorted({t for ua in unmatched if (t := enclosing_token(lit, ua))
                              and not re.search(r"[;(]", t)
                              and not (re.search(r"[0-9]", t) and not re.search(r"[0-9]", lit))})
            if widened:
                print(f"widened {lit!r} -> {widened}", file=sys.stderr)
            tokens += widened
        tokens = [t.strip(" -_.") for t in tokens if len(t.strip(" -_.")) >= 2]
        keep = []
        for t in tokens:
            if hits_browser(t):
                dropped.append((t, "crawler-user-agents", "whole token in a browser UA"))
            else:
                keep.append(t)
        if not keep:
            continue
        cat = next((c for tag, c in TAG_CATEGORY if tag in e["tags"]), "other")
        name = Counter(keep).most_common(1)[0][0]
        name = RENAME.get(name, name)
        existing = agents.get(name.lower())
        add(name, existing["category"] if existing else cat, operator_for(e, name), keep)

    for tok, src, why in dropped:
        print(f"dropped {src}: {tok!r}: {why}", file=sys.stderr)
    emit(agents.values())


def q(s):
    return json.dumps(s, ensure_ascii=False)


def emit(agents):
    print(HEADER)
    for cat in CATEGORIES:
        group = [a for a in agents if a["category"] == cat]
        group.sort(key=lambda a: (not a["hand"], a["name"].lower()))
        print(f"\n# {'=' * 96}\n# {cat} ({len(group)})\n# {'=' * 96}")
        for a in group:
            print()
            if a["note"]:
                print(f"# {a['note']}")
            print("[[agent]]")
            print(f"name = {q(a['name'])}")
            print(f"category = {q(a['category'])}")
            print(f"operator = {q(a['operator'])}")
            print(f"tokens = [{', '.join(q(t) for t in a['tokens'])}]")
            if a["match"] != [a["name"]]:
                print(f"match = [{', '.join(q(m) for m in dict.fromkeys(a['match']))}]")
            if a["regex"]:
                print(f"regex = '{a['regex']}'")
            if a["ignores_star"]:
                print("ignores_star = true")
            proof = PROOFS.get(a["name"], {})
            for key in ("ranges", "rdns"):
                if proof.get(key):
                    print(f"{key} = [{', '.join(q(v) for v in proof[key])}]")
            if proof.get("signature_agent"):
                print(f"signature_agent = {q(proof['signature_agent'])}")
            if a["hand"] and a.get("checked", True):
                print("checked = true")
            if a["name"] in MIXED_USE:
                print("mixed_use = true")
            ignored = (CRAWL_DELAY_IGNORED_BY_NAME.get(a["name"])
                       or CRAWL_DELAY_IGNORED_BY_OPERATOR.get(a["operator"]))
            if ignored:
                print(f"honours_crawl_delay = false  # {ignored}")


HEADER = """\
# robogate crawler catalog: who is asking, and which robots.txt groups bind them.
#
# One [[agent]] per crawler or tool:
#   name          unique (case-insensitive); also the metrics label
#   category      search | ai-training | ai-search | ai-assistant | seo | monitoring | archiver |
#                 feed-reader | social-preview | http-library | scanner | other
#   operator      who runs it
#   tokens        robots.txt token chain, most specific first, each a group key ([a-z_-]+,
#                 robots-spec §2); [] means only the * group applies
#   match         whole-token, case-insensitive strings that identify it in a User-Agent
#                 (a token is a run of letters, digits, '.', '_' and '-'); default: [name];
#                 [] means robots.txt-only: known as a token, never matched in a User-Agent
#   regex         optional, only where a token cannot do; case-insensitive (Rust regex syntax);
#                 it must spell out the name, which gates it (it only runs on UAs holding the name)
#   ignores_star  true if the crawler obeys only groups that name it (default false)
#   ranges        names of the published IP-range lists (conf/ranges/<name>.json, sources in
#                 conf/ranges/SOURCES.md) whose addresses prove the claim; default []
#   rdns          host-name suffixes the operator documents for forward-confirmed reverse DNS
#                 (PTR ends in a suffix, and its forward lookup holds the address); default []
#   signature_agent  the `Signature-Agent` URL of an operator that signs its requests (Web Bot
#                 Auth); optional
#   An agent with any of ranges, rdns or signature_agent has a proof: a claim that fails it
#   is spoofed. An agent with none is unverified (robogate cannot tell).
#   checked       true if a person verified the entry against the operator's documentation
#   mixed_use     true if the crawler gathers for several uses under one name (Googlebot feeds
#                 Search and Gemini; Applebot, Apple search and Apple Intelligence; bingbot,
#                 Bing and Copilot): robots.txt preferences against one use (train-ai=n) never
#                 refuse it, since robogate cannot tell which use a fetch serves; default false
#   honours_crawl_delay  false if the operator documents that the crawler ignores Crawl-delay
#                 (the comment says where): robogate then does not pace it for one unless
#                 crawl_delay.pace_ignorers = true; default true
#
# Generated by docs/catalog/generate.py, then reviewed. Entries are grouped by category.
#
# Derived in part from:
#   monperrus/crawler-user-agents @ 7c7f9f2, Copyright (c) 2017 Martin Monperrus, MIT
#   ai-robots-txt/ai.robots.txt @ 738c80d, Copyright (c) 2024 ai.robots.txt, MIT
# The full licence texts are in conf/LICENSES-agents.md and must ship with this file.
"""

if __name__ == "__main__":
    main()
