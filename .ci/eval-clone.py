#!/usr/bin/env python3
"""The public queries over a cloned history (ocgen clone), per query kind.

usage: eval-clone.py RECALL_BINARY CLONE_DB INDEX [QUERIES_JSON]

A clone holds ~N/37 copies of every public session (titles suffixed
" [copy k]"), so a hit on any copy of a query's target counts: a session
is mapped back to its public scenario key by its title. Rank is the
1-based position of the first relevant session among the distinct
sessions of the first 10 hits (as engine/eval counts it), needle@5 the
share of queries with a needle whose first 5 snippets show it. The index
must be synced beforehand (`recall sync --db CLONE_DB --index INDEX`);
searches run with --no-sync. The figures in docs/ranking.md ("Paraphrase
without a model") came from this script on clone-7000.
"""
import collections
import json
import os
import re
import sqlite3
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "testdata", "corpus")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    binary, db, index = sys.argv[1:4]
    qpath = sys.argv[4] if len(sys.argv) > 4 else os.path.join(CORPUS, "public-queries.json")
    man = json.load(open(os.path.join(CORPUS, "public", "manifest.json")))
    key_of = {s["id"]: s["key"] for s in man["sessions"]}
    pub = sqlite3.connect("file:" + os.path.join(CORPUS, "public", "opencode.db") + "?mode=ro", uri=True)
    rows = pub.execute("SELECT id, title, parent_id FROM session").fetchall()
    parent = {i: p for i, _, p in rows}

    def top(i):
        while parent.get(i):
            i = parent[i]
        return i

    keys_of_title = collections.defaultdict(set)
    for i, title, _ in rows:
        keys_of_title[title].add(key_of.get(top(i), top(i)))
    clone = sqlite3.connect("file:" + db + "?mode=ro", uri=True)
    cache = {}

    def keys(sid):
        if sid not in cache:
            r = clone.execute("SELECT title FROM session WHERE id = ?", (sid,)).fetchone()
            title = re.sub(r" \[copy \d+\]$", "", r[0]) if r else sid
            cache[sid] = keys_of_title.get(title, {title})
        return cache[sid]

    def norm(s):
        return " ".join(s.split())

    results = []
    for q in json.load(open(qpath))["queries"]:
        args = [binary, "search", "--db", db, "--index", index, "--json", "--limit", "10", "--no-sync", "--quiet"]
        proj = q.get("filters", {}).get("directory_project")
        if proj:
            args += ["--directory", os.path.join(man["root"], "projects", proj)]
        out = subprocess.run(args + ["--", q["q"]], capture_output=True, text=True, check=True)
        hits = json.loads(out.stdout)["hits"]
        seen, rank, needle = [], 0, False
        for i, h in enumerate(hits):
            if i < 5 and q.get("needle") and norm(q["needle"]) in norm(h["snippet"]):
                needle = True
            if h["sessionId"] in seen:
                continue
            seen.append(h["sessionId"])
            if not rank and keys(h["sessionId"]) & set(q["relevant"]):
                rank = len(seen)
        results.append((q, rank, needle))
    by = collections.defaultdict(list)
    for r in results:
        by["all"].append(r)
        for k in r[0]["kind"]:
            by[k].append(r)
    for kind in sorted(by):
        rs = by[kind]
        n = len(rs)
        mrr = sum(1 / r for _, r, _ in rs if r) / n
        r1 = sum(r == 1 for _, r, _ in rs) / n
        r5 = sum(0 < r <= 5 for _, r, _ in rs) / n
        withn = [nd for q, _, nd in rs if q.get("needle")]
        n5 = f"{sum(withn) / len(withn):.3f}" if withn else "  -  "
        print(f"{kind:12s} n={n:<3d} MRR {mrr:.3f}  R@1 {r1:.3f}  R@5 {r5:.3f}  needle@5 {n5}")
    for q, r, nd in results:
        if r != 1:
            print(f"  rank {r}  {q['id']} {q['q']!r}")


if __name__ == "__main__":
    main()
