#!/usr/bin/env python3
"""CLI searches with and without a running daemon, interleaved.

    .ci/ab-warm.py BIN DB INDEX [ROUNDS]

Start the daemon first (an editor, or `recall lsp` held open by a client)
for DB and INDEX. Every public query runs as `BIN search --json` twice,
once as it finds the daemon and once with RECALL_NO_DAEMON=1, the order
alternating; the first round is dropped. Prints wall and CPU p50/p95 (ms).
"""
import json,os,subprocess,sys,time
REPO=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
Q=json.load(open(os.path.join(REPO,'testdata','corpus','public-queries.json')))
qs=[q['q'] for q in Q['queries']]
B,db,ix=sys.argv[1:4]; rounds=int(sys.argv[4]) if len(sys.argv)>4 else 3
arms={'warm':dict(os.environ),'cold':dict(os.environ,RECALL_NO_DAEMON='1')}
res={k:[] for k in arms}; cpu={k:[] for k in arms}
for r in range(rounds+1):
    for i,q in enumerate(qs):
        names=list(arms); names=names[i%2:]+names[:i%2]
        for n in names:
            s=time.monotonic(); p=subprocess.Popen([B,'search','--db',db,'--index',ix,'--quiet','--json',q],stdout=subprocess.DEVNULL,stderr=subprocess.PIPE,env=arms[n]); _,st,ru=os.wait4(p.pid,0); w=(time.monotonic()-s)*1000
            if st!=0: print(n,'fail',q,p.stderr.read()); 
            if r>0: res[n].append(w); cpu[n].append((ru.ru_utime+ru.ru_stime)*1000)
def pct(v,p): v=sorted(v); return v[min(len(v)-1,int(len(v)*p))]
for n in arms: print('%-5s wall p50 %.1f p95 %.1f | cpu p50 %.1f p95 %.1f (%d)'%(n,pct(res[n],.5),pct(res[n],.95),pct(cpu[n],.5),pct(cpu[n],.95),len(res[n])))
