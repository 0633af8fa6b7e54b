// The agent's tools: history_search, history_read, history_sessions. Each
// maps its arguments onto one server request, formats the answer compactly,
// and turns failures into errors that say what to do next.

import * as path from "node:path"
import { tool, type ToolContext, type ToolDefinition } from "@opencode-ai/plugin/tool"
import { RecallError, type CallOptions } from "./client.js"
import { formatRead, formatSearch, formatSessions, readTitle } from "./format.js"
import {
  KindValues,
  ReadModeValues,
  Requests,
  SearchModeValues,
  type ReadMode,
  type ReadParams,
  type RequestParams,
  type RequestResult,
  type RequestTypes,
  type Role,
  type SearchMode,
  type SearchParams,
  type SessionInfo,
  type SessionsParams,
} from "./protocol.gen.js"

/** What the tools need from the server (RecallServer, or a fake in tests). */
export interface Caller {
  request<M extends keyof RequestTypes>(method: M, params: RequestParams<M>, call?: CallOptions): Promise<RequestResult<M>>
}

/** The roles an agent may filter on: what the user wrote, or what the assistant did (system prompts are OpenCode's, not the session's). */
export const SearchRoles = ["user", "assistant"] as const satisfies readonly Role[]

/** Hits shown by default: enough to choose from, few tokens. */
export const DefaultSearchLimit = 8
export const MaxSearchLimit = 50
export const DefaultSessionsLimit = 10
export const MaxSessionsLimit = 50
/** Sessions whose last results are remembered for {hit: N}. */
const MemorySessions = 500

export interface Anchor {
  cursor: string
  title: string
}

/**
 * The numbered results of each session's last history_search or
 * history_sessions call, so history_read {hit: N} can name one without
 * copying a cursor. Bounded: old sessions are forgotten first.
 */
export class HitMemory {
  private readonly bySession = new Map<string, { from: string; anchors: Anchor[] }>()

  remember(sessionID: string, from: string, anchors: Anchor[]): void {
    this.bySession.delete(sessionID)
    this.bySession.set(sessionID, { from, anchors })
    while (this.bySession.size > MemorySessions) {
      const oldest = this.bySession.keys().next().value
      if (oldest === undefined) break
      this.bySession.delete(oldest)
    }
  }

  /** The cursor of hit n (1-based), or an error message for the agent. */
  resolve(sessionID: string, n: number): { cursor: string } | { error: string } {
    const last = this.bySession.get(sessionID)
    if (!last) {
      return { error: `no earlier history_search or history_sessions in this session: run history_search first, then history_read {"hit": N}` }
    }
    const count = last.anchors.length
    if (count === 0) {
      return { error: `your last ${last.from} returned nothing, so there is no hit ${n}: search again with other words` }
    }
    if (!Number.isInteger(n) || n < 1 || n > count) {
      return { error: `hit ${n} does not exist: your last ${last.from} returned ${count} result${count === 1 ? "" : "s"}; use 1-${count} or pass a cursor` }
    }
    return { cursor: last.anchors[n - 1]!.cursor }
  }
}

/** A number from a number or a numeric string (models send both); undefined otherwise. */
export function toInt(v: unknown): number | undefined {
  if (typeof v === "number" && Number.isFinite(v)) return Math.trunc(v)
  if (typeof v === "string" && /^\s*-?\d+\s*$/.test(v)) return Number.parseInt(v, 10)
  return undefined
}

function clampLimit(v: unknown, def: number, max: number): number {
  const n = toInt(v)
  if (n === undefined || n < 1) return def
  return Math.min(n, max)
}

/** Empty strings and whitespace are "not given". */
function opt(v: unknown): string | undefined {
  if (typeof v !== "string") return undefined
  const t = v.trim()
  return t === "" ? undefined : t
}

/** A relative directory ("." or "src") is taken from the session's directory. */
export function resolveDirectory(dir: unknown, cwd: string | undefined): string | undefined {
  const d = opt(dir)
  if (!d) return undefined
  if (path.isAbsolute(d) || !cwd) return d
  return path.resolve(cwd, d)
}

