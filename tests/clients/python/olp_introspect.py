# A licence server's token introspection endpoint, as RSL's Open License Protocol (OLP 1.0)
# specifies it: OAuth 2.0 Token Introspection (RFC 7662). `python3 olp_introspect.py CLIENT_ID
# CLIENT_SECRET` listens on a loopback port of its own and prints "port N" once it accepts.
#
# - POST /introspect, application/x-www-form-urlencoded, `token=...` (RFC 7662 §2.1), the
#   caller authenticated as an OAuth client with HTTP Basic (RFC 6749 §2.3.1, credentials
#   form-encoded before base64): other credentials get 401 with `WWW-Authenticate: Basic`
#   (RFC 6749 §5.2 `invalid_client`).
# - Answer (RFC 7662 §2.2): {"active": true, "exp": ..., "client_id": ..., "token_type":
#   "License"} for a token starting "good", {"active": false} for any other (expired, revoked,
#   unknown: the server does not say which, as §2.2 asks).
# - GET /calls answers how many introspections were made (the test counts cache hits by it).
import base64
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote_plus

CALLS = 0


def handler(client_id, client_secret):
    class Introspect(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body, extra=()):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def authenticated(self):
            scheme, _, credentials = self.headers.get("Authorization", "").partition(" ")
            if scheme.lower() != "basic":
                return False
            try:
                user, _, password = base64.b64decode(credentials).decode().partition(":")
            except ValueError:
                return False
            return unquote_plus(user) == client_id and unquote_plus(password) == client_secret

        def do_GET(self):
            if self.path == "/calls":
                self.answer(200, {"calls": CALLS})
            else:
                self.answer(404, {"error": "not_found"})

        def do_POST(self):
            global CALLS
            length = int(self.headers.get("Content-Length", "0"))
            form = parse_qs(self.rfile.read(length).decode())
            if self.path != "/introspect":
                return self.answer(404, {"error": "not_found"})
            if not self.authenticated():
                return self.answer(
                    401, {"error": "invalid_client"}, [("WWW-Authenticate", 'Basic realm="olp"')]
                )
            if self.headers.get("Content-Type", "").split(";")[0] != "application/x-www-form-urlencoded":
                return self.answer(400, {"error": "invalid_request"})
            tokens = form.get("token", [])
            if len(tokens) != 1:
                return self.answer(400, {"error": "invalid_request"})
            CALLS += 1
            token = tokens[0]
            if token.startswith("good"):
                return self.answer(
                    200,
                    {
                        "active": True,
                        "client_id": "crawler-1",
                        "token_type": "License",
                        "exp": int(time.time()) + 3600,
                    },
                )
            self.answer(200, {"active": False})

    return Introspect


def main():
    if len(sys.argv) != 3:
        print("usage: olp_introspect.py CLIENT_ID CLIENT_SECRET", file=sys.stderr)
        return 2
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(sys.argv[1], sys.argv[2]))
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
