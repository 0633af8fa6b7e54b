// Compact text for the agent: numbered anchors it can name in history_read
// ({hit: N}), one line of context each, the cursor last.

import type { FileSessionsResult, Freshness, GetResult, Hit, Suggestion, ReadResult, SearchResult, SessionInfo, SessionsResult, Status } from "./protocol.gen.js"

/** Snippets are one line of at most this many characters: enough to judge a hit, cheap in tokens. */
export const SnippetChars = 220
/** First prompts in session lists. */
export const PromptChars = 160

/** "2026-11-29T18:54:47.735Z" -> "2026-11-29 18:54Z"; anything else as is. */
export function shortTime(t: string | undefined): string {
  if (!t) return ""
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(t)
  return m ? `${m[1]} ${m[2]}Z` : t
}

/** Collapses whitespace to one line and clips it. */
export function oneLine(s: string | undefined, max: number): string {
  const flat = (s ?? "").replace(/\s+/g, " ").trim()
  if (flat.length <= max) return flat
  return flat.slice(0, max - 1).trimEnd() + "…"
}

/** "bash output", "reasoning", "user text", ... */
export function hitLabel(h: Hit): string {
  const kind = h.kind || "text"
  if (h.tool) return `${h.tool} ${kind === "tool" ? "call" : kind}`
  if (kind === "text" && h.role) return `${h.role} text`
  return kind
}

export interface SearchView {
  query: string
  /** The directory the agent is working in: other directories are spelled out. */
  cwd?: string
  excluded?: boolean
  /** The search ran in the live session ("current"). */
  current?: boolean
  explain?: boolean
}

export function formatSearch(res: SearchResult, view: SearchView): string {
  const hits = res.hits ?? []
  const out: string[] = []
  const what = view.query.trim() ? `"${view.query.trim()}"` : "recent activity"
  const notes = [res.mode ? `mode ${res.mode}` : "", view.excluded ? "this session excluded" : "", view.current ? "this session only" : ""].filter(Boolean)
  const tail = notes.length ? ` (${notes.join("; ")})` : ""
  if (hits.length === 0) {
    out.push(
      `No matches for ${what} in ${view.current ? "this session" : "past sessions"}${tail}` +
        (res.coverage && !res.coverage.complete
          ? " so far."
          : res.suggestions?.length
            ? "."
            : `. Try other or fewer words, an error code or file name, drop filters (since/until/directory/kind), or list sessions with history_sessions.`),
    )
  } else {
    out.push(
      `${hits.length} hit${hits.length === 1 ? "" : "s"} for ${what}${tail}. ` +
        `Read one with history_read {"hit": N} (or pass its cursor).`,
    )
    const several = new Set(hits.map((h) => h.source)).size > 1
    hits.forEach((h, i) => {
      out.push("")
      const from = several && h.source ? ` · from ${h.source}` : ""
      out.push(`[${i + 1}] ${h.title || "(untitled)"} · ${shortTime(h.time)} · ${hitLabel(h)}${from}`)
      if (h.directory && h.directory !== view.cwd) out.push(`    dir: ${h.directory}`)
      out.push(`    ${oneLine(h.snippet, SnippetChars)}`)
      if (view.explain && h.explain) out.push(`    why: ${explainLine(h)}`)
      out.push(`    cursor: ${h.cursor}`)
    })
  }
  for (const g of res.suggestions ?? []) out.push(`try: ${suggestionLine(g)}`)
  const cov = res.coverage
  if (cov) {
    const scanned = `scanned ${count(cov.sessions, "session")}, ${count(cov.parts, "part")}, ${formatBytes(cov.bytes)}`
    out.push(cov.complete ? `coverage: ${scanned} (all of it)` : `coverage: ${scanned}; stopped at its budget: resume with history_search {"continue": true}`)
  }
  // A common-word match ranked over its newest documents, said in history_search's terms.
  const win = res.window
  if (win) {
    const day = win.from.slice(0, 10)
    out.push(`note: the words are common: only the newest ${win.ranked} documents holding them were ranked (back to ${day}); add a rarer word, or pass until: "${day}" for older ones`)
  }
  // A notice that repeats the coverage line (the scan stopped, pass continue)
  // or the window's (which names CLI flags) is left out.
  const repeats = (n: string) => (cov && /pass continue|--continue/.test(n)) || (win && /--before /.test(n))
  for (const n of res.notices ?? []) if (!repeats(n)) out.push(`note: ${n}`)
  if (res.corrections?.length) out.push(`note: also searched for ${res.corrections.join(", ")}`)
  if (res.partial) out.push("note: the search stopped at its time budget; results may be incomplete")
  if (lagging(res.index)) out.push("note: the index is still catching up with the history; recent sessions may be missing, search again shortly")
  return out.join("\n")
}

/** The server's filter names as history_search calls them. */
const filterArgs: Record<string, string> = { after: "since", before: "until" }