export interface SearchArgs {
  query?: string
  limit?: number
  directory?: string
  after?: string
  before?: string
  role?: Role
  kind?: string
  tool?: string
  mode?: SearchMode
}

/** history_search arguments -> recall/search params; the current session family is excluded. */
export function searchParams(args: SearchArgs, ctx: Pick<ToolContext, "sessionID" | "directory">): SearchParams {
  const p: SearchParams = {
    query: typeof args.query === "string" ? args.query : "",
    limit: clampLimit(args.limit, DefaultSearchLimit, MaxSearchLimit),
  }
  const directory = resolveDirectory(args.directory, ctx.directory)
  if (directory) p.directory = directory
  for (const k of ["after", "before", "kind", "tool"] as const) {
    const v = opt(args[k])
    if (v) p[k] = v
  }
  // The tool's schema holds role and mode to their values; the server checks them again.
  if (args.role) p.role = args.role
  if (args.mode) p.mode = args.mode
  if (ctx.sessionID) p.excludeSession = ctx.sessionID
  return p
}

export interface SessionsArgs {
  filter?: string
  directory?: string
  after?: string
  before?: string
  limit?: number
  page?: string
}

export function sessionsParams(args: SessionsArgs, ctx: Pick<ToolContext, "directory">): SessionsParams {
  const p: SessionsParams = { limit: clampLimit(args.limit, DefaultSessionsLimit, MaxSessionsLimit) }
  const directory = resolveDirectory(args.directory, ctx.directory)
  if (directory) p.directory = directory
  for (const k of ["filter", "after", "before"] as const) {
    const v = opt(args[k])
    if (v) p[k] = v
  }
  const page = opt(args.page)
  if (page) p.cursor = page
  return p
}

/** Leaves out the given sessions (the current one and its root), their parents and their subagents. */
export function withoutFamily(sessions: SessionInfo[], family: Array<string | undefined>): { kept: SessionInfo[]; hidden: number } {
  const ids = new Set(family.filter((x): x is string => Boolean(x)))
  if (ids.size === 0) return { kept: sessions, hidden: 0 }
  const kept = sessions.filter(
    (s) => !ids.has(s.id) && !(s.parentId && ids.has(s.parentId)) && !(s.children ?? []).some((c) => ids.has(c.id)),
  )
  return { kept, hidden: sessions.length - kept.length }
}

export interface ReadArgs {
  hit?: number
  cursor?: string
  mode?: string
  limit?: number
}


/** history_read arguments -> recall/read params, or an error for the agent. */
export function readParams(args: ReadArgs, sessionID: string, memory: HitMemory): ReadParams | { error: string } {
  let cursor = opt(args.cursor)
  // "3" or "[3]" in cursor means hit 3: agents sometimes put the number there.
  const numeric = cursor && /^\[?\s*(\d+)\s*\]?$/.exec(cursor)
  let hit = toInt(args.hit)
  if (numeric) {
    hit = Number.parseInt(numeric[1]!, 10)
    cursor = undefined
  }
  if (!cursor) {
    if (hit === undefined) {
      return { error: `pass "hit" (the number of a result of your last history_search or history_sessions) or "cursor"` }
    }
    const r = memory.resolve(sessionID, hit)
    if ("error" in r) return r
    cursor = r.cursor
  }
  const p: ReadParams = { cursor, format: "chatml" }
  const mode = opt(args.mode)
  if (mode) {
    if (!(ReadModeValues as readonly string[]).includes(mode)) {
      return { error: `invalid mode "${mode}": use one of ${ReadModeValues.join(", ")}` }
    }
    p.mode = mode as ReadMode
  }
  const limit = toInt(args.limit)
  if (limit !== undefined && limit > 0) p.limit = Math.min(limit, p.mode === "full" ? 500 : 50)
  return p
}

