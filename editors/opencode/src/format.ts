// Compact text for the agent: numbered anchors it can name in history_read
// ({hit: N}), one line of context each, the cursor last.

import type { Freshness, Hit, ReadResult, SearchResult, SessionInfo, SessionsResult } from "./protocol.gen.js"

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
}

export function formatSearch(res: SearchResult, view: SearchView): string {
  const hits = res.hits ?? []
  const out: string[] = []
  const what = view.query.trim() ? `"${view.query.trim()}"` : "recent activity"
  const notes = [res.mode ? `mode ${res.mode}` : "", view.excluded ? "this session excluded" : ""].filter(Boolean)
  const tail = notes.length ? ` (${notes.join("; ")})` : ""
  if (hits.length === 0) {
    out.push(
      `No matches for ${what} in past sessions${tail}. Try other or fewer words, an error code or file name, ` +
        `drop filters (after/before/directory/kind), or list sessions with history_sessions.`,
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
      out.push(`    cursor: ${h.cursor}`)
    })
  }
  for (const n of res.notices ?? []) out.push(`note: ${n}`)
  if (res.corrections?.length) out.push(`note: also searched for ${res.corrections.join(", ")}`)
  if (res.partial) out.push("note: the search stopped at its time budget; results may be incomplete")
  if (lagging(res.index)) out.push("note: the index is still catching up with the history; recent sessions may be missing, search again shortly")
  return out.join("\n")
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
    const counts = `${s.messages} msgs, ${s.toolCalls} tool calls`
    const from = several && s.source ? ` · from ${s.source}` : ""
    out.push(`[${i + 1}] ${s.title || "(untitled)"} · ${shortTime(s.updated)} · ${counts} · ${s.id}${from}`)
    if (s.directory && s.directory !== view.cwd) out.push(`    dir: ${s.directory}`)
    if (s.parentId) out.push(`    subagent session of ${s.parentId}`)
    const kids = s.children ?? []
    if (kids.length) out.push(`    subagents: ${kids.map((c) => c.title || c.id).join("; ")}`)
    if (s.firstPrompt) out.push(`    prompt: ${oneLine(s.firstPrompt, PromptChars)}`)
    out.push(`    cursor: ${s.cursor}`)
  })
  if (res.next) out.push("", `More sessions: history_sessions with "page": "${res.next}"`)
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
