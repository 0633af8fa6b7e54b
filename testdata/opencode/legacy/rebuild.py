#!/usr/bin/env python3
"""Rebuild testdata/opencode/legacy/storage from the v1 fixture's scratch root.

The legacy JSON tree (storage/project, session/<projectID>, message/<sessionID>,
part/<messageID>, todo, migration) is NOT written by opencode 1.18.33. This
script lays it out from real `opencode export <sessionID>` output of the v1
fixture (and the project list / todo list from the real binary's HTTP API).

Usage (right after `gen.sh testdata/opencode/v1/scenario.json OUT` and copying
OUT/opencode.db + manifest.json into testdata/opencode/v1, so that the scratch
root /tmp/ocgen/recall-v1 belongs to the same run):

    python3 testdata/opencode/legacy/rebuild.py [OPENCODE_BIN]
"""
import json, os, shutil, socket, subprocess, sys, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
V1 = os.path.join(HERE, "..", "v1")
BIN = sys.argv[1] if len(sys.argv) > 1 else \
    "/tmp/ocgen-cache/opencode-1.18.33/node_modules/opencode-linux-x64/bin/opencode"
KEYS = ["L1", "L2", "L3", "L4", "W2", "O1"]  # + the L3 subagent child (found via the task part)

man = json.load(open(os.path.join(V1, "manifest.json")))
root, home = man["root"], man["home"]
env = {
    "HOME": home, "XDG_CONFIG_HOME": f"{home}/.config", "XDG_DATA_HOME": f"{home}/.local/share",
    "XDG_CACHE_HOME": f"{home}/.cache", "XDG_STATE_HOME": f"{home}/.local/state",
    "PATH": os.environ["PATH"], "LANG": "C.UTF-8", "TZ": "UTC", "TERM": "dumb", "NO_COLOR": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "true", "OPENCODE_DISABLE_AUTOUPDATE": "true",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "true", "OPENCODE_DISABLE_CLAUDE_CODE": "true",
    "OPENCODE_DISABLE_SHARE": "true", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "true",
}

def export(sid, project):
    # stdout to a file: through a pipe large exports came back cut (see ocgen clone.go)
    tmp = f"/tmp/legacy-export-{sid}.json"
    with open(tmp, "wb") as f:
        subprocess.run([BIN, "export", sid], cwd=man["projects"][project], env=env,
                       stdout=f, stderr=subprocess.DEVNULL, check=True)
    s = open(tmp, encoding="utf-8").read()
    os.remove(tmp)
    return json.loads(s[s.index("{"):])

sessions = {s["key"]: s for s in man["sessions"]}
exports = []
for k in KEYS:
    d = export(sessions[k]["id"], sessions[k]["project"])
    exports.append((k, d))
    for m in d["messages"]:
        for p in m["parts"]:
            if p.get("type") == "tool" and p.get("tool") == "task":
                child = p["state"]["metadata"]["sessionId"]
                exports.append((k + ".child", export(child, sessions[k]["project"])))

# project list and L1's todo list from a short-lived `opencode serve`
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
srv = subprocess.Popen([BIN, "serve", "--hostname", "127.0.0.1", "--port", str(port)], cwd=root, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    base = f"http://127.0.0.1:{port}"
    for _ in range(60):
        try:
            projects = json.load(urllib.request.urlopen(base + "/project", timeout=5)); break
        except Exception:
            time.sleep(0.5)
    l1 = sessions["L1"]
    todo = json.load(urllib.request.urlopen(
        f"{base}/session/{l1['id']}/todo?directory={man['projects'][l1['project']]}", timeout=30))
finally:
    srv.terminate(); srv.wait()

st = os.path.join(HERE, "storage")
shutil.rmtree(st, ignore_errors=True)
def w(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False); f.write("\n")
used = set()
for k, d in exports:
    info = d["info"]; sid = info["id"]; pid = info["projectID"]; used.add(pid)
    w(f"{st}/session/{pid}/{sid}.json", info)
    for m in d["messages"]:
        w(f"{st}/message/{sid}/{m['info']['id']}.json", m["info"])
        for p in m["parts"]:
            w(f"{st}/part/{m['info']['id']}/{p['id']}.json", p)
    print(k, sid, info["title"], len(d["messages"]), "messages")
for p in projects:
    if p["id"] in used:
        w(f"{st}/project/{p['id']}.json", p)
w(f"{st}/todo/{sessions['L1']['id']}.json", todo)
open(f"{st}/migration", "w").write("2")
