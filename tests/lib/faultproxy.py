#!/usr/bin/env python3
"""faultproxy - an HTTP/1.1 proxy in front of s3rver that injects failures.

    faultproxy.py --upstream http://127.0.0.1:PORT --port-file FILE
                  [--every N] [--times T] [--kinds 503,500,429,reset,stall]
                  [--stall-seconds S] [--fail-path SUBSTRING]
                  [--delay-seconds D] [--stall-path SUBSTRING]

Deterministic: a PUT or DELETE whose key hashes (sha256) to 0 modulo N
fails its first T attempts, with the kinds taken in turn by key:
  503    503 with S3's SlowDown error body
  500    500 InternalError
  429    429 Too Many Requests
  reset  the connection is closed without an answer
  stall  no answer for S seconds, then the connection is closed
Any request whose path contains --fail-path always gets a 503 (a failure
that never heals). --delay-seconds holds every PUT that long before it
is forwarded (a slow link: a run lasts long enough to be killed in it).
--stall-path: any request whose path contains it is forwarded, and its
answer stops mid-way: the first half of its bytes (status line, headers
with the whole Content-Length, body) goes out, then nothing for S seconds
(--stall-seconds), then the connection is closed (a store that stalls).
GET /__stats answers the counts as JSON ("writes": every PUT, DELETE and
POST as "METHOD path", in order).
Loopback only; it stops when its parent test kills it.
"""
import argparse
import hashlib
import http.client
import http.server
import json
import socketserver
import sys
import threading
import time
import urllib.parse

SLOWDOWN = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
            b'<Message>Please reduce your request rate.</Message></Error>')
INTERNAL = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>InternalError</Code>'
            b'<Message>We encountered an internal error.</Message></Error>')

lock = threading.Lock()
stats = {"requests": 0, "forwarded": 0, "injected": {}, "by_method": {}, "writes": []}
attempts = {}


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--upstream", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--every", type=int, default=0)
    p.add_argument("--times", type=int, default=1)
    p.add_argument("--kinds", default="503,500,429,reset")
    p.add_argument("--stall-seconds", type=float, default=3.0)
    p.add_argument("--fail-path", default="")
    p.add_argument("--delay-seconds", type=float, default=0.0)
    p.add_argument("--stall-path", default="")
    return p.parse_args()


ARGS = parse()
UP = urllib.parse.urlsplit(ARGS.upstream)
KINDS = [k for k in ARGS.kinds.split(",") if k]
local = threading.local()


def upstream():
    c = getattr(local, "conn", None)
    if c is None:
        c = http.client.HTTPConnection(UP.hostname, UP.port, timeout=30)
        local.conn = c
    return c


def count(kind):
    with lock:
        stats["injected"][kind] = stats["injected"].get(kind, 0) + 1


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def fault(self):
        """The fault to inject for this request, or None."""
        if ARGS.fail_path and ARGS.fail_path in self.path:
            return "503"
        if self.command not in ("PUT", "DELETE") or ARGS.every <= 0 or not KINDS:
            return None
        h = int.from_bytes(hashlib.sha256(self.path.encode()).digest()[:8], "big")
        if h % ARGS.every != 0:
            return None
        with lock:
            n = attempts.get(self.path, 0)
            attempts[self.path] = n + 1
        if n >= ARGS.times:
            return None
        return KINDS[(h // ARGS.every + n) % len(KINDS)]

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        with lock:
            stats["requests"] += 1
            stats["by_method"][self.command] = stats["by_method"].get(self.command, 0) + 1
            if self.command in ("PUT", "DELETE", "POST"):
                stats["writes"].append(self.command + " " + self.path)
        if self.path == "/__stats":
            return self.reply(200, json.dumps(stats).encode(),
                              [("Content-Type", "application/json")])
        kind = self.fault()
        if kind is not None:
            count(kind)
            if kind == "503":
                return self.reply(503, SLOWDOWN, [("Content-Type", "application/xml")])
            if kind == "500":
                return self.reply(500, INTERNAL, [("Content-Type", "application/xml")])
            if kind == "429":
                return self.reply(429, b"", [])
            if kind == "stall":
                time.sleep(ARGS.stall_seconds)
            self.close_connection = True
            return None
        if self.command == "PUT" and ARGS.delay_seconds > 0:
            time.sleep(ARGS.delay_seconds)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("connection", "keep-alive", "content-length")}
        for attempt in range(2):
            try:
                c = upstream()
                c.request(self.command, self.path, body=body, headers=headers)
                r = c.getresponse()
                data = r.read()
                break
            except (http.client.HTTPException, OSError):
                local.conn = None
                if attempt == 1:
                    return self.reply(502, b"upstream failed")
        with lock:
            stats["forwarded"] += 1
        out = [(k, v) for k, v in r.getheaders()
               if k.lower() not in ("connection", "keep-alive", "content-length",
                                    "transfer-encoding")]
        if ARGS.stall_path and ARGS.stall_path in self.path:
            count("midstall")
            raw = ("HTTP/1.1 %d %s\r\n" % (r.status, r.reason)).encode()
            for k, v in out + [("Content-Length", str(len(data)))]:
                raw += ("%s: %s\r\n" % (k, v)).encode("latin-1")
            raw += b"\r\n" + data
            # half of it: inside the headers for an empty answer (a PUT's)
            self.wfile.write(raw[:len(raw) // 2])
            self.wfile.flush()
            time.sleep(ARGS.stall_seconds)
            self.close_connection = True
            return None
        self.reply(r.status, data if self.command != "HEAD" else b"", out)

    do_GET = do_PUT = do_DELETE = do_POST = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128  # the store opens many connections at once

    def handle_error(self, request, client_address):
        pass  # a client that gave up on a stalled answer: expected


def main():
    srv = Server(("127.0.0.1", 0), Handler)
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(ARGS.port_file + ".tmp", ARGS.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
