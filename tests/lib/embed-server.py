#!/usr/bin/env python3
"""A small server speaking the OpenAI /v1/embeddings protocol, for tests.

Its "model" is a hashed bag of words (each lower-case word adds 1 to
dimension crc32(word) % dim), so pages that share words get similar
vectors, deterministically. Stdlib only; binds 127.0.0.1 only.

  embed-server.py --port-file F [--dim 64] [--key K] [--fail-first N]
                  [--max-seconds 300]

POST /v1/embeddings  {"model": m, "input": str | [str]}  -> OpenAI answer
                     (data items in reverse order: clients must use index)
GET  /stats          {"requests": n, "inputs": n, "failed": n}
--key: requests without "Authorization: Bearer K" get 401.
--fail-first N: the first N POSTs get 503 (to test retries).
The server exits by itself after --max-seconds or when its parent exits.
"""

import argparse
import json
import os
import re
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--port-file", required=True)
ap.add_argument("--dim", type=int, default=64)
ap.add_argument("--key")
ap.add_argument("--fail-first", type=int, default=0)
ap.add_argument("--max-seconds", type=float, default=300)
args = ap.parse_args()
stats = {"requests": 0, "inputs": 0, "failed": 0}
lock = threading.Lock()


def embed(text):
    v = [0.0] * args.dim
    for w in re.findall(r"\w+", text.lower()):
        v[zlib.crc32(w.encode()) % args.dim] += 1.0
    return v


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/stats":
            with lock:
                self.reply(200, dict(stats))
        else:
            self.reply(404, {"error": {"message": "not found"}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        if self.path != "/v1/embeddings":
            return self.reply(404, {"error": {"message": "not found"}})
        with lock:
            stats["requests"] += 1
        if args.key and self.headers.get("Authorization") != "Bearer " + args.key:
            return self.reply(401, {"error": {"message": "bad key"}})
        with lock:
            if stats["failed"] < args.fail_first:
                stats["failed"] += 1
                return self.reply(503, {"error": {"message": "busy"}})
        try:
            req = json.loads(raw)
            inp = req["input"]
            if isinstance(inp, str):
                inp = [inp]
        except (ValueError, KeyError, TypeError):
            return self.reply(400, {"error": {"message": "bad request"}})
        with lock:
            stats["inputs"] += len(inp)
        data = [{"object": "embedding", "index": i, "embedding": embed(t)}
                for i, t in enumerate(inp)]
        data.reverse()
        self.reply(200, {"object": "list", "data": data,
                         "model": req.get("model", ""),
                         "usage": {"prompt_tokens": 0, "total_tokens": 0}})


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
parent = os.getppid()


def watchdog():
    """Stops after --max-seconds, or as soon as the parent is gone."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < args.max_seconds:
        if os.getppid() != parent:
            break
        time.sleep(0.2)
    srv.shutdown()


threading.Thread(target=watchdog, daemon=True).start()
with open(args.port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.replace(args.port_file + ".tmp", args.port_file)
srv.serve_forever()