/**
 * One zero-hit suggestion as the agent reads it: in history_search's own
 * terms (the server's text names CLI flags and the excluded session's id).
 */
export function suggestionLine(g: Suggestion): string {
  const n = g.hits ?? 0
  const matches = `${n >= 1 ? n : "some"} match${n === 1 ? "" : "es"}`
  if (g.kind === "filter" && g.filter === "excludeSession") return `${matches} in this session itself: search it with session: "current"`
  if (g.kind === "filter" && g.filter) return `without ${filterArgs[g.filter] ?? g.filter}: ${matches}`
  if (g.kind === "match" && g.match) return `match: "${g.match}" scans the full text, tool outputs whole, for the exact characters`
  return g.text.replace(/\s*\((?:recall |--)[^)]*\)/g, "")
}

function formatBytes(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} B`
}

/** n and the word, plural unless n is 1 ("1 tool call", "2 tool calls"). */
export function count(n: number, word: string, plural = word + "s"): string {
  return `${n} ${n === 1 ? word : plural}`
}

/** One line of a hit's score breakdown. */
export function explainLine(h: Hit): string {
  const e = h.explain!
  const parts = [`bm25 ${e.bm25.toFixed(2)}`, e.match ? `match ${e.match}` : ""]
  if (e.matched?.length) parts.push(`terms ${e.matched.join(" ")}`)
  if (e.vector !== undefined) parts.push(`vector ${e.vector.toFixed(2)}`)
  if (e.lexicalRank) parts.push(`lexical #${e.lexicalRank}`)
  if (e.semanticRank) parts.push(`semantic #${e.semanticRank}`)
  return parts.filter(Boolean).join(", ")
}

/**
 * The index lags noticeably. `stale` alone means "the history changed since
 * the last sync", which is always true while the current session writes; the
 * server's watcher syncs every second or so, so only a sync older than
 * LagNoticeMs (or one still missing, or another process holding the index)
 * is worth a word to the agent.
 */
export const LagNoticeMs = 60_000

export function lagging(index: Pick<Freshness, "busy" | "stale" | "syncedAt"> | undefined, now = Date.now()): boolean {
  if (!index) return false
  if (index.busy) return true
  if (!index.stale) return false
  const synced = index.syncedAt ? Date.parse(index.syncedAt) : Number.NaN
  return !Number.isFinite(synced) || now - synced > LagNoticeMs
}

export interface SessionsView {
  cwd?: string
  /** How many sessions of the current family were left out. */
  hidden?: number
  /** The page shown (1-based; 0 = reached by a token). */
  page?: number
}

export function formatSessions(res: SessionsResult, sessions: SessionInfo[], view: SessionsView): string {
  const out: string[] = []
  const hidden = view.hidden ? ` (this session left out)` : ""
  if (sessions.length === 0) {
    out.push(`No past sessions match${hidden}. Drop the filter or widen after/before.`)
    return out.join("\n")
  }
  out.push(
    `${sessions.length} session${sessions.length === 1 ? "" : "s"}, newest first${hidden}. ` +
      `Read one with history_read {"hit": N, "mode": "head"} (or "tail", or pass its cursor).`,
  )
  const several = new Set(sessions.map((s) => s.source)).size > 1
  sessions.forEach((s, i) => {
    out.push("")
    const counts = `${count(s.messages, "msg")}, ${count(s.toolCalls, "tool call")}`
    const from = several && s.source ? ` · from ${s.source}` : ""
    out.push(`[${i + 1}] ${s.title || "(untitled)"} · ${shortTime(s.updated)} · ${counts} · ${s.id}${from}`)
    if (s.directory && s.directory !== view.cwd) out.push(`    dir: ${s.directory}`)
    if (s.parentId) out.push(`    subagent session of ${s.parentId}`)
    const kids = s.children ?? []
    if (kids.length) out.push(`    subagents: ${kids.map((c) => c.title || c.id).join("; ")}`)
    if (s.firstPrompt) out.push(`    prompt: ${oneLine(s.firstPrompt, PromptChars)}`)
    out.push(`    cursor: ${s.cursor}`)
  })
  if (res.next) {
    const page = view.page ?? 1
    out.push("", page > 0 ? `More sessions: history_sessions with the same arguments and "page": ${page + 1}` : `More sessions: history_sessions with "page": "${res.next}"`)
  }
  return out.join("\n")
}

function sessionLines(out: string[], sessions: SessionInfo[], cwd: string | undefined): void {
  const several = new Set(sessions.map((s) => s.source)).size > 1
  sessions.forEach((s, i) => {
    out.push("")
    const from = several && s.source ? ` · from ${s.source}` : ""
    out.push(`[${i + 1}] ${s.title || "(untitled)"} · ${shortTime(s.updated)} · ${count(s.messages, "msg")}, ${count(s.toolCalls, "tool call")} · ${s.id}${from}`)
    if (s.directory && s.directory !== cwd) out.push(`    dir: ${s.directory}`)
    out.push(`    cursor: ${s.cursor}`)
  })
}

