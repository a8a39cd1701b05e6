# Minimal Scrapy spider: `python3 scrapy_fetch.py URL USER_AGENT` (UA "" = Scrapy default); ROBOTSTXT_OBEY off, self-signed certs accepted by Scrapy's default; prints status.
import sys

import scrapy
from scrapy.crawler import CrawlerProcess

result = {}


class OneShot(scrapy.Spider):
    name = "oneshot"
    custom_settings = {"HTTPERROR_ALLOW_ALL": True}  # hand every HTTP status to parse()

    async def start(self):  # Scrapy >= 2.13 entry point
        yield scrapy.Request(self.url, callback=self.parse, errback=self.failed, dont_filter=True)

    def parse(self, response):
        result["status"] = response.status

    def failed(self, failure):
        result["error"] = repr(failure.value)


def main():
    if len(sys.argv) < 3:
        print("usage: scrapy_fetch.py URL USER_AGENT", file=sys.stderr)
        return 2
    settings = {
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 30,
    }
    if sys.argv[2]:
        settings["USER_AGENT"] = sys.argv[2]
    proc = CrawlerProcess(settings=settings)
    proc.crawl(OneShot, url=sys.argv[1])
    proc.start()
    if "status" not in result:
        print(f"error: {result.get('error', 'no response')}", file=sys.stderr)
        return 1
    print(result["status"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
