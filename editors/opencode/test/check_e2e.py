#!/usr/bin/env python3
"""Checks the history_* tool parts OpenCode recorded in the e2e run and writes
the transcript. Usage: check_e2e.py OPENCODE_DB MANIFEST TRANSCRIPT_OUT [REQUESTS_JSONL]
Prints one "ok:"/"FAIL:" line per check and "N passed, N failed" last."""
import json
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
manifest = json.load(open(sys.argv[2]))
sessions = manifest["sessions"] if isinstance(manifest, dict) else manifest
ids = {s["key"]: s["id"] for s in sessions}
PLANT, RECALL, LATER = ids["plant"], ids["recall"], ids["later"]
row = db.execute("select id from session where parent_id = ?", (RECALL,)).fetchone()
CHILD = row[0] if row else None
print(f"sessions: plant={PLANT} recall={RECALL} (subagent {CHILD}) later={LATER}")


def tool_parts(session):
    """The tool parts of a session in order: dicts with tool, status, input, output, title."""
    out = []
    rows = db.execute(
        """select p.data from part p join message m on m.id = p.message_id
           where p.session_id = ? and json_extract(p.data, '$.type') = 'tool'
           order by m.time_created, p.id""", (session or "",))
    for (data,) in rows:
        d = json.loads(data)
        st = d.get("state", {})
        out.append({"tool": d.get("tool"), "status": st.get("status"), "input": st.get("input"),
                    "output": st.get("output") if st.get("output") is not None else st.get("error", ""),
                    "title": st.get("title", "")})
    return out


def nth(session, tool, n):
    got = [p for p in tool_parts(session) if p["tool"] == tool]
    return got[n - 1] if len(got) >= n else {"tool": tool, "status": "missing", "output": "", "input": None}


passed = failed = 0


def check(ok, what, part=None):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        detail = f" -- got {part['status']}: {str(part['output'])[:400]!r}" if part else ""
        print(f"FAIL: {what}{detail}")


p = nth(RECALL, "history_search", 1)
check(p["status"] == "completed" and "Investigate nightly worker failure" in p["output"],
      "history_search finds the session that holds ERR_QUOTA_7731", p)

p = nth(RECALL, "history_read", 1)
check(p["status"] == "completed", "history_read {hit: 1} completed", p)
check("ERR_QUOTA_7731" in p["output"], "history_read output holds the fact ERR_QUOTA_7731", p)
check("shard the nightly upload by fiscal quarter" in p["output"], "history_read output holds the decision", p)
check(p["output"].startswith("<|im_start|>system") and "<nav " in p["output"], "history_read output is a ChatML window", p)

p = nth(RECALL, "history_search", 2)
check(p["status"] == "completed" and p["output"].startswith("No matches") and RECALL not in p["output"],
      "a phrase of the current session's own prompt: no hits (current session excluded)", p)

p = nth(CHILD, "history_search", 1)
check(CHILD is not None and p["status"] == "completed" and p["output"].startswith("No matches"),
      "the same search from its subagent: no hits (the whole family excluded)", p)

p = nth(RECALL, "history_sessions", 1)
check(p["status"] == "completed" and "Investigate nightly worker failure" in p["output"]
      and "Recall the worker quota error" not in p["output"],
      "history_sessions lists the earlier session and leaves out the current one", p)

p = nth(RECALL, "history_search", 3)
check(p["status"] == "completed" and "from local" in p["output"] and "from archive" in p["output"]
      and "Investigate nightly worker failure" in p["output"] and "Explain the eviction policy (v2 engine)" in p["output"],
      "with two histories configured, one search finds a fact of each and names both sources", p)

p = nth(LATER, "history_search", 1)
check(p["status"] == "completed" and "Recall the worker quota error" in p["output"],
      "a later session finds that phrase in the earlier session", p)
p = nth(LATER, "history_read", 1)
check(p["status"] == "error" and "hit 99 does not exist" in p["output"], "history_read {hit: 99}: a clear tool error", p)
p = nth(LATER, "history_read", 2)
check(p["status"] == "error" and "search again" in p["output"], "history_read with a bad cursor: a clear tool error", p)

# What the model was offered: the plugin's zod schemas (bundled zod 4.1.8)
# became JSON schema with descriptions and enums in OpenCode's request.
if len(sys.argv) > 4:
    offered = {}
    for line in open(sys.argv[4]):
        body = json.loads(line).get("body") or {}
        for t in body.get("tools") or []:
            fn = t.get("function", {})
            if fn.get("name", "").startswith("history_"):
                offered[fn["name"]] = fn
    read = offered.get("history_read", {})
    props = (read.get("parameters") or {}).get("properties", {})
    check(set(offered) == {"history_search", "history_read", "history_sessions"}
          and "Result number N" in props.get("hit", {}).get("description", "")
          and "head" in props.get("mode", {}).get("enum", [])
          and "history_search" in read.get("description", ""),
          "the model is offered the three tools with described, typed parameters")

with open(sys.argv[3], "w") as f:
    f.write("# Recall OpenCode plugin: the tool parts OpenCode 1.18.33 recorded in editors/opencode/test/run.sh\n")
    f.write("# (scripted model, real opencode, real `recall lsp`). Ids, cursors and times change with every run.\n")
    for label, sid in (("recall", RECALL), ("recall's subagent", CHILD), ("later", LATER)):
        if not sid:
            continue
        f.write(f"\n######## session {label} ({sid})\n")
        for p in tool_parts(sid):
            title = f"  [{p['title']}]" if p["title"] else ""
            f.write(f"\n==== {p['tool']} {json.dumps(p['input'])} -> {p['status']}{title}\n")
            f.write(str(p["output"]).rstrip("\n") + "\n")

print(f"checks: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
