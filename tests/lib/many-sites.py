#!/usr/bin/env python3
"""many-sites.py - a night of many small sites on loopback virtual hosts.

    many-sites.py DIR SITES PAGES [--ppm N] [--fail NAME] [--jobs N] [--mix]

writes, for sites s0001 .. sSITES (host s0001.localhost, ...):
  DIR/htdocs/<host>/robots.txt, sitemap.xml, blog/post-I/index.html
      (PAGES pages of varied text: each site has topics, each page
      sentences from one or two of them, seeded: the same every time)
  DIR/site.conf    the nginx include for tests/lib/origin.sh: root by $host,
                   hosts logged to logs/hosts.log (HOST MSEC REQUEST ...)
  DIR/clients.yaml the clients: part of a linkbot config, one client a
                   site with one standard endpoint blog -> blog; sources
                   name http://<host>:__PORT__/sitemap.xml (origin.sh's
                   token: sed it, or let origin_start replace it)
--fail NAME adds a client NAME whose host serves nothing (404 sitemap).
--mix gives the sites different sizes, as a night of real clients has:
s0001 has PAGES pages, each other site 10 * (PAGES / 10) ** u pages for a
u uniform in [0, 1) drawn from its name (log-uniform from 10 to PAGES; the
mean is about PAGES / ln(PAGES / 10)); without it every site has PAGES.

    many-sites.py config DIR CLIENTS_YAML PORT PPM [CRAWL_LINE...]

writes DIR/linkbot.yaml: store DIR/public, state DIR/state, crawl at PPM
pages a minute (loopback allowed, more crawl: lines as given) and the
clients of CLIENTS_YAML (a part written above, or cut from one) on PORT.
Used by tests/integration/run-night.sh and bench/night.sh.
"""
import os
import random
import sys

TOPICS = {
    "databases": "index query table row column transaction replica shard "
                 "schema join vacuum backup restore postgres sqlite lock",
    "gardening": "soil compost seed tomato pruning mulch watering rose bed "
                 "greenhouse frost harvest weeds roots bulbs orchard",
    "cooking": "recipe oven dough bread sauce garlic onion simmer roast "
               "knife pan butter flour spice stock braise",
    "cycling": "bike chain saddle tyre gear climb descent cadence helmet "
               "route brake frame wheel puncture sprint",
    "finance": "budget savings loan interest mortgage pension tax invoice "
               "portfolio dividend inflation credit rent account",
    "travel": "flight hotel passport luggage train museum beach island "
              "itinerary visa hostel ferry mountain map",
    "photography": "lens aperture shutter exposure portrait tripod light "
                   "sensor focus raw zoom landscape flash iso",
    "parenting": "toddler sleep school homework toys bedtime lunchbox "
                 "tantrum reading playground nursery teen screen",
}
COMMON = ("the a of and to in is that for it with as on was this are be by "
          "at you we can more how why when our your what about from").split()


def sentence(rng, words):
    n = rng.randint(8, 16)
    out = [rng.choice(words) if rng.random() < 0.45 else rng.choice(COMMON)
           for _ in range(n)]
    return " ".join(out).capitalize() + "."


def page(rng, site, i, topics):
    main = rng.choice(topics)
    other = rng.choice(topics)
    words = TOPICS[main].split() * 3 + TOPICS[other].split()
    title = "%s %s: %s and %s" % (site, i, rng.choice(TOPICS[main].split()),
                                  rng.choice(TOPICS[other].split()))
    paras = []
    for _ in range(rng.randint(3, 6)):
        paras.append("<p>%s</p>" % " ".join(sentence(rng, words)
                                             for _ in range(rng.randint(3, 6))))
    return ('<!DOCTYPE html><html lang="en"><head><title>%s</title>'
            '<meta name="description" content="About %s."></head><body>'
            '<h1>%s</h1>%s</body></html>\n' % (title, main, title,
                                               "".join(paras)))


def site_pages(name, pages):
    """A mixed night's size of site NAME (--mix): log-uniform, 10..PAGES."""
    if pages <= 10:
        return pages
    u = random.Random("size " + name).random()
    return max(10, min(pages, round(10 * (pages / 10) ** u)))


def config(args):
    out, clients, port, ppm = args[:4]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "linkbot.yaml"), "w") as f:
        f.write("store: %s/public\nstate: %s/state\ncrawl:\n"
                "  allow_private: true\n  pages_per_minute: %s\n"
                % (out, out, ppm))
        for line in args[4:]:
            f.write("  %s\n" % line)
        f.write(open(clients).read().replace("__PORT__", port))


def main():
    args = sys.argv[1:]
    if args[:1] == ["config"]:
        if len(args) < 5:
            sys.exit(__doc__)
        return config(args[1:])
    mix = "--mix" in args
    if mix:
        args.remove("--mix")
    opts = {"--ppm": None, "--fail": None}
    for k in list(opts):
        if k in args:
            j = args.index(k)
            opts[k] = args[j + 1]
            del args[j:j + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    out, sites, pages = args[0], int(args[1]), int(args[2])
    names = ["s%04d" % k for k in range(1, sites + 1)]
    for name in names:
        host = name + ".localhost"
        rng = random.Random(name)
        topics = rng.sample(sorted(TOPICS), 3)
        n = site_pages(name, pages) if mix and name != names[0] else pages
        root = os.path.join(out, "htdocs", host)
        os.makedirs(os.path.join(root, "blog"), exist_ok=True)
        with open(os.path.join(root, "robots.txt"), "w") as f:
            f.write("User-agent: *\nDisallow: /private/\n")
        with open(os.path.join(root, "sitemap.xml"), "w") as f:
            f.write('<?xml version="1.0" encoding="UTF-8"?>\n<urlset '
                    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')
            for i in range(1, n + 1):
                f.write("<url><loc>http://%s:__PORT__/blog/post-%d/</loc>"
                        "</url>\n" % (host, i))
            f.write("</urlset>\n")
        for i in range(1, n + 1):
            d = os.path.join(root, "blog", "post-%d" % i)
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "index.html"), "w") as f:
                f.write(page(rng, name, i, topics))
    with open(os.path.join(out, "site.conf"), "w") as f:
        f.write("access_log logs/hosts.log origin_host;\n"
                "types { text/html html; application/xml xml; "
                "text/plain txt; }\n"
                "absolute_redirect off;\n"
                "location / { root htdocs/$host; index index.html; "
                "try_files $uri $uri/ =404; }\n")
    if opts["--fail"]:
        names.append(opts["--fail"])
    with open(os.path.join(out, "clients.yaml"), "w") as f:
        f.write("clients:\n")
        for name in names:
            f.write("  - id: %s\n    sources:\n      - sitemap: "
                    "http://%s.localhost:__PORT__/sitemap.xml\n"
                    "    sets:\n      blog:\n        - \"/blog/{slug}/\"\n"
                    "    endpoints:\n      - id: blog\n        variant: "
                    "standard\n        source: blog\n        target: blog\n"
                    "        links: 4\n        min_incoming: 2\n"
                    % (name, name))


main()
