// history_sessions paged the way a model calls it: the JSON arguments go
// through the tool's own zod schema (as OpenCode does), numbers sometimes as
// strings, and "page": 2 means the second page, never the first again.
import assert from "node:assert/strict"
import { describe, it } from "node:test"
import type { ToolContext } from "@opencode-ai/plugin/tool"
import { tool } from "@opencode-ai/plugin/tool"
import type { SessionInfo, SessionsParams, SessionsResult } from "../../src/protocol.gen.js"
import { createTools, HitMemory, type Caller } from "../../src/tools.js"

/** 23 sessions, newest first, paged by an opaque cursor like the server's. */
function fakeSessions(): { caller: Caller; calls: SessionsParams[] } {
  const all: SessionInfo[] = Array.from({ length: 23 }, (_, i) => ({
    id: `ses_${String(i + 1).padStart(2, "0")}`, title: `Session ${i + 1}`, directory: "/p", created: "2026-11-01T00:00:00Z",
    updated: "2026-11-01T00:00:00Z", messages: 2, turns: 1, toolCalls: 0, children: [], cursor: `c1:local:ses_${i + 1}.x`, source: "local", uri: "",
  }))
  const calls: SessionsParams[] = []
  const caller: Caller = {
    async request(method, params) {
      assert.equal(method, "recall/sessions")
      const p = params as SessionsParams
      calls.push(p)
      const start = p.cursor ? Number.parseInt(p.cursor.replace(/^rp1\.after-/, ""), 10) : 0
      if (!Number.isFinite(start)) throw new Error(`bad cursor ${p.cursor}`)
      const limit = p.limit ?? 20
      const page = all.slice(start, start + limit)
      const res: SessionsResult = { sessions: page }
      if (start + limit < all.length) res.next = `rp1.after-${start + limit}`
      return res as never
    },
  }
  return { caller, calls }
}

const ctx: ToolContext = {
  sessionID: "ses_live", messageID: "msg_x", agent: "build", directory: "/p", worktree: "/p",
  abort: new AbortController().signal, metadata() {}, ask: async () => {},
}

/** Calls a tool as OpenCode does: the model's JSON, parsed by the tool's schema, then execute. */
async function callAsModel(def: ReturnType<typeof tool>, json: string): Promise<string> {
  const args = tool.schema.object(def.args).parse(JSON.parse(json))
  const res = await def.execute(args as never, ctx)
  return typeof res === "string" ? res : res.output
}

function ids(out: string): string[] {
  return [...out.matchAll(/· (ses_\d+)/g)].map((m) => m[1]!)
}

describe("history_sessions paging", () => {
  it("page 2 and 3 (numbers or numeric strings) continue where page 1 ended", async () => {
    const { caller } = fakeSessions()
    const tools = createTools({ server: caller, memory: new HitMemory() })
    const p1 = ids(await callAsModel(tools.history_sessions!, `{"limit": 10}`))
    const p2 = ids(await callAsModel(tools.history_sessions!, `{"limit": 10, "page": 2}`))
    const p2s = ids(await callAsModel(tools.history_sessions!, `{"limit": "10", "page": "2"}`))
    const p3 = ids(await callAsModel(tools.history_sessions!, `{"limit": 10, "page": 3}`))
    assert.deepEqual(p1, Array.from({ length: 10 }, (_, i) => `ses_${String(i + 1).padStart(2, "0")}`))
    assert.deepEqual(p2, Array.from({ length: 10 }, (_, i) => `ses_${String(i + 11).padStart(2, "0")}`))
    assert.deepEqual(p2s, p2)
    assert.deepEqual(p3, ["ses_21", "ses_22", "ses_23"])
  })
  it("the page named at the end of a page is the one that follows", async () => {
    const { caller } = fakeSessions()
    const tools = createTools({ server: caller, memory: new HitMemory() })
    const out = await callAsModel(tools.history_sessions!, `{"limit": 10}`)
    const m = /"page": (\d+)/.exec(out)
    assert.ok(m, out)
    const next = ids(await callAsModel(tools.history_sessions!, `{"limit": 10, "page": ${m[1]}}`))
    assert.equal(next[0], "ses_11")
  })
  it("a page past the end says so", async () => {
    const { caller } = fakeSessions()
    const tools = createTools({ server: caller, memory: new HitMemory() })
    await assert.rejects(callAsModel(tools.history_sessions!, `{"limit": 10, "page": 9}`), /page 9 is past the end: there are 3 pages of 10 sessions; use page 1-3/)
  })
})
