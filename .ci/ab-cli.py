#!/usr/bin/env python3
"""Compare whole-process CLI searches across binaries or indexes, interleaved.

    .ci/ab-cli.py [-rounds N] NAME=BIN,DB,INDEX ...

Each search is a `BIN search --db DB --index INDEX --quiet --json QUERY`
process of its own, as a user runs it (its idle sync included). Every public
query goes to every arm in turn, the order rotated per query, for N rounds
(default 4); the first round warms the OS page cache and is dropped. Prints
wall p50 / p95 (ms) and the median of each process's own CPU time and peak
RSS (os.wait4), per arm.

Interleaved because this machine's speed moves by up to 2x from hour to hour
and by a third from minute to minute (docs/benchmarks.md): only arms run in
turn compare.
"""
import json, os, statistics, subprocess, sys, time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERIES = os.path.join(REPO, "testdata", "corpus", "public-queries.json")


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))]


def search(bin_, db, ix, q):
    start = time.monotonic()
    p = subprocess.Popen([bin_, "search", "--db", db, "--index", ix, "--quiet", "--json", q],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.monotonic() - start) * 1000
    err = p.stderr.read().decode()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit("%s search %r failed (%d): %s" % (bin_, q, p.returncode, err))
    return wall, (ru.ru_utime + ru.ru_stime) * 1000, ru.ru_maxrss / 1024


def interleave(arms, rounds, queries=None):
    """(wall, cpu, rss) lists per arm name, arms as (name, bin, db, index),
    every query run by every arm in turn, the first round dropped."""
    if queries is None:
        with open(QUERIES) as f:
            queries = [q["q"] for q in json.load(f)["queries"]]
    got = {name: ([], [], []) for name, *_ in arms}
    for r in range(rounds):
        for i, q in enumerate(queries):
            k = (i + r) % len(arms)
            for name, b, db, ix in arms[k:] + arms[:k]:
                wall, cpu, rss = search(b, db, ix, q)
                if r > 0:
                    for v, x in zip(got[name], (wall, cpu, rss)):
                        v.append(x)
    return got


def main(argv):
    rounds = 4
    if len(argv) > 1 and argv[0] == "-rounds":
        rounds, argv = int(argv[1]), argv[2:]
    if not argv:
        sys.exit(__doc__)
    arms = []
    for a in argv:
        name, _, spec = a.partition("=")
        parts = spec.split(",")
        if len(parts) != 3:
            sys.exit("arm %r: want NAME=BIN,DB,INDEX" % a)
        arms.append((name, *parts))
    for name, (wall, cpu, rss) in interleave(arms, rounds).items():
        print("%-12s wall p50 %6.1f p95 %6.1f ms | cpu p50 %6.1f p95 %6.1f ms | rss p50 %5.1f MB (%d searches)" % (
            name, pct(wall, .5), pct(wall, .95), pct(cpu, .5), pct(cpu, .95), statistics.median(rss), len(wall)))


if __name__ == "__main__":
    main(sys.argv[1:])
