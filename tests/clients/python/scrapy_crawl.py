# A whole-site Scrapy crawl: `python3 scrapy_crawl.py URL OBEY USER_AGENT` follows every link on
# the site from URL; OBEY is 1 (ROBOTSTXT_OBEY: fetches robots.txt and keeps out of what it
# disallows) or 0; USER_AGENT "" is Scrapy's own. Prints each URL it got and its status.
import sys
from urllib.parse import urlparse

from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class Site(CrawlSpider):
    name = "site"
    rules = (Rule(LinkExtractor(), callback="got", follow=True),)
    custom_settings = {"HTTPERROR_ALLOW_ALL": True}

    def parse_start_url(self, response):
        return self.got(response)

    def got(self, response):
        print(response.status, response.url, flush=True)


def main():
    if len(sys.argv) < 4:
        print("usage: scrapy_crawl.py URL OBEY USER_AGENT", file=sys.stderr)
        return 2
    url, obey, agent = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
    settings = {
        "ROBOTSTXT_OBEY": obey,
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 30,
        "CONCURRENT_REQUESTS": 1,
    }
    if agent:
        settings["USER_AGENT"] = agent
    proc = CrawlerProcess(settings=settings)
    proc.crawl(Site, start_urls=[url], allowed_domains=[urlparse(url).hostname])
    proc.start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
