// The plugin's own logic, without a server: argument mapping, hit memory,
// family exclusion, formatting, configuration and error wording.
import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { RecallError } from "../../src/client.js"
import { defaultDatabase, HookDefaults, resolveConfig } from "../../src/config.js"
import { formatRead, formatSearch, formatSessions, lagging, oneLine, shortTime } from "../../src/format.js"
import type { Hit, SearchResult, SessionInfo } from "../../src/protocol.gen.js"
import {
  describeFailure,
  HitMemory,
  pageArg,
  readParams,
  searchParams,
  sessionRoots,
  sessionsParams,
  toInt,
  withoutFamily,
} from "../../src/tools.js"

const ctx = { sessionID: "ses_current", directory: "/home/u/proj" }

function hit(n: number, extra: Partial<Hit> = {}): Hit {
  return {
    cursor: `rc1.cursor${n}`,
    source: "local",
    uri: `recall:/session/ses_${n}?source=local`,
    sessionId: `ses_${n}`,
    messageId: `msg_${n}`,
    partId: `prt_${n}`,
    title: `Session ${n}`,
    directory: "/home/u/proj",
    role: "assistant",
    kind: "output",
    tool: "bash",
    time: "2026-11-29T18:54:47.735Z",
    score: 1,
    snippet: `line one\n   line two of hit ${n}`,
    highlights: null,
    ...extra,
  }
}

/** A search result as the server sends it (every field it always writes). */
function searchResult(extra: Partial<SearchResult> = {}): SearchResult {
  return { hits: [], mode: "lexical", index: { stale: false, lagMs: 0 }, tookMs: 1, ...extra }
}

function session(id: string, extra: Partial<SessionInfo> = {}): SessionInfo {
  return {
    id,
    title: `T ${id}`,
    directory: "/d",
    created: "2026-11-29T09:00:00Z",
    updated: "2026-11-29T10:00:00Z",
    messages: 3,
    turns: 1,
    toolCalls: 1,
    children: [],
    cursor: `rc1.${id}`,
    source: "local",
    uri: `recall:/session/${id}?source=local`,
    ...extra,
  }
}

describe("searchParams", () => {
  it("maps the tool arguments and excludes the current session", () => {
    const p = searchParams({ query: "ERR_QUOTA_7731", limit: 5, since: "2d", until: "1d", role: "user", kind: "output", tool: "bash", mode: "lexical", group: "none", explain: true }, ctx)
    assert.deepEqual(p, { query: "ERR_QUOTA_7731", limit: 5, after: "2d", before: "1d", role: "user", kind: "output", tool: "bash", mode: "lexical", group: "none", explain: true, excludeSession: "ses_current" })
  })
  it('session "current" searches the live session (not excluded); another id searches that one', () => {
    assert.deepEqual(searchParams({ query: "x", session: "current" }, ctx), { query: "x", limit: 8, session: "ses_current" })
    assert.deepEqual(searchParams({ query: "x", session: " THIS " }, ctx), { query: "x", limit: 8, session: "ses_current" })
    assert.deepEqual(searchParams({ query: "x", session: "ses_other" }, ctx), { query: "x", limit: 8, session: "ses_other" })
    assert.equal(searchParams({ query: "x", session: "" }, ctx).excludeSession, "ses_current")
  })
  it("defaults and clamps the limit, coerces numeric strings, drops empty strings", () => {
    assert.equal(searchParams({ query: "x" }, ctx).limit, 8)
    assert.equal(searchParams({ query: "x", limit: 0 }, ctx).limit, 8)
    assert.equal(searchParams({ query: "x", limit: 500 }, ctx).limit, 50)
    assert.equal(searchParams({ query: "x", limit: "3" as unknown as number }, ctx).limit, 3)
    const p = searchParams({ query: "x", since: "  ", directory: "" }, ctx)
    assert.equal(p.after, undefined)
    assert.equal(p.directory, undefined)
  })
  it("resolves a relative directory against the session's directory", () => {
    assert.equal(searchParams({ query: "x", directory: "." }, ctx).directory, "/home/u/proj")
    assert.equal(searchParams({ query: "x", directory: "src" }, ctx).directory, "/home/u/proj/src")
    assert.equal(searchParams({ query: "x", directory: "/abs" }, ctx).directory, "/abs")
  })
  it("an empty query stays empty (recent activity)", () => {
    assert.equal(searchParams({}, ctx).query, "")
  })
})

