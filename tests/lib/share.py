#!/usr/bin/env python3
"""share.py - the client share of `linkbot run --clients I/N`, in Python.

The twin of src/pipeline/share.c (jump consistent hash of the FNV-1a 64 of
the client id), written from the paper and not from the C, so that the two
hold each other: tests/data/share/vectors.json is made by this script and
read by tests/unit/test_share.c; the integration test clients-split.sh uses
it to predict which job takes which client.

    tests/lib/share.py N ID...          prints "ID SHARE" per id
    tests/lib/share.py --vectors        prints the vectors file
"""
import json
import sys

M64 = (1 << 64) - 1


def fnv1a64(s):
    h = 1469598103934665603
    for b in s.encode():
        h = ((h ^ b) * 1099511628211) & M64
    return h


def jump(key, n):
    b, j = -1, 0
    while j < n:
        b = j
        key = (key * 2862933555777941757 + 1) & M64
        j = int(float(b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


def share(client_id, n):
    return 0 if n <= 1 else jump(fnv1a64(client_id), n)


def vectors():
    ids = ["a", "b", "t", "acme", "demo", "client-0", "client_1", "zz-top",
           "x" * 64] + ["site-%d" % i for i in range(40)]
    out = []
    for cid in ids:
        for n in (1, 2, 3, 4, 7, 10, 100, 100000):
            out.append({"id": cid, "n": n, "share": share(cid, n)})
    return {"comment": "share(id, n) of linkbot run --clients I/N; made by "
                       "tests/lib/share.py --vectors (docs/scaling.md)",
            "vectors": out}


if __name__ == "__main__":
    if sys.argv[1:] == ["--vectors"]:
        v = vectors()
        print('{"comment": %s,\n "vectors": [' % json.dumps(v["comment"]))
        print(",\n".join("  " + json.dumps(x) for x in v["vectors"]))
        print(" ]}")
    elif len(sys.argv) >= 3:
        n = int(sys.argv[1])
        for cid in sys.argv[2:]:
            print(cid, share(cid, n))
    else:
        sys.exit(__doc__)
