#!/usr/bin/env python3
"""hostile.py - an origin that answers badly on purpose (crawl-hostile.sh).

    hostile.py --port-file FILE --mode-file FILE

A raw-socket HTTP/1.1 server on 127.0.0.1 (keep-alive, one thread a
connection), so it can send what no web server would. The mode file is
read at every request: "good" serves every page well; "bad" makes each
page /p/KIND/ misbehave as KIND says:

  empty     200 text/html, Content-Length: 0
  blank     200 text/html, a body of white space
  http09    no status line at all (HTTP/0.9), then close
  garbage   a status line that is not HTTP, then close
  shortcl   200 whose Content-Length is shorter than the body, kept alive:
            the rest of the body poisons the connection for the next page
  good      always a good page

Besides, in both modes:
  /robots.txt       600 KB: disallows /p/good3/, then (past 500 KiB) all
  /sitemap.xml      lists /p/KIND/ for every KIND above (nothing in mode
                    "empty", where everything else is good)
  /list.html        an HTML sitemap of /h/0/../h/29/ under 1000 unclosed
                    <div>s (only /h/0/ and /h/1/ in bad mode)
  /c/NAME/          pages with odd canonicals (CANON: off-site, a loop, a
                    404, one never listed); the sitemap lists them, and
                    /c/fine/ once more under http://localhost:PORT
  /x/NAME/          a gzip bomb (64 MB), a deflate bomb (64 MB), an 11 MB
                    page, a redirect loop, a chain of 30 redirects, a chain
                    of 3 that ends on a good page, invalid UTF-8 declared
                    as UTF-8, a page that drips one byte every 0.2 s
  /sitemap-self.xml a sitemap index that lists itself and
                    /sitemap-self2.xml, which lists /sitemap-self.xml back
                    and /sitemap-leaf.xml (one page, /x/selfok/)
  /sitemap-many.xml 200 pages /slow/N/ (0.3 s each) on 100 host names
                    hN.localhost (curl resolves them to 127.0.0.1)
  /__inflight       the most /slow/ requests served at once
  /__hits           "PATH COUNT" lines
Loopback only; it stops when its parent test kills it.
"""
import argparse
import gzip
import socket
import threading
import zlib
import time

KINDS = ["empty", "blank", "http09", "garbage", "shortcl", "good",
         "good2", "good3"]

# /c/NAME/ pages and their canonical URLs
CANON = {
    "offsite": "https://evil.example/c/offsite/",
    "loop-a": "/c/loop-b/",
    "loop-b": "/c/loop-a/",
    "dead": "/c/missing/",
    "fine": "/c/fine-canon/",
}

GZBOMB = gzip.compress(b"\0" * (64 << 20), 9)
DEFLATEBOMB = zlib.compress(b"\0" * (64 << 20), 9)
HUGE = b"<html><body><p>" + b"lorem ipsum " * (11 << 17) + b"</body></html>"

lock = threading.Lock()
inflight = 0
max_inflight = 0
hits = {}


def page(title, body="", head=""):
    return ("<!DOCTYPE html><html lang=en><head><title>%s</title>%s</head>"
            "<body><h1>%s</h1><p>%s words of the page about %s.</p></body>"
            "</html>" % (title, head, title, body, title)).encode()


def answer(status, body, ctype="text/html; charset=utf-8", extra=""):
    return (("HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n"
             % (status, ctype, len(body), extra)).encode() + body)