describe("sessionsParams", () => {
  it("maps filter, dates, parent and limit", () => {
    assert.deepEqual(sessionsParams({ filter: "worker", until: "2026-12-01", limit: 99, parent: "current" }, ctx), {
      filter: "worker", before: "2026-12-01", limit: 50, parent: "ses_current",
    })
    assert.equal(sessionsParams({}, ctx).limit, 10)
  })
  it("pageArg: numbers, numeric strings, tokens", () => {
    assert.deepEqual(pageArg(2), { number: 2 })
    assert.deepEqual(pageArg(" 3 "), { number: 3 })
    assert.deepEqual(pageArg("rp1.x"), { token: "rp1.x" })
    assert.equal(pageArg(0), undefined)
    assert.equal(pageArg(""), undefined)
  })
})

describe("HitMemory and readParams", () => {
  it("resolves hit N to the cursor of result N of the last search in this session", () => {
    const m = new HitMemory()
    m.remember("ses_a", "history_search", [{ cursor: "c1", title: "a" }, { cursor: "c2", title: "b" }])
    assert.deepEqual(readParams({ hit: 2 }, "ses_a", m), { cursor: "c2", format: "chatml", limit: 8 })
    assert.deepEqual(readParams({ hit: "1" as unknown as number, mode: "head", limit: 80 }, "ses_a", m), { cursor: "c1", format: "chatml", mode: "head", limit: 50 })
    assert.deepEqual(readParams({ cursor: "[2]" }, "ses_a", m), { cursor: "c2", format: "chatml", limit: 8 })
    assert.deepEqual(readParams({ hit: 1, mode: "full", limit: 400 }, "ses_a", m), { cursor: "c1", format: "chatml", mode: "full", limit: 400 })
  })
  it("a cursor wins over hit", () => {
    assert.deepEqual(readParams({ cursor: " rc1.x ", hit: 3 }, "ses_a", new HitMemory()), { cursor: "rc1.x", format: "chatml", limit: 8 })
  })
  it("says what to do when the hit cannot be resolved", () => {
    const m = new HitMemory()
    const err = (r: unknown) => (r as { error: string }).error
    assert.match(err(readParams({ hit: 1 }, "ses_b", m)), /run history_search first/)
    assert.match(err(readParams({}, "ses_b", m)), /pass "hit".*"cursor", or "session"/)
    m.remember("ses_b", "history_search", [{ cursor: "c1", title: "a" }])
    assert.match(err(readParams({ hit: 4 }, "ses_b", m)), /hit 4 does not exist: your last history_search returned 1 result; use 1-1/)
    m.remember("ses_b", "history_sessions", [])
    assert.match(err(readParams({ hit: 1 }, "ses_b", m)), /last history_sessions returned nothing/)
    assert.match(err(readParams({ cursor: "c", mode: "sideways" }, "ses_b", m)), /invalid mode "sideways"/)
  })
  it('session "current" (or an id) reads that session from its start', () => {
    const m = new HitMemory()
    assert.deepEqual(readParams({ session: "current" }, "ses_a", m), { cursor: "ses_a", format: "chatml", mode: "head", limit: 8 })
    assert.deepEqual(readParams({ session: "ses_b", mode: "tail", limit: 3 }, "ses_a", m), { cursor: "ses_b", format: "chatml", mode: "tail", limit: 3 })
  })
  it("memory is per session", () => {
    const m = new HitMemory()
    m.remember("ses_a", "history_search", [{ cursor: "ca", title: "a" }])
    assert.ok("error" in readParams({ hit: 1 }, "ses_other", m))
  })
  it("toInt", () => {
    assert.equal(toInt(3.9), 3)
    assert.equal(toInt(" 7 "), 7)
    assert.equal(toInt("x"), undefined)
    assert.equal(toInt(Number.NaN), undefined)
  })
})

