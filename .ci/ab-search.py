#!/usr/bin/env python3
"""Compare search speed across indexes or binaries, interleaved query by query.

    .ci/ab-search.py [-rounds N] NAME=DB,INDEX[,TESTBIN] ...

Each arm is a process of its own (BenchmarkServeSearches of an engine test
binary: TESTBIN, default one built from this checkout) holding one engine on
DB and INDEX, opened without a sync. Every public query is sent to every arm
in turn, the order rotated per query, for N rounds (default 5); the first
round warms the page caches and is dropped. Prints p50 and p95 per arm.

Arms run in turn rather than minutes apart because this machine's speed moves
by a third from minute to minute (docs/benchmarks.md), and in processes of
their own because two engines in one process share one SQLite page-cache LRU,
which starved one of them in the only harness that tried it.
"""
import json, os, subprocess, sys, tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERIES = os.path.join(REPO, "testdata", "corpus", "public-queries.json")


def interleave(arms, rounds, queries=None):
    """Latencies (ms) per arm name, arms as (name, db, index, testbin or None),
    every query sent to every arm in turn, the first round dropped."""
    default_bin = None
    procs = []
    for name, db, ix, tbin in arms:
        if tbin is None:
            if default_bin is None:
                default_bin = os.path.join(tempfile.mkdtemp(), "engine.test")
                subprocess.run(["go", "test", "-c", "-o", default_bin, "./engine"], cwd=REPO, check=True)
            tbin = default_bin
        env = dict(os.environ, RECALL_AB_SERVE="1", RECALL_BENCH_DB=db, RECALL_BENCH_INDEX=ix)
        p = subprocess.Popen([tbin, "-test.run", "^$", "-test.bench", "^BenchmarkServeSearches$", "-test.benchtime", "1x"],
                             cwd=os.path.join(REPO, "engine"), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, bufsize=1)
        procs.append((name, p))
    if queries is None:
        queries = [q["q"].replace("\n", " ") for q in json.load(open(QUERIES))["queries"]]
    lat = {name: [] for name, _ in procs}

    def ask(name, p, q):
        p.stdin.write(q + "\n")
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                sys.exit("arm %s stopped (see its output above)" % name)
            if line.startswith("took-us "):
                return int(line.split()[1]) / 1000

    for r in range(rounds):
        for i, q in enumerate(queries):
            k = (i + r) % len(procs)
            for name, p in procs[k:] + procs[:k]:
                ms = ask(name, p, q)
                if r > 0:
                    lat[name].append(ms)
    for _, p in procs:
        p.stdin.close()
        p.wait()
    return lat


def main(argv):
    rounds = 5
    if len(argv) > 1 and argv[0] == "-rounds":
        rounds, argv = int(argv[1]), argv[2:]
    if not argv:
        sys.exit(__doc__)
    arms = []
    for a in argv:
        name, _, spec = a.partition("=")
        parts = spec.split(",")
        if len(parts) not in (2, 3):
            sys.exit("arm %r: want NAME=DB,INDEX[,TESTBIN]" % a)
        arms.append((name, parts[0], parts[1], parts[2] if len(parts) == 3 else None))
    for name, l in interleave(arms, rounds).items():
        l = sorted(l)
        print("%-12s p50 %6.1f ms  p95 %6.1f ms  (%d searches)" % (name, l[len(l) // 2], l[int(0.95 * (len(l) - 1))], len(l)))


if __name__ == "__main__":
    main(sys.argv[1:])
