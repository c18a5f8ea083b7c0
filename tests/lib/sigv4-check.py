#!/usr/bin/env python3
"""sigv4-check - checks curl's AWS SigV4 signatures with botocore.

    sigv4-check.py serve --port-file F --log L
        a minimal in-memory S3 on loopback (path-style, one bucket, no
        signature checks of its own) that records every request (method,
        raw path and query, headers, body) as JSON lines.
        With --secret-key S [--region R] it checks each request's
        signature with botocore as S3 does and answers 403
        SignatureDoesNotMatch (S3's XML error) when it differs.
    sigv4-check.py verify --log L --access-key K --secret-key S
                   [--token T] --region R --date YYYYMMDDTHHMMSSZ
        recomputes each recorded request's signature with botocore (an
        independent implementation: Debian's python3-botocore) over the
        headers the request says it signed, and compares it with the one
        curl sent. Also checks the date, the credential scope, that
        x-amz-content-sha256 is the SHA-256 of the body, that the session
        token and S3 metadata headers are signed, and, as a control, that a
        wrong secret gives a different signature.
"""
import argparse
import base64
import hashlib
import http.server
import json
import os
import re
import sys

AUTH_RE = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request, "
                     r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$")


def serve(a):
    import threading
    import urllib.parse
    from xml.sax.saxutils import escape
    log = open(a.log, "a", buffering=1)
    objects = {}
    lock = threading.Lock()

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *x):
            pass

        def any(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            log.write(json.dumps({
                "method": self.command, "path": self.path,
                "headers": [[k, v] for k, v in self.headers.items()],
                "body": base64.b64encode(body).decode()}) + "\n")
            u = urllib.parse.urlsplit(self.path)
            key = urllib.parse.unquote(u.path).split("/", 2)[-1]
            with lock:
                if a.secret_key and not signed_ok(self.command, self.path,
                                                  self.headers.items(), body, a):
                    out = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>'
                           b'SignatureDoesNotMatch</Code><Message>The request signature we '
                           b'calculated does not match the signature you provided.</Message></Error>')
                    st = 403
                elif self.command == "GET" and "list-type=2" in u.query:
                    prefix = urllib.parse.parse_qs(u.query).get("prefix", [""])[0]
                    keys = sorted(k for k in objects if k.startswith(prefix))
                    out = ('<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult>'
                           + "".join("<Contents><Key>%s</Key></Contents>" % escape(k) for k in keys)
                           + "<IsTruncated>false</IsTruncated></ListBucketResult>").encode()
                    st = 200
                elif self.command == "GET":
                    out, st = (objects[key], 200) if key in objects else \
                        (b"<Error><Code>NoSuchKey</Code></Error>", 404)
                elif self.command == "DELETE":
                    objects.pop(key, None)
                    out, st = b"", 204
                else:
                    objects[key] = body
                    out, st = b"", 200
            self.send_response(st)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        do_GET = do_PUT = do_DELETE = any

    http.server.ThreadingHTTPServer.request_queue_size = 128  # many connects at once
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


def signed_ok(method, path, items, body, a):
    """serve --secret-key: does the request carry a valid signature?"""
    lower = {}
    for k, v in items:
        lower.setdefault(k.lower(), []).append(v)
    m = AUTH_RE.match(lower.get("authorization", [""])[0])
    if not m or "x-amz-date" not in lower:
        return False
    akid, _, region, signed, sig = m.groups()
    if region != a.region:
        return False
    try:
        headers = [(n, lower[n][0]) for n in signed.split(";")]
    except KeyError:
        return False
    token = lower.get("x-amz-security-token", [None])[0]
    got, _ = sign(method, path, headers, body, akid, a.secret_key, token,
                  region, lower["x-amz-date"][0])
    return got == sig


def sign(method, path, headers, body, ak, sk, token, region, date):
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    host = dict((k.lower(), v) for k, v in headers)["host"]
    req = AWSRequest(method=method, url="http://%s%s" % (host, path),
                     headers=dict(headers), data=body)
    auth = S3SigV4Auth(Credentials(ak, sk, token), "s3", region)
    req.context["timestamp"] = date
    canonical = auth.canonical_request(req)
    sts = auth.string_to_sign(req, canonical)
    return auth.signature(sts, req), canonical


def verify(a):
    checked = {"GET": 0, "PUT": 0, "LIST": 0, "DELETE": 0}
    with open(a.log) as f:
        reqs = [json.loads(line) for line in f if line.strip()]
    if not reqs:
        sys.exit("sigv4-check: no request recorded")
    for r in reqs:
        hdrs = r["headers"]
        lower = {}
        for k, v in hdrs:
            lower.setdefault(k.lower(), []).append(v)
        auth = lower.get("authorization", [""])[0]
        m = AUTH_RE.match(auth)
        if not m:
            sys.exit("sigv4-check: %s %s: bad Authorization %r" % (r["method"], r["path"], auth))
        akid, day, region, signed, sig = m.groups()
        if akid != a.access_key or day != a.date[:8] or region != a.region:
            sys.exit("sigv4-check: credential scope %s/%s/%s" % (akid, day, region))
        if set(lower["x-amz-date"]) != {a.date}:
            sys.exit("sigv4-check: x-amz-date %s, expected %s" % (lower["x-amz-date"], a.date))
        body = base64.b64decode(r["body"])
        if lower["x-amz-content-sha256"] != [hashlib.sha256(body).hexdigest()]:
            sys.exit("sigv4-check: x-amz-content-sha256 is not the body's SHA-256")
        names = signed.split(";")
        need = ["host", "x-amz-content-sha256", "x-amz-date"]
        if a.token:
            need.append("x-amz-security-token")
        if r["method"] == "PUT":
            need += ["content-type"]
        for n in need:
            if n not in names:
                sys.exit("sigv4-check: %s is not signed (%s)" % (n, signed))
        headers = [(n, lower[n][0]) for n in names]
        got, canonical = sign(r["method"], r["path"], headers, body, a.access_key,
                              a.secret_key, a.token, a.region, a.date)
        if got != sig:
            sys.exit("sigv4-check: %s %s: curl signed %s, botocore %s\ncanonical request:\n%s"
                     % (r["method"], r["path"], sig, got, canonical))
        bad, _ = sign(r["method"], r["path"], headers, body, a.access_key,
                      a.secret_key + "x", a.token, a.region, a.date)
        if bad == sig:
            sys.exit("sigv4-check: the control with a wrong secret matched")
        kind = "LIST" if "list-type=2" in r["path"] else r["method"]
        checked[kind] += 1
    for kind in ("GET", "PUT", "LIST"):
        if checked[kind] == 0:
            sys.exit("sigv4-check: no %s request was checked: %s" % (kind, checked))
    print("sigv4-check: %d signatures match botocore %s" % (len(reqs), checked))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port-file", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--secret-key")
    s.add_argument("--region", default="us-east-1")
    v = sub.add_parser("verify")
    v.add_argument("--log", required=True)
    v.add_argument("--access-key", required=True)
    v.add_argument("--secret-key", required=True)
    v.add_argument("--token")
    v.add_argument("--region", required=True)
    v.add_argument("--date", required=True)
    a = p.parse_args()
    serve(a) if a.cmd == "serve" else verify(a)


if __name__ == "__main__":
    main()