describe("family exclusion", () => {
  it("withoutFamily drops the session, its parent and its subagents", () => {
    const list = [
      session("ses_root", { children: [{ id: "ses_kid", source: "local", title: "k" }] }),
      session("ses_kid", { parentId: "ses_root" }),
      session("ses_other"),
    ]
    assert.deepEqual(withoutFamily(list, ["ses_kid", "ses_root"]).kept.map((s) => s.id), ["ses_other"])
    assert.deepEqual(withoutFamily(list, ["ses_root"]).kept.map((s) => s.id), ["ses_other"])
    assert.equal(withoutFamily(list, [undefined]).hidden, 0)
  })
  it("sessionRoots walks parents once, caches, and falls back to the session", async () => {
    const parents: Record<string, string | undefined> = { ses_grandkid: "ses_kid", ses_kid: "ses_root" }
    let calls = 0
    const rootOf = sessionRoots(async (id) => {
      calls++
      return parents[id]
    })
    assert.equal(await rootOf("ses_grandkid"), "ses_root")
    assert.equal(await rootOf("ses_grandkid"), "ses_root")
    assert.equal(calls, 3)
    const broken = sessionRoots(async () => {
      throw new Error("no client")
    })
    assert.equal(await broken("ses_x"), "ses_x")
    const slow = sessionRoots(() => new Promise(() => undefined), 20)
    assert.equal(await slow("ses_y"), "ses_y")
  })
})