/** A failure as the agent should read it: what happened, then what to do. */
export function describeFailure(err: unknown, toolName: string): string {
  if (!(err instanceof RecallError)) return `${toolName} failed: ${err instanceof Error ? err.message : String(err)}`
  const msg = err.message
  switch (err.kind) {
    case "unavailable":
      if (/no OpenCode database|database found|no such file/i.test(msg)) {
        return `no history found: ${msg}. Set RECALL_DB (or the plugin option "db") to OpenCode's opencode.db and tell the user; history tools cannot answer until then.`
      }
      return `history is unavailable: ${msg}. Tell the user; history tools cannot answer until this is fixed.`
    case "timeout":
      return `${toolName} ${msg}. Narrow it (more specific words, a directory, after/before, a smaller limit) or retry once.`
    case "cancelled":
      return `${toolName} was cancelled`
    case "invalid":
      if (/cursor/i.test(msg)) return `cursor is stale or invalid (${msg}): search again with history_search and read a fresh hit`
      return `invalid arguments: ${msg}`
    case "died":
      return `${msg}. The server restarts on the next call: retry once.`
    default:
      return `${toolName} failed: ${msg}`
  }
}

/**
 * Finds the top-level session of a (subagent) session, so exclusion covers
 * the whole family even before the server has indexed a just-created
 * subagent session. Cached; bounded in depth and time; falls back to the
 * session itself.
 */
export function sessionRoots(parentOf: (id: string) => Promise<string | undefined>, budgetMs = 2000): (id: string) => Promise<string> {
  const cache = new Map<string, Promise<string>>()
  const walk = async (id: string): Promise<string> => {
    let cur = id
    for (let depth = 0; depth < 8; depth++) {
      const parent = await parentOf(cur)
      if (!parent || parent === cur) return cur
      cur = parent
    }
    return cur
  }
  return (id: string) => {
    let p = cache.get(id)
    if (!p) {
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(id), budgetMs)
      })
      p = Promise.race([walk(id).catch(() => id), timeout]).finally(() => clearTimeout(timer))
      cache.set(id, p)
      if (cache.size > MemorySessions) cache.delete(cache.keys().next().value!)
    }
    return p
  }
}

export interface ToolSettings {
  server: Caller
  memory: HitMemory
  /** The top-level session of a session (default: the session itself). */
  rootOf?: (sessionID: string) => Promise<string>
}

async function run<M extends keyof RequestTypes>(
  s: ToolSettings,
  toolName: string,
  method: M,
  params: RequestParams<M>,
  ctx: ToolContext,
): Promise<RequestResult<M>> {
  try {
    return await s.server.request(method, params, { signal: ctx.abort })
  } catch (err) {
    throw new Error(describeFailure(err, toolName))
  }
}

const z = tool.schema

export const Descriptions = {
  history_search:
    "Search the user's past OpenCode sessions (prompts, answers, reasoning, tool calls and their outputs) " +
    "for earlier decisions, errors, commands and fixes. Returns numbered hits: title, time, kind, a snippet and a cursor. " +
    'Then call history_read {"hit": N} to read the conversation around a hit; quote what you use. ' +
    "The current session is left out. Use exact error codes, identifiers, file names or a few distinctive words; " +
    'an empty query lists recent activity.',
  history_read:
    "Read a window of a past session as ChatML around a history_search hit: " +
    '{"hit": N} names result N of your last history_search or history_sessions call; or pass a "cursor" ' +
    "(from a hit, a session, or the <nav> line of an earlier read: next/prev page). " +
    'mode: around (default), head or tail (start/end of the session), full (whole session, large). ' +
    'If it says the cursor is stale, search again.',
  history_sessions:
    "List past OpenCode sessions, newest first: title, time, counts, subagents, first prompt and a cursor. " +
    'filter matches titles fuzzily. Read one with history_read {"hit": N, "mode": "head"}. ' +
    "Use history_search to find content inside sessions.",
} as const

