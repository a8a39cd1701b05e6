# One-shot Python HTTP client: `python3 fetch.py --client {requests,httpx,httpx-h2,aiohttp,urllib,http.client,curl_cffi} URL USER_AGENT` (UA "" = library default); TLS verification off; prints status.
import argparse
import sys

CLIENTS = ["requests", "httpx", "httpx-h2", "aiohttp", "urllib", "http.client", "curl_cffi"]


def insecure_ctx():
    import ssl
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def run(client, url, ua):
    hdrs = {"User-Agent": ua} if ua else {}  # empty UA: keep the library's own default
    if client == "requests":
        import urllib3
        import requests
        urllib3.disable_warnings()
        return requests.get(url, headers=hdrs, verify=False, timeout=30).status_code
    if client in ("httpx", "httpx-h2"):
        import httpx
        with httpx.Client(http2=client == "httpx-h2", verify=False, timeout=30) as c:
            r = c.get(url, headers=hdrs)
            print("version:", r.http_version, file=sys.stderr)
            return r.status_code
    if client == "aiohttp":
        import asyncio
        import aiohttp

        async def go():
            async with aiohttp.ClientSession() as s:
                async with s.get(url, headers=hdrs, ssl=False) as r:
                    await r.read()
                    return r.status
        return asyncio.run(go())
    if client == "urllib":
        import urllib.error
        import urllib.request
        req = urllib.request.Request(url, headers=hdrs)
        try:
            with urllib.request.urlopen(req, context=insecure_ctx(), timeout=30) as r:
                r.read()
                return r.status
        except urllib.error.HTTPError as e:  # non-2xx is still an HTTP answer
            return e.code
    if client == "http.client":
        import http.client
        import urllib.parse
        u = urllib.parse.urlsplit(url)
        if u.scheme == "https":
            conn = http.client.HTTPSConnection(u.hostname, u.port or 443, context=insecure_ctx(), timeout=30)
        else:
            conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=30)
        conn.request("GET", (u.path or "/") + ("?" + u.query if u.query else ""), headers=hdrs)
        r = conn.getresponse()
        r.read()
        return r.status
    if client == "curl_cffi":
        from curl_cffi import requests as creq
        # Chrome TLS/h2 profile; a given UA replaces the profile's own Chrome UA (pass a Chrome UA to stay consistent).
        r = creq.get(url, headers=hdrs, impersonate="chrome", verify=False, timeout=30)
        return r.status_code
    raise SystemExit(f"unknown client {client}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--client", choices=CLIENTS, default="requests")
    p.add_argument("url")
    p.add_argument("user_agent")
    a = p.parse_args()
    try:
        status = run(a.client, a.url, a.user_agent)
    except Exception as e:  # transport failure
        print(f"error: {e!r}", file=sys.stderr)
        return 1
    print(status)
    return 0


if __name__ == "__main__":
    sys.exit(main())