describe("formatting", () => {
  it("names each hit's and session's source when they come from several", () => {
    const mixed = formatSearch(searchResult({ hits: [hit(1, { source: "local" }), hit(2, { source: "desktop" })] }), { query: "q", cwd: "/home/u/proj" })
    assert.match(mixed, /\[1\] Session 1 · .* · from local\n/)
    assert.match(mixed, /\[2\] Session 2 · .* · from desktop\n/)
    const one = formatSearch(searchResult({ hits: [hit(1, { source: "local" }), hit(2, { source: "local" })] }), { query: "q", cwd: "/home/u/proj" })
    assert.doesNotMatch(one, /from local/)
    const list = [session("ses_a", { source: "local" }), session("ses_b", { source: "desktop" })]
    assert.match(formatSessions({ sessions: list }, list, {}), /ses_b · from desktop/)
  })
  it("search: numbered anchors with title, time, kind, one-line snippet, cursor", () => {
    const text = formatSearch(searchResult({ hits: [hit(1), hit(2, { directory: "/elsewhere", tool: "", kind: "text", role: "user" })] }), { query: "quota", cwd: "/home/u/proj", excluded: true })
    const lines = text.split("\n")
    assert.equal(lines[0], '2 hits for "quota" (mode lexical; this session excluded). Read one with history_read {"hit": N} (or pass its cursor).')
    assert.equal(lines[2], "[1] Session 1 · 2026-11-29 18:54Z · bash output")
    assert.equal(lines[3], "    line one line two of hit 1")
    assert.equal(lines[4], "    cursor: rc1.cursor1")
    assert.ok(text.includes("[2] Session 2 · 2026-11-29 18:54Z · user text\n    dir: /elsewhere\n"))
  })
  it("search: no hits is an answer with a next step, not an error", () => {
    const text = formatSearch(searchResult({ hits: null }), { query: "nothing", excluded: true })
    assert.match(text, /^No matches for "nothing" in past sessions \(mode lexical; this session excluded\)\. Try other or fewer words/)
  })
  it("search: zero-hit suggestions in history_search's terms, never naming the live session", () => {
    const text = formatSearch(searchResult({ hits: [], suggestions: [
      { kind: "filter", filter: "excludeSession", hits: 1, text: "without excludeSession ses_live: 1 match" },
      { kind: "filter", filter: "after", hits: 3, text: "without the after bound: 3 matches" },
      { kind: "match", match: "literal", text: 'match literal "x": scan the full text (recall search --match literal)' },
      { kind: "coverage", sessions: 6, parts: 30, text: "searched the index of 6 sessions and 30 parts" },
    ] }), { query: "x", excluded: true })
    assert.doesNotMatch(text, /ses_live|recall search|--match/)
    assert.match(text, /try: 1 match in this session itself: search it with session: "current"/)
    assert.match(text, /try: without since: 3 matches/)
    assert.match(text, /try: match: "literal" scans the full text/)
    assert.match(text, /try: searched the index of 6 sessions and 30 parts/)
  })
  it("search: notices, corrections, partial results", () => {
    const text = formatSearch(searchResult({ hits: [hit(1)], notices: ["no embedding model: lexical search"], corrections: ["quota"], partial: true }), { query: "qouta" })
    assert.match(text, /note: no embedding model: lexical search/)
    assert.match(text, /note: also searched for quota/)
    assert.match(text, /results may be incomplete/)
  })
  it("search: a common-word window is said with until, not the CLI's flag", () => {
    const notice = "the words searched for are common: only the newest 4000 documents holding them were ranked by their words (back to 2022-05-16 UTC); add a rarer word, or search before 2022-05-16 (--before 2022-05-16), to reach older ones"
    const text = formatSearch(searchResult({ hits: [hit(1)], window: { ranked: 4000, from: "2022-05-16T08:30:00Z" }, notices: [notice] }), { query: "dependency" })
    assert.match(text, /only the newest 4000 documents holding them were ranked \(back to 2022-05-16\); add a rarer word, or pass until: "2022-05-16"/)
    assert.doesNotMatch(text, /--before/)
  })
  it("the lag notice appears only when the index really lags", () => {
    const now = Date.parse("2026-11-29T12:00:00Z")
    assert.equal(lagging({ stale: true, syncedAt: "2026-11-29T11:59:58Z" }, now), false)
    assert.equal(lagging({ stale: true, syncedAt: "2026-11-29T11:50:00Z" }, now), true)
    assert.equal(lagging({ stale: true }, now), true)
    assert.equal(lagging({ stale: false, busy: true }, now), true)
    assert.equal(lagging(undefined, now), false)
  })
  it("sessions: counts, subagents, first prompt, next page", () => {
    const s = session("ses_1", { firstPrompt: "fix   the\nworker", children: [{ id: "ses_k", source: "local", title: "Audit (@explore subagent)" }] })
    const text = formatSessions({ sessions: [s], next: "rp1.n" }, [s], { cwd: "/d", hidden: 1 })
    assert.match(text, /^1 session, newest first \(this session left out\)\./)
    assert.match(text, /\[1\] T ses_1 · 2026-11-29 10:00Z · 3 msgs, 1 tool call · ses_1\n    subagents: Audit \(@explore subagent\)\n    prompt: fix the worker\n    cursor: rc1.ses_1/)
    assert.match(text, /"page": 2$/)
    assert.match(formatSessions({ sessions: [] }, [], {}), /^No past sessions match/)
  })
  it("read: the window, then where the rest is", () => {
    assert.equal(formatRead({ text: "W\n", range: { first: 1, last: 3, total: 3 } }), "W\n(messages 1-3 of 3)")
    assert.match(formatRead({ text: "W", range: { first: 5, last: 8, total: 20 } }), /\(messages 5-8 of 20; page with history_read \{"cursor": <the prev or next cursor of <nav>>\}\)$/)
  })
  it("helpers", () => {
    assert.equal(shortTime("2026-11-29T18:54:47.735Z"), "2026-11-29 18:54Z")
    assert.equal(shortTime("soon"), "soon")
    assert.equal(oneLine("a  b\n c", 100), "a b c")
    assert.equal(oneLine("abcdefghij", 5), "abcd…")
  })
})

