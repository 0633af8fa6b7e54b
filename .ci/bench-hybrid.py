#!/usr/bin/env python3
"""make bench: hybrid search through the CLI, as a user runs it.

The issue's yardstick is a ~605-session history: `ocgen clone -mode sql -n
545` of the public corpus gives 646 sessions (9.8k parts). The history is
indexed and embedded once with the MiniLM-shaped random model make bench
installs (same shapes, so the same cost as real weights) and cached under
BENCH_DIR; then every public query runs as its own `recall search --mode
hybrid` process, BENCH_COUNT rounds, with a lexical run of the same query
interleaved as the floor. Prints markdown rows: wall and CPU (user+sys) per
process, p50/p95, and the peak RSS.

usage: bench-hybrid.py RECALL_BIN WORK_DIR XDG_DATA_HOME
"""
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "testdata", "corpus")
BIN, WORK, XDG = sys.argv[1:4]
COUNT = int(os.environ.get("BENCH_COUNT", "3"))
COPIES = 545


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, round(p * (len(v) - 1)))]


def main():
    env = dict(os.environ, XDG_DATA_HOME=XDG)
    db = os.path.join(WORK, f"clone-{COPIES}", "opencode.db")
    if not os.path.exists(db):
        subprocess.run([os.path.join(WORK, "ocgen"), "clone", "-mode", "sql", "-from",
                        os.path.join(CORPUS, "public"), "-out", os.path.dirname(db), "-n", str(COPIES)], check=True)
    home = os.path.join(WORK, f"hybrid-{COPIES}")
    os.makedirs(home, mode=0o700, exist_ok=True)
    idx = os.path.join(home, "index.db")
    done = os.path.join(home, "embedded")
    if not os.path.exists(done):
        print(f"== indexing and embedding the {COPIES}-copy history once (cached in {home})", file=sys.stderr, flush=True)
        start = time.perf_counter()
        subprocess.run([BIN, "sync", "--db", db, "--index", idx, "--embed", "--quiet"], env=env, check=True)
        print(f"== embedded in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        open(done, "w").close()
    with open(os.path.join(CORPUS, "public-queries.json")) as f:
        qs = [q["q"] for q in json.load(f)["queries"]]
    runs = {m: {"wall": [], "cpu": [], "rss": 0} for m in ("hybrid", "lexical")}
    for _ in range(COUNT):
        for q in qs:
            for mode, r in runs.items():
                # Each process's own rusage (wait4): RUSAGE_CHILDREN's
                # ru_maxrss is the largest of every child so far, the
                # embedding sync above included.
                out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
                start = time.perf_counter()
                p = subprocess.Popen([BIN, "search", "--db", db, "--index", idx, "--no-sync", "--quiet", "--json",
                                      "--mode", mode, q], env=env, stdout=out, stderr=err)
                _, status, ru = os.wait4(p.pid, 0)
                wall = (time.perf_counter() - start) * 1000
                p.returncode = os.waitstatus_to_exitcode(status)
                out.seek(0)
                err.seek(0)
                stdout, stderr = out.read(), err.read()
                if p.returncode != 0:
                    sys.exit(f"recall search --mode {mode} {q!r} failed: {stderr.decode()[:400]}")
                # A query with no words lists recent activity ("recent"); any
                # other mode than hybrid means the vectors were not used.
                if mode == "hybrid" and json.loads(stdout).get("mode") not in ("hybrid", "recent"):
                    sys.exit(f"recall search --mode hybrid {q!r} did not search hybrid: {stdout.decode()[:400]}")
                r["wall"].append(wall)
                r["cpu"].append((ru.ru_utime + ru.ru_stime) * 1000)
                r["rss"] = max(r["rss"], ru.ru_maxrss / 1024)
    sessions = subprocess.run(["sqlite3", db, "select count(*) from session"], capture_output=True, text=True,
                              check=True).stdout.strip()
    n = len(runs["hybrid"]["wall"])
    for mode, r in runs.items():
        target = "<= 120 ms p95" if mode == "hybrid" else ""
        print(f"| {mode} search through the CLI, {sessions} sessions, wall p50 / p95 ({n} processes) "
              f"| {pct(r['wall'], .5):.0f} / {pct(r['wall'], .95):.0f} ms | {target} |")
        print(f"| {mode} search through the CLI, CPU per process p50 / p95 "
              f"| {pct(r['cpu'], .5):.0f} / {pct(r['cpu'], .95):.0f} ms | |")
    print(f"| peak RSS, hybrid search through the CLI with the model | {runs['hybrid']['rss']:.0f} MB | <= 300 MB |")


if __name__ == "__main__":
    main()
