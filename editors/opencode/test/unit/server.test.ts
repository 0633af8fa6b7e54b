// RecallServer and the tools against the REAL `recall lsp` binary (RECALL_BIN)
// over a copy of the v1 fixture history (testdata/opencode/v1/opencode.db,
// where ERR_QUOTA_7731 lives in "Investigate nightly worker failure").
import assert from "node:assert/strict"
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { after, before, describe, it } from "node:test"
import { fileURLToPath } from "node:url"
import type { ToolContext } from "@opencode-ai/plugin/tool"
import { RecallError, RecallServer, type ServerOptions } from "../../src/client.js"
import { Requests, type SyncResult } from "../../src/protocol.gen.js"
import { createTools, describeFailure, HitMemory } from "../../src/tools.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, "../../../../..")
const fixture = path.join(repo, "testdata/opencode/v1/opencode.db")
const bin = process.env.RECALL_BIN ?? ""
const skip = !bin || !existsSync(bin) ? "RECALL_BIN is not set to a built recall binary" : false
/** The planting session of ERR_QUOTA_7731 in the fixture (key L2). */
const L2 = "ses_dd7571907ffe5vPpW7vxTE77tW"

let dir = ""
let db = ""
const servers: RecallServer[] = []

function server(extra: Partial<ServerOptions> = {}): RecallServer {
  const s = new RecallServer({
    command: bin,
    initOptions: { db, index: path.join(dir, "index", `index-${servers.length}.db`) },
    ...extra,
  })
  servers.push(s)
  return s
}

function toolCtx(sessionID: string, abort = new AbortController().signal): ToolContext {
  return { sessionID, messageID: "msg_t", agent: "build", directory: "/tmp/ocgen/recall-v1/projects/ledger", worktree: "/", abort, metadata() {}, ask: async () => {} }
}

type Out = { title?: string; output: string }

function waitExit(pid: number, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms
  return new Promise((resolve) => {
    const tick = () => {
      try {
        process.kill(pid, 0)
      } catch {
        return resolve(true)
      }
      if (Date.now() > deadline) return resolve(false)
      setTimeout(tick, 20)
    }
    tick()
  })
}