describe("config", () => {
  it("plugin options win over the environment", () => {
    const cfg = resolveConfig({ bin: "/opt/recall", db: "/d/opencode.db", index: "/i.db", timeoutMs: 5000, logFile: "/tmp/l" }, { RECALL_BIN: "/env/recall", RECALL_DB: "/env.db" })
    assert.deepEqual(cfg, { command: "/opt/recall", args: ["lsp", "--log-file", "/tmp/l"], initOptions: { db: "/d/opencode.db", index: "/i.db" }, timeoutMs: 5000, logFile: "/tmp/l", hooks: HookDefaults })
  })
  it("environment, then OpenCode's own database, never the server's demo history", () => {
    assert.deepEqual(resolveConfig(undefined, { RECALL_BIN: "/env/recall", RECALL_DB: "/env.db", RECALL_INDEX: "/ix", RECALL_TIMEOUT_MS: "900" }), {
      command: "/env/recall", args: ["lsp"], initOptions: { db: "/env.db", index: "/ix" }, timeoutMs: 900, hooks: HookDefaults,
    })
    assert.equal(resolveConfig({}, { OPENCODE_DB: "/oc.db" }).initOptions.db, "/oc.db")
    const cfg = resolveConfig({}, { XDG_DATA_HOME: "/xdg" })
    assert.equal(cfg.command, "recall")
    assert.equal(cfg.initOptions.db, "/xdg/opencode/opencode.db")
    assert.equal(defaultDatabase({ HOME: "/home/u" }), "/home/u/.local/share/opencode/opencode.db")
  })
  it("db may list several histories: paths or NAME=PATH, ~/ expanded", () => {
    const cfg = resolveConfig({ db: ["~/.local/share/opencode/opencode.db", " desktop=~/sync/desktop/opencode.db ", ""] }, { HOME: "/home/u", RECALL_DB: "/env.db" })
    assert.deepEqual(cfg.initOptions.db, ["/home/u/.local/share/opencode/opencode.db", "desktop=/home/u/sync/desktop/opencode.db"])
    assert.equal(resolveConfig({ db: [] }, { RECALL_DB: "/env.db" }).initOptions.db, "/env.db")
  })
})

describe("describeFailure", () => {
  it("tells the agent what to do next", () => {
    assert.match(describeFailure(new RecallError("bad cursor: the cursor was made by another index", "invalid", -32602), "history_read"), /^cursor is stale or invalid .*search again with history_search/)
    assert.match(describeFailure(new RecallError("invalid role: use user, assistant", "invalid", -32602), "history_search"), /^invalid arguments: invalid role/)
    assert.match(describeFailure(new RecallError("recall/search timed out after 20 s and was cancelled", "timeout"), "history_search"), /Narrow it .* or retry once/)
    assert.match(describeFailure(new RecallError("the recall server exited (SIGKILL)", "died"), "history_search"), /restarts on the next call: retry once/)
    assert.match(describeFailure(new RecallError("the recall server did not start: no OpenCode database found (tried /x)", "unavailable"), "history_search"), /^no history found: .*RECALL_DB/)
    assert.match(describeFailure(new RecallError("the recall binary was not found (recall); set RECALL_BIN", "unavailable"), "history_search"), /^history is unavailable: .*tell the user/i)
    assert.equal(describeFailure(new RecallError("cancelled", "cancelled"), "history_read"), "history_read was cancelled")
    assert.match(describeFailure(new RecallError("bad options: the cursor names a whole session; get takes a part or message: pass a search hit's cursor", "invalid", -32602), "history_get"), /^invalid arguments: .*get takes a part/)
    assert.equal(describeFailure(new Error("boom"), "history_read"), "history_read failed: boom")
  })
})