def handle(conn, origin, mode_file):
    f = conn.makefile("rb")
    try:
        while True:
            line = f.readline(8192)
            if not line:
                return
            parts = line.decode("latin-1").split()
            if len(parts) < 2:
                return
            path = parts[1]
            while True:
                h = f.readline(8192)
                if not h or h in (b"\r\n", b"\n"):
                    break
            with lock:
                hits[path] = hits.get(path, 0) + 1
            try:
                with open(mode_file) as m:
                    mode = m.read().strip()
            except OSError:
                mode = "good"
            if path == "/sitemap-many.xml":
                # 200 slow pages on 100 hosts (h0.localhost ... h99.localhost)
                locs = "".join("<url><loc>http://h%d.localhost:%s/slow/%d/</loc></url>"
                               % (i % 100, origin.rsplit(":", 1)[1], i)
                               for i in range(200))
                conn.sendall(answer("200 OK", ('<?xml version="1.0"?><urlset>%s'
                                               '</urlset>' % locs).encode(),
                                    "application/xml"))
                continue
            if path.startswith("/slow/"):
                global inflight, max_inflight
                with lock:
                    inflight += 1
                    max_inflight = max(max_inflight, inflight)
                time.sleep(0.3)
                with lock:
                    inflight -= 1
                conn.sendall(answer("200 OK", page("Slow %s" % path[6:-1])))
                continue
            if path == "/__inflight":
                conn.sendall(answer("200 OK", b"%d\n" % max_inflight, "text/plain"))
                continue
            if path == "/__hits":
                with lock:
                    body = "".join("%s %d\n" % kv for kv in sorted(hits.items()))
                conn.sendall(answer("200 OK", body.encode(), "text/plain"))
                continue
            if path == "/robots.txt":
                # over RFC 9309's 500 KiB, with a Content-Length: the
                # first 500 KiB count (it used to make the host skipped)
                body = (b"User-agent: *\nDisallow: /p/good3/\n" +
                        b"# padding\n" * 60000 + b"Disallow: /\n")
                conn.sendall(answer("200 OK", body, "text/plain"))
                continue
            if path == "/sitemap.xml":
                locs = "".join("<url><loc>%s/p/%s/</loc></url>" % (origin, k)
                               for k in KINDS)
                locs += "".join("<url><loc>%s/c/%s/</loc></url>" % (origin, k)
                                for k in CANON)
                locs += "".join("<url><loc>%s/x/%s/</loc></url>" % (origin, k)
                                for k in ("gzbomb", "huge", "loop-a", "badutf8",
                                          "deflatebomb", "chain-0", "chainok-0",
                                          "drip"))
                # another host (same server): not a host of the sources
                locs += ("<url><loc>%s/c/fine/</loc></url>"
                         % origin.replace("127.0.0.1", "localhost"))
                if mode == "empty":
                    locs = ""       # a sitemap that lists nothing
                body = ('<?xml version="1.0" encoding="UTF-8"?>'
                        '<urlset xmlns="http://www.sitemaps.org/schemas/'
                        'sitemap/0.9">%s</urlset>' % locs).encode()
                conn.sendall(answer("200 OK", body, "application/xml"))
                continue
            if path == "/list.html":
                # an HTML sitemap below a broken widget's unclosed divs;
                # in bad mode it lists 2 of its 30 pages
                n = 30 if mode != "bad" else 2
                body = ("<!DOCTYPE html><html><body>" + "<div class=w>" * 1000
                        + "".join("<li><a href=/h/%d/>%d</a>" % (i, i)
                                  for i in range(n))
                        + "</body></html>").encode()
                conn.sendall(answer("200 OK", body))
                continue
            if path in ("/sitemap-self.xml", "/sitemap-self2.xml"):
                locs = ["/sitemap-self.xml"]
                if path == "/sitemap-self2.xml":
                    locs.append("/sitemap-leaf.xml")
                else:
                    locs.append("/sitemap-self2.xml")
                body = ('<?xml version="1.0"?><sitemapindex xmlns="http://www.'
                        'sitemaps.org/schemas/sitemap/0.9">%s</sitemapindex>'
                        % "".join("<sitemap><loc>%s%s</loc></sitemap>"
                                  % (origin, l) for l in locs)).encode()
                conn.sendall(answer("200 OK", body, "application/xml"))
                continue
            if path == "/sitemap-leaf.xml":
                body = ('<?xml version="1.0"?><urlset><url><loc>%s/x/selfok/'
                        '</loc></url></urlset>' % origin).encode()
                conn.sendall(answer("200 OK", body, "application/xml"))
                continue
            if path.startswith("/x/"):
                name = path[3:].strip("/")
                if name == "drip":      # one byte every 0.2 s, for 2 minutes
                    body = page("Drip", "x" * 600)
                    conn.sendall(("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                                  "Content-Length: %d\r\n\r\n" % len(body)).encode())
                    for b in body:
                        conn.sendall(bytes([b]))
                        time.sleep(0.2)
                    return
                if name.startswith("chain-"):   # 30 hops, then a page
                    n = int(name[6:])
                    if n < 30:
                        conn.sendall(("HTTP/1.1 301 Moved\r\nLocation: /x/chain-%d/\r\n"
                                      "Content-Length: 0\r\n\r\n" % (n + 1)).encode())
                    else:
                        conn.sendall(answer("200 OK", page("Chain end")))
                    continue
                if name.startswith("chainok-"):  # 3 hops, then a good page
                    n = int(name[8:])
                    if n < 3:
                        conn.sendall(("HTTP/1.1 302 Found\r\nLocation: /x/chainok-%d/\r\n"
                                      "Content-Length: 0\r\n\r\n" % (n + 1)).encode())
                    else:
                        conn.sendall(answer("200 OK", page("Chain ok")))
                    continue
                if name == "selfok":
                    conn.sendall(answer("200 OK", page("Self ok")))
                    continue
                if name == "deflatebomb":   # 64 MB of zeros in 64 KB of zlib
                    conn.sendall(answer("200 OK", DEFLATEBOMB, extra="Content-Encoding: deflate\r\n"))
                    continue
                if name == "gzbomb":    # 64 MB of zeros in 64 KB of gzip
                    conn.sendall(answer("200 OK", GZBOMB, extra="Content-Encoding: gzip\r\n"))
                elif name == "huge":    # 11 MB of HTML, over the 10 MiB cap
                    conn.sendall(answer("200 OK", HUGE))
                elif name in ("loop-a", "loop-b"):
                    nxt = "loop-b" if name == "loop-a" else "loop-a"
                    conn.sendall(("HTTP/1.1 302 Found\r\nLocation: /x/%s/\r\n"
                                  "Content-Length: 0\r\n\r\n" % nxt).encode())
                elif name == "badutf8":  # declared UTF-8, it is not
                    conn.sendall(answer("200 OK", b"<title>Bad \xff\xfe\xc3(</title>"
                                        b"<h1>Bad \xed\xa0\x80 utf8</h1><p>text \xc0\xaf</p>"))
                else:
                    conn.sendall(answer("404 Not Found", b"gone", "text/plain"))
                continue
            if path.startswith("/c/"):
                name = path[3:].strip("/")
                if name == "fine-canon":
                    conn.sendall(answer("200 OK", page("Fine canon")))
                    continue
                if name not in CANON:
                    conn.sendall(answer("404 Not Found", b"gone", "text/plain"))
                    continue
                href = CANON[name]
                if href.startswith("/"):
                    href = origin + href
                conn.sendall(answer("200 OK", page(
                    "Canon %s" % name,
                    head='<link rel="canonical" href="%s">' % href)))
                continue
            if path.startswith("/h/"):
                conn.sendall(answer("200 OK", page("List page %s" % path[3:-1])))
                continue
            kind = path.strip("/").split("/")[-1] if path.startswith("/p/") else ""
            if kind not in KINDS:
                conn.sendall(answer("404 Not Found", b"not found", "text/plain"))
                continue
            good = page("Page %s" % kind)
            if mode != "bad" or kind.startswith("good"):
                conn.sendall(answer("200 OK", good))
            elif kind == "empty":
                conn.sendall(answer("200 OK", b""))
            elif kind == "blank":
                conn.sendall(answer("200 OK", b"  \r\n\t\n   \n"))
            elif kind == "http09":
                conn.sendall(b"<html><body>no status line</body></html>\n")
                return
            elif kind == "garbage":
                conn.sendall(b"\x00\x01GARBAGE 999 what\r\n\r\nxx")
                return
            elif kind == "shortcl":
                body = page("Page shortcl")
                tail = b"HTTPISH junk that is not a status line\r\n\r\n"
                conn.sendall(("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                              "Content-Length: %d\r\n\r\n" % len(body)).encode()
                             + body + tail)
    except (OSError, ValueError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--mode-file", required=True)
    a = ap.parse_args()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    port = s.getsockname()[1]
    origin = "http://127.0.0.1:%d" % port
    with open(a.port_file + ".tmp", "w") as f:
        f.write("%d\n" % port)
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    while True:
        c, _ = s.accept()
        threading.Thread(target=handle, args=(c, origin, a.mode_file),
                         daemon=True).start()


if __name__ == "__main__":
    main()