/** history_files: the sessions that touched a file. */
export function formatFiles(res: FileSessionsResult, sessions: SessionInfo[], view: SessionsView): string {
  const out: string[] = []
  const hidden = view.hidden ? " (this session left out)" : ""
  if (sessions.length === 0) {
    out.push(`No past session read or edited ${res.path}${hidden}. Check the path, or search for its name with history_search.`)
    return out.join("\n")
  }
  const more = res.total > sessions.length + (view.hidden ?? 0) ? ` of ${res.total}` : ""
  out.push(`${sessions.length}${more} session${sessions.length === 1 ? "" : "s"} touched ${res.path}, newest first${hidden}. Read one with history_read {"hit": N}.`)
  sessionLines(out, sessions, view.cwd)
  return out.join("\n")
}

/** history_status: what history is read and how fresh the index is. */
export function formatStatus(st: Status): string {
  const out: string[] = []
  const sources = st.sources?.length ? st.sources : [{ name: st.source, path: "", sessions: st.sessions, parts: st.parts, freshness: st.freshness, demo: st.demo }]
  out.push(`${count(st.sessions, "session")}, ${count(st.messages, "message")}, ${count(st.parts, "part")} in ${count(sources.length, "history", "histories")}; index ${Math.round(st.indexBytes / 1024)} KiB, schema ${st.schemaVersion}.`)
  for (const s of sources) {
    const f = s.freshness
    const fresh = f?.busy ? "syncing" : f?.stale ? `stale (synced ${shortTime(f.syncedAt) || "never"})` : `fresh (synced ${shortTime(f?.syncedAt)})`
    const err = "error" in s && s.error ? ` · error: ${s.error}` : ""
    out.push(`- ${s.name}${s.demo ? " (demo history)" : ""}: ${count(s.sessions, "session")}, ${count(s.parts, "part")}, ${fresh}${s.path ? ` · ${s.path}` : ""}${err}`)
  }
  const sem = st.semantic
  out.push(sem?.installed ? `semantic search: ${sem.model ?? "model"}, ${sem.embedded}/${sem.total} embedded${sem.notice ? ` (${sem.notice})` : ""}` : `semantic search: off${sem?.notice ? ` (${sem.notice})` : " (no model installed; lexical search works)"}`)
  return out.join("\n")
}

/** The read window as the server renders it, plus one line on paging. */
export function formatRead(res: Pick<ReadResult, "text" | "range">): string {
  const r = res.range
  const lines = [res.text.trimEnd()]
  if (r && r.total > 0) {
    const more: string[] = []
    if (r.first > 1) more.push("prev")
    if (r.last < r.total) more.push("next")
    const how = more.length ? `; page with history_read {"cursor": <the ${more.join(" or ")} cursor of <nav>>}` : ""
    lines.push(`(messages ${r.first}-${r.last} of ${r.total}${how})`)
  }
  return lines.join("\n")
}

/** A short title for the tool part OpenCode shows. */
export function readTitle(res: Pick<ReadResult, "session" | "range">): string {
  const r = res.range
  const title = res.session?.title || res.session?.id || "session"
  return r ? `${title} (${r.first}-${r.last}/${r.total})` : title
}

/**
 * history_get: one line saying what it is and how big, the input of a tool
 * call, then the page of text, then how to get the next page.
 */
export function formatGet(res: GetResult, id: string): string {
  const what = res.partId ? `part ${res.partId}` : `message ${res.messageId}`
  const kind = res.tool ? `${res.tool} ${res.kind === "tool" ? "call" : res.kind}` : `${res.role} ${res.kind}`
  const end = res.offset + res.length
  const size = res.offset === 0 && res.nextOffset === null ? `${res.originalChars} chars` : `chars ${res.offset}-${end} of ${res.originalChars}`
  const flags = [res.status ? `status ${res.status}` : "", res.pruned ? "output pruned by OpenCode's compaction" : "", res.redacted ? "secrets redacted" : ""].filter(Boolean)
  const out = [`${what} of ${res.sessionId} · ${kind} · ${size}${flags.length ? ` · ${flags.join(" · ")}` : ""}`]
  if (res.input) out.push(`input: ${oneLine(res.input, InputChars)}`)
  if (res.pruned && !res.text) out.push("(the output is gone from OpenCode's history: it was pruned when the session was compacted)")
  else out.push(res.text)
  if (res.nextOffset !== null && res.nextOffset !== undefined) {
    out.push(`(more: history_get {"id": "${res.partId ?? id}", "offset": ${res.nextOffset}}; ${res.originalChars - res.nextOffset} chars left)`)
  }
  return out.join("\n")
}

/** A tool call's input shown by history_get: one line (commands, paths, patterns). */
export const InputChars = 600