describe("against the real recall lsp", { skip }, () => {
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), "recall-oc-unit-"))
    db = path.join(dir, "opencode.db")
    copyFileSync(fixture, db)
  })
  after(async () => {
    await Promise.all(servers.map((s) => s.dispose()))
    rmSync(dir, { recursive: true, force: true })
  })

  it("starts lazily; search -> read {hit} finds the planted fact", async () => {
    const s = server()
    assert.equal(s.pid, undefined, "no process before the first call")
    const tools = createTools({ server: s, memory: new HitMemory() })
    const ctx = toolCtx("ses_elsewhere")
    const found = (await tools.history_search!.execute({ query: "ERR_QUOTA_7731" }, ctx)) as Out
    assert.ok(s.pid, "started by the first call")
    assert.match(found.output, /^1 hit for "ERR_QUOTA_7731"/)
    assert.match(found.output, /\[1\] Investigate nightly worker failure · .* · bash output/)
    const read = (await tools.history_read!.execute({ hit: 1, limit: 4 }, ctx)) as Out
    assert.match(read.output, /^<\|im_start\|>system\n<session id="ses_dd7571907ffe5vPpW7vxTE77tW"/)
    assert.match(read.output, /code=ERR_QUOTA_7731/)
    assert.equal(read.title, "Investigate nightly worker failure (1-4/10)")
    const sessions = (await tools.history_sessions!.execute({ filter: "nightly worker" }, ctx)) as Out
    assert.match(sessions.output, /\[1\] Investigate nightly worker failure/)
    const head = (await tools.history_read!.execute({ hit: 1, mode: "head", limit: 2 }, ctx)) as Out
    assert.match(head.output, /range="1-2" total="10"/)
  })

  it("history_get {hit} returns the whole part with its size; history_files and history_status answer", async () => {
    const tools = createTools({ server: server(), memory: new HitMemory() })
    const ctx = toolCtx("ses_elsewhere")
    await tools.history_search!.execute({ query: "ERR_QUOTA_7731" }, ctx)
    const got = (await tools.history_get!.execute({ hit: 1 }, ctx)) as Out
    assert.match(got.output, /^part prt_\w+ of ses_dd7571907ffe5vPpW7vxTE77tW · bash call · \d+ chars · status completed\ninput: /)
    assert.match(got.output, /code=ERR_QUOTA_7731/)
    const page = (await tools.history_get!.execute({ hit: 1, length: 40 }, ctx)) as Out
    assert.match(page.output, /chars 0-40 of \d+/)
    assert.match(page.output, /\(more: history_get \{"id": "prt_\w+", "offset": 40\}; \d+ chars left\)$/)
    await assert.rejects(tools.history_get!.execute({ id: "prt_nope" }, ctx), /history_search|recall search/)
    const status = (await tools.history_status!.execute({}, ctx)) as Out
    assert.match(status.output, /^\d+ sessions, \d+ messages, \d+ parts in 1 history/)
    const files = (await tools.history_files!.execute({ path: "logs/worker.log" }, ctx)) as Out
    assert.match(files.output, /^(\d+ session|No past session)/)
  })

  it("a regex scan stopped by its budget resumes with continue: true and completes", async () => {
    const tools = createTools({ server: server(), memory: new HitMemory() })
    const ctx = toolCtx("ses_elsewhere")
    await assert.rejects(tools.history_search!.execute({ query: "x", continue: true }, ctx), /no stopped scan to continue/)
    // The hit limit stops the scan: a time budget (scanMs: 1) did not on a
    // fast machine, which read the whole fixture (171 parts) inside 1 ms.
    const first = (await tools.history_search!.execute({ query: "ERR_QUOTA_\\d+|worker", match: "regex", limit: 1 }, ctx)) as Out
    assert.match(first.output, /coverage: scanned \d+ sessions?, \d+ parts?, .*; stopped at its budget: resume with history_search \{"continue": true\}/)
    let out = first
    const seen = [first.output]
    for (let i = 0; i < 20 && !/\(all of it\)/.test(out.output); i++) {
      out = (await tools.history_search!.execute({ query: "", continue: true, limit: 50, scanMs: 5000 }, ctx)) as Out
      seen.push(out.output)
    }
    assert.match(out.output, /coverage: scanned .* \(all of it\)/)
    assert.match(seen.join("\n"), /Investigate nightly worker failure/)
    const literal = (await tools.history_search!.execute({ query: "ERR_QUOTA_77", match: "literal" }, ctx)) as Out
    assert.match(literal.output, /Investigate nightly worker failure/)
  })

  it("leaves out the session the agent runs in (and its family)", async () => {
    const tools = createTools({ server: server(), memory: new HitMemory() })
    const own = (await tools.history_search!.execute({ query: "ERR_QUOTA_7731" }, toolCtx(L2))) as Out
    assert.match(own.output, /^No matches for "ERR_QUOTA_7731"/)
    // kestrelmint lives only in L3's explore subagent: a search from L3 must not see it.
    const fromParent = (await tools.history_search!.execute({ query: "kestrelmint" }, toolCtx("ses_dd75710ceffe6gBi2uc0ZER9fC"))) as Out
    assert.match(fromParent.output, /^No matches/)
    const fromElsewhere = (await tools.history_search!.execute({ query: "kestrelmint" }, toolCtx("ses_x"))) as Out
    assert.match(fromElsewhere.output, /Audit currency handling/)
  })

  it("server errors become clear tool errors", async () => {
    const tools = createTools({ server: server(), memory: new HitMemory() })
    const ctx = toolCtx("ses_x")
    await assert.rejects(tools.history_read!.execute({ cursor: "rc1.bm90IGEgY3Vyc29y.AAAAAAAAAAAAAAAA" }, ctx), /^Error: cursor is stale or invalid .*search again/)
    await assert.rejects(tools.history_search!.execute({ query: "x", since: "not-a-date" }, ctx), /^Error: invalid arguments: .*after/)
  })

  it("a call past its budget is cancelled, and the server keeps serving", async () => {
    const s = server()
    await s.request(Requests.search, { query: "warmup" })
    const pid = s.pid
    await assert.rejects(s.request(Requests.sync, { force: true }, { timeoutMs: 1 }), (e: RecallError) => e.kind === "timeout" && /timed out after 1 ms and was cancelled/.test(e.message))
    const res = await s.request(Requests.search, { query: "ERR_QUOTA_7731" })
    assert.equal(res.hits?.length, 1)
    assert.equal(s.pid, pid, "same process")
  })

  it("an aborted tool call is cancelled at once", async () => {
    const s = server()
    await s.request(Requests.search, { query: "warmup" })
    const ac = new AbortController()
    const p = s.request(Requests.sync, { force: true }, { signal: ac.signal })
    ac.abort()
    await assert.rejects(p, (e: RecallError) => e.kind === "cancelled")
    await assert.rejects(s.request(Requests.search, { query: "x" }, { signal: ac.signal }), (e: RecallError) => e.kind === "cancelled")
    assert.equal((await s.request(Requests.search, { query: "thimbleberry" })).hits?.length, 1)
  })

  it("restarts a server that died, and fails the call in flight clearly", async () => {
    const s = server()
    await s.request(Requests.search, { query: "warmup" })
    const first = s.pid!
    process.kill(first, "SIGKILL")
    assert.ok(await waitExit(first))
    const res = await s.request(Requests.search, { query: "ERR_QUOTA_7731" })
    assert.equal(res.hits?.length, 1)
    assert.notEqual(s.pid, first)
    // killed mid-call
    const inflight = s.request(Requests.sync, { force: true })
    await new Promise((r) => setImmediate(r))
    process.kill(s.pid!, "SIGKILL")
    await assert.rejects(inflight, (e: RecallError) => e.kind === "died" && /exited|stopped responding|connection broke/.test(e.message))
    assert.match(describeFailure(new RecallError("the recall server exited (SIGKILL)", "died"), "history_search"), /retry once/)
    assert.equal((await s.request(Requests.search, { query: "kestrelmint" })).hits?.length, 1)
  })

  it("stops restarting a server that keeps dying", async () => {
    const s = server({ maxStarts: 2 })
    for (let i = 0; i < 2; i++) {
      await s.request(Requests.search, { query: "x" })
      const pid = s.pid!
      process.kill(pid, "SIGKILL")
      await waitExit(pid)
    }
    await assert.rejects(s.request(Requests.search, { query: "x" }), (e: RecallError) => e.kind === "unavailable" && /stopped 2 times .* not restarted/.test(e.message))
  })

  it("sync after session.idle only talks to a running server", async () => {
    const s = server()
    assert.equal(await s.sync(), undefined, "never starts the server")
    assert.equal(s.pid, undefined)
    await s.request(Requests.search, { query: "x" })
    const res = (await s.sync()) as SyncResult
    assert.equal(typeof res.idle, "boolean")
  })

  it("dispose shuts the server down; later calls say so", async () => {
    const s = server()
    await s.request(Requests.search, { query: "x" })
    const pid = s.pid!
    await s.dispose()
    assert.ok(await waitExit(pid, 500), "exited after shutdown/exit")
    await assert.rejects(s.request(Requests.search, { query: "x" }), /shutting down/)
  })

  it("a missing binary or history is reported with the fix", async () => {
    const missing = new RecallServer({ command: path.join(dir, "no-such-recall") })
    await assert.rejects(missing.request(Requests.search, { query: "x" }), (e: RecallError) => e.kind === "unavailable" && /RECALL_BIN/.test(e.message))
    const nodb = server({ initOptions: { db: path.join(dir, "nope", "opencode.db"), index: path.join(dir, "nodb.db") } })
    const tools = createTools({ server: nodb, memory: new HitMemory() })
    await assert.rejects(tools.history_search!.execute({ query: "x" }, toolCtx("ses_x")), /^Error: no history found: .*RECALL_DB/)
  })

  it("a server that never answers initialize is time-boxed and killed", async () => {
    const mute = path.join(dir, "mute.sh")
    writeFileSync(mute, "#!/bin/sh\nexec sleep 30\n")
    chmodSync(mute, 0o755)
    const s = new RecallServer({ command: mute, startTimeoutMs: 200 })
    const t0 = Date.now()
    await assert.rejects(s.request(Requests.search, { query: "x" }), (e: RecallError) => e.kind === "unavailable" && /did not start: initialize timed out/.test(e.message))
    assert.ok(Date.now() - t0 < 2000)
    await s.dispose()
  })
})