export function createTools(s: ToolSettings): Record<string, ToolDefinition> {
  const history_search = tool({
    description: Descriptions.history_search,
    args: {
      query: z.string().describe('Words, "exact phrases", -exclusions, error codes, identifiers or paths; empty lists recent activity'),
      limit: z.number().int().min(1).max(MaxSearchLimit).optional().describe(`Hits to return (default ${DefaultSearchLimit})`),
      directory: z.string().optional().describe('Only sessions under this directory ("." = the current project)'),
      after: z.string().optional().describe("Only after this time: 2026-11-01, 2d, 3h, yesterday"),
      before: z.string().optional().describe("Only before this time"),
      role: z.enum(SearchRoles).optional().describe("Only what the user wrote, or what the assistant did"),
      kind: z.string().optional().describe(`Comma list of: ${KindValues.join(", ")}`),
      tool: z.string().optional().describe("Comma list of tool names whose calls to search (bash, edit, read, ...)"),
      mode: z.enum(SearchModeValues).optional().describe("Ranking (default auto)"),
    },
    async execute(args, ctx) {
      const params = searchParams(args, ctx)
      if (params.excludeSession && s.rootOf) params.excludeSession = await s.rootOf(params.excludeSession)
      const res = await run(s, "history_search", Requests.search, params, ctx)
      const hits = res.hits ?? []
      s.memory.remember(
        ctx.sessionID,
        "history_search",
        hits.map((h) => ({ cursor: h.cursor, title: h.title })),
      )
      return {
        title: `${hits.length} hit${hits.length === 1 ? "" : "s"}: ${params.query || "recent activity"}`,
        output: formatSearch(res, { query: params.query, cwd: ctx.directory, excluded: Boolean(params.excludeSession) }),
        metadata: { hits: hits.length, mode: res.mode },
      }
    },
  })

  const history_read = tool({
    description: Descriptions.history_read,
    args: {
      hit: z.number().int().min(1).optional().describe("Result number N of your last history_search or history_sessions"),
      cursor: z.string().optional().describe("A cursor from a hit, a session, or a <nav> line (instead of hit)"),
      mode: z.enum(ReadModeValues).optional().describe("Which window (default around the hit)"),
      limit: z.number().int().min(1).max(500).optional().describe("Messages in the window (default 12, max 50; full: max 500)"),
    },
    async execute(args, ctx) {
      const params = readParams(args, ctx.sessionID, s.memory)
      if ("error" in params) throw new Error(params.error)
      const res = await run(s, "history_read", Requests.read, params, ctx)
      return {
        title: readTitle(res),
        output: formatRead(res),
        metadata: { sessionId: res.session?.id ?? "", range: res.range ?? null }, // an old server may send neither
      }
    },
  })

  const history_sessions = tool({
    description: Descriptions.history_sessions,
    args: {
      filter: z.string().optional().describe("Fuzzy match on session titles"),
      directory: z.string().optional().describe('Only sessions under this directory ("." = the current project)'),
      after: z.string().optional().describe("Only sessions active after this time: 2026-11-01, 2d, 3h, yesterday"),
      before: z.string().optional().describe("Only sessions active before this time"),
      limit: z.number().int().min(1).max(MaxSessionsLimit).optional().describe(`Sessions to list (default ${DefaultSessionsLimit})`),
      page: z.string().optional().describe("The next-page token from a previous history_sessions"),
    },
    async execute(args, ctx) {
      const params = sessionsParams(args, ctx)
      const res = await run(s, "history_sessions", Requests.sessions, params, ctx)
      const root = s.rootOf ? await s.rootOf(ctx.sessionID) : ctx.sessionID
      const { kept, hidden } = withoutFamily(res.sessions ?? [], [ctx.sessionID, root])
      s.memory.remember(
        ctx.sessionID,
        "history_sessions",
        kept.map((x) => ({ cursor: x.cursor, title: x.title })),
      )
      return {
        title: `${kept.length} session${kept.length === 1 ? "" : "s"}${params.filter ? `: ${params.filter}` : ""}`,
        output: formatSessions(res, kept, { cwd: ctx.directory, hidden }),
        metadata: { sessions: kept.length },
      }
    },
  })

  return { history_search, history_read, history_sessions }
}
