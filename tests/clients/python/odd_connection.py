"""A client whose connection no browser opens, to see robogate hold it against a browser claim.

    python3 odd_connection.py split-hello HOST PORT USER_AGENT PATH
        TLS 1.3 + HTTP/1.1, its ClientHello cut into 1-byte records (300+ records: more than
        robogate reads; TLS allows it, rustls joins them).
    python3 odd_connection.py h2-pings HOST PORT USER_AGENT PATH [PINGS]
        TLS + HTTP/2 (hyper-h2 frames), PINGS PING frames (default 40) between the preface's
        SETTINGS and the first HEADERS (more frames than robogate reads of a preface).

Both send a browser's whole head (Accept, Accept-Language, Accept-Encoding: gzip), so only the
connection gives them away, and print the status as the last line of stdout. TLS verification is
off (the test's own certificate).
"""

import socket
import ssl
import sys

HEAD = [
    ("accept", "text/html,application/xhtml+xml,*/*;q=0.8"),
    ("accept-language", "en-US,en;q=0.9"),
    ("accept-encoding", "gzip, deflate, br"),
]


def context(alpn, padded):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    # Padded with protocols nobody speaks: a hello of well over 300 bytes, so of records.
    ctx.set_alpn_protocols([alpn] + [f"x-padding-{i}" for i in range(20)] * padded)
    return ctx


class Tls:
    """TLS over a socket through memory BIOs, so the ClientHello's records can be rewritten."""

    def __init__(self, host, port, alpn, split_hello):
        self.sock = socket.create_connection((host, port), timeout=20)
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context(alpn, split_hello).wrap_bio(self.incoming, self.outgoing, server_hostname="localhost")
        first = True
        while True:
            try:
                self.tls.do_handshake()
                self.flush()
                return
            except ssl.SSLWantReadError:
                data = self.outgoing.read()
                if first and split_hello:
                    data = one_byte_records(data)
                first = False
                self.sock.sendall(data)
                self.fill()

    def flush(self):
        data = self.outgoing.read()
        if data:
            self.sock.sendall(data)

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            self.incoming.write_eof()
        self.incoming.write(data)

    def send(self, data):
        self.tls.write(data)
        self.flush()

    def recv(self):
        while True:
            try:
                return self.tls.read(65536)
            except ssl.SSLWantReadError:
                self.flush()
                self.fill()
            except ssl.SSLZeroReturnError:
                return b""


def one_byte_records(data):
    """The first record (the ClientHello) as one record per byte; the rest as it was."""
    assert data[0] == 22, "not a handshake record"
    length = int.from_bytes(data[3:5], "big")
    fragment, rest = data[5 : 5 + length], data[5 + length :]
    header = data[:3]
    return b"".join(header + (1).to_bytes(2, "big") + bytes([b]) for b in fragment) + rest


def split_hello(host, port, ua, path):
    conn = Tls(host, port, "http/1.1", split_hello=True)
    fields = "".join(f"{k}: {v}\r\n" for k, v in HEAD)
    conn.send(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: {ua}\r\n{fields}Connection: close\r\n\r\n".encode())
    answer = b""
    while b"\r\n" not in answer:
        data = conn.recv()
        if not data:
            break
        answer += data
    print(answer.split(b" ")[1].decode())


def h2_pings(host, port, ua, path, pings):
    import h2.config
    import h2.connection
    import h2.events

    conn = Tls(host, port, "h2", split_hello=False)
    h2c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    h2c.initiate_connection()
    preface = h2c.data_to_send()
    ping = (8).to_bytes(3, "big") + bytes([6, 0]) + (0).to_bytes(4, "big") + b"robogate"
    headers = [(":method", "GET"), (":authority", "localhost"), (":scheme", "https"), (":path", path), ("user-agent", ua)]
    h2c.send_headers(1, headers + HEAD, end_stream=True)
    conn.send(preface + ping * pings + h2c.data_to_send())
    while True:
        data = conn.recv()
        if not data:
            sys.exit("the connection closed before an answer")
        for event in h2c.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                print(dict(event.headers)[b":status"].decode())
                return
        conn.send(h2c.data_to_send())


def main():
    mode, host, port, ua, path = sys.argv[1:6]
    if mode == "split-hello":
        split_hello(host, int(port), ua, path)
    elif mode == "h2-pings":
        h2_pings(host, int(port), ua, path, int(sys.argv[6]) if len(sys.argv) > 6 else 40)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
