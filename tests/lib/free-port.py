#!/usr/bin/env python3
"""free-port.py - prints a loopback TCP port that is free now, for a test
server that cannot pick its own (nginx, radosgw, linkbot preview): the
caller starts its server on it at once.

Two suites run at the same time (tests/run, TEST_JOBS): each is given its
own range of ports in LB_TEST_PORTS ("LOW-HIGH", outside the kernel's
ephemeral range, so no client connection holds them either), and a port
picked here can go to no other suite between this check and its server's
bind. Without LB_TEST_PORTS the kernel picks one (port 0)."""
import os
import random
import socket
import sys


def free(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return s.getsockname()[1]
    except OSError:
        return 0
    finally:
        s.close()


def main():
    spec = os.environ.get("LB_TEST_PORTS", "")
    if not spec:
        print(free(0))
        return 0
    low, high = (int(x) for x in spec.split("-"))
    for _ in range(200):
        port = free(random.randint(low, high))
        if port:
            print(port)
            return 0
    print("free-port.py: no free port in %s" % spec, file=sys.stderr)
    return 1


sys.exit(main())
