#!/usr/bin/env python3
"""Small HTTP helpers for the Prometheus tests (loopback only, stdlib only).

  promql.py free-port             a TCP port free on 127.0.0.1 right now
  promql.py get URL               the body of URL (exit 1 on failure)
  promql.py query BASE EXPR       one line per series of an instant query:
                                  <labels as JSON, sorted keys> TAB <value>
  promql.py sample URL NAME [LABEL=VALUE...]
                                  scrapes URL (a /metrics endpoint) and prints
                                  the sum of the samples named NAME whose
                                  labels include every LABEL=VALUE given
                                  (exit 3 when none matches)
"""
import json
import re
import socket
import sys
import urllib.parse
import urllib.request


def get(url):
    with urllib.request.urlopen(url, timeout=5) as rsp:
        return rsp.read().decode("utf-8")


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def sample_sum(text, name, wanted):
    """Sum of the samples `name` whose labels include `wanted`; None if none."""
    total = None
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m or m.group(1) != name:
            continue
        labels = dict(LABEL.findall(m.group(2) or ""))
        if all(labels.get(k) == v for k, v in wanted.items()):
            total = (total or 0.0) + float(m.group(3))
    return total


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "free-port":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            print(s.getsockname()[1])
        return 0
    if cmd == "get" and len(argv) == 3:
        sys.stdout.write(get(argv[2]))
        return 0
    if cmd == "query" and len(argv) == 4:
        url = argv[2] + "/api/v1/query?" + urllib.parse.urlencode({"query": argv[3]})
        reply = json.loads(get(url))
        if reply.get("status") != "success":
            print(reply, file=sys.stderr)
            return 1
        for series in reply["data"]["result"]:
            print(json.dumps(series["metric"], sort_keys=True) + "\t" + series["value"][1])
        return 0
    if cmd == "sample" and len(argv) >= 4:
        wanted = dict(arg.split("=", 1) for arg in argv[4:])
        total = sample_sum(get(argv[2]), argv[3], wanted)
        if total is None:
            return 3
        print(int(total) if total == int(total) else total)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except OSError as e:  # connection refused, timeout: the caller retries
        print(f"promql.py: {e}", file=sys.stderr)
        sys.exit(1)
