// The agent's tools: history_search, history_read, history_sessions,
// history_files, history_status (and history_get). Each maps its arguments
// onto server requests, formats the answer compactly, and turns failures
// into errors that say what to do next.

import * as path from "node:path"
import { tool, type ToolContext, type ToolDefinition } from "@opencode-ai/plugin/tool"
import { RecallError, type CallOptions } from "./client.js"
import { count, formatFiles, formatGet, formatRead, formatSearch, formatSessions, formatStatus, readTitle } from "./format.js"
import {
  AuthorValues,
  GroupValues,
  KindValues,
  MatchValues,
  ReadModeValues,
  Requests,
  SearchModeValues,
  type GetParams,
  type ReadMode,
  type ReadParams,
  type RequestParams,
  type RequestResult,
  type RequestTypes,
  type Author,
  type Group,
  type Match,
  type Role,
  type SearchMode,
  type SearchParams,
  type SessionInfo,
  type SessionsParams,
  type SessionsResult,
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
/**
 * Messages in a default read window: 8, not the server's 12. On the public
 * corpus a default window of 12 was 11.1 KB (~2.8k tokens) on average, up
 * to 15.7 KB; the hit and the few messages either side are what an agent
 * reads first, and <nav> pages on.
 */
export const DefaultReadLimit = 8
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

/** The session the agent runs in, by name: "current" (or "this"). */
export const CurrentSession = "current"

function isCurrent(v: string | undefined): boolean {
  return v !== undefined && /^(current|this)$/i.test(v)
}

export interface SearchArgs {
  query?: string
  limit?: number
  session?: string
  directory?: string
  since?: string
  until?: string
  role?: Role
  kind?: string
  tool?: string
  mode?: SearchMode
  group?: Group
  explain?: boolean
  match?: Match
  author?: Author
  continue?: boolean | string
  scanMB?: number
  scanMs?: number
}

/**
 * history_search arguments -> recall/search params. Without a session the
 * live session's family is excluded (the caller swaps in its root);
 * "current" searches the live session itself, any other id that session.
 */
export function searchParams(args: SearchArgs, ctx: Pick<ToolContext, "sessionID" | "directory">): SearchParams {
  const p: SearchParams = {
    query: typeof args.query === "string" ? args.query : "",
    limit: clampLimit(args.limit, DefaultSearchLimit, MaxSearchLimit),
  }
  const directory = resolveDirectory(args.directory, ctx.directory)
  if (directory) p.directory = directory
  const since = opt(args.since)
  if (since) p.after = since
  const until = opt(args.until)
  if (until) p.before = until
  for (const k of ["kind", "tool"] as const) {
    const v = opt(args[k])
    if (v) p[k] = v
  }
  // The tool's schema holds the enums to their values; the server checks them again.
  if (args.role) p.role = args.role
  if (args.mode) p.mode = args.mode
  if (args.group) p.group = args.group
  if (args.explain === true) p.explain = true
  if (args.match) p.match = args.match
  if (args.author) p.author = args.author
  const scanMB = toInt(args.scanMB)
  if (scanMB !== undefined && scanMB > 0) p.scanMB = scanMB
  const scanMs = toInt(args.scanMs)
  if (scanMs !== undefined && scanMs > 0) p.scanMs = scanMs
  if (typeof args.continue === "string" && !/^(true|last|yes)$/i.test(args.continue.trim()) && args.continue.trim()) p.continue = args.continue.trim()
  const session = opt(args.session)
  if (session) p.session = isCurrent(session) ? ctx.sessionID : session
  else if (ctx.sessionID) p.excludeSession = ctx.sessionID
  return p
}

export interface SessionsArgs {
  filter?: string
  directory?: string
  since?: string
  until?: string
  parent?: string
  limit?: number
  page?: number | string
}

/** recall/sessions params of one history_sessions call, without the page. */
export function sessionsParams(args: SessionsArgs, ctx: Pick<ToolContext, "directory" | "sessionID">): SessionsParams {
  const p: SessionsParams = { limit: clampLimit(args.limit, DefaultSessionsLimit, MaxSessionsLimit) }
  const directory = resolveDirectory(args.directory, ctx.directory)
  if (directory) p.directory = directory
  const filter = opt(args.filter)
  if (filter) p.filter = filter
  const since = opt(args.since)
  if (since) p.after = since
  const until = opt(args.until)
  if (until) p.before = until
  const parent = opt(args.parent)
  if (parent) p.parent = isCurrent(parent) ? ctx.sessionID : parent
  return p
}

/** The page a model asked for: a number (2, "2") or a server token (an older answer's). */
export function pageArg(v: unknown): { number: number } | { token: string } | undefined {
  const n = toInt(v)
  if (n !== undefined) return n >= 1 ? { number: n } : undefined
  const t = opt(v)
  return t ? { token: t } : undefined
}

/** Pages one may ask for by number: each costs one cheap server call to reach. */
export const MaxPage = 50

/**
 * The server's next-page tokens of recent session listings, so page N of
 * the same listing is one call when page N-1 was seen, and a walk from page
 * 1 otherwise. Keyed by the listing (its params) and bounded.
 */
export class PageTokens {
  private readonly byListing = new Map<string, string[]>()

  /** tokens[n] is the cursor of page n+1 (tokens[0] = "" for page 1). */
  get(key: string): string[] {
    let t = this.byListing.get(key)
    if (!t) {
      t = [""]
      this.byListing.set(key, t)
      while (this.byListing.size > MemorySessions) this.byListing.delete(this.byListing.keys().next().value!)
    }
    return t
  }
}

/**
 * Fetches page `page` (1-based) of a listing, following next tokens from
 * the last page known. Returns the page, or how many pages there are.
 */
export async function fetchPage(
  fetch: (cursor: string | undefined) => Promise<SessionsResult>,
  tokens: string[],
  page: number,
): Promise<{ res: SessionsResult; page: number } | { pages: number }> {
  let n = Math.min(page, tokens.length) // the highest page whose cursor is known
  for (;;) {
    const res = await fetch(tokens[n - 1] || undefined)
    if (res.next && tokens.length <= n) tokens.push(res.next)
    if (n === page) return { res, page }
    if (!res.next) return { pages: n }
    n++
  }
}

/** continue: true (or "true"/"last"): resume this session's last stopped scan. */
export function wantsLastScan(v: unknown): boolean {
  return v === true || (typeof v === "string" && /^(true|last|yes)$/i.test(v.trim()))
}

/**
 * The last literal/regex scan of each session that stopped at a budget: its
 * params and continue cursor, so {"continue": true} resumes it without the
 * model copying the cursor. Bounded like the hit memory.
 */
export class ScanMemory {
  private readonly bySession = new Map<string, SearchParams>()

  remember(sessionID: string, params: SearchParams, next: string | undefined): void {
    this.bySession.delete(sessionID)
    if (!next) return
    this.bySession.set(sessionID, { ...params, continue: next })
    while (this.bySession.size > MemorySessions) this.bySession.delete(this.bySession.keys().next().value!)
  }

  /** The params that resume the last stopped scan; budgets given now win. */
  resume(sessionID: string, now: SearchParams): SearchParams | { error: string } {
    const last = this.bySession.get(sessionID)
    if (!last) return { error: `there is no stopped scan to continue in this session: continue only follows a history_search with match literal or regex that said it stopped at its budget` }
    const p = { ...last }
    if (now.scanMB) p.scanMB = now.scanMB
    if (now.scanMs) p.scanMs = now.scanMs
    if (now.limit && now.limit !== DefaultSearchLimit) p.limit = now.limit
    return p
  }
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
  session?: string
  mode?: string
  limit?: number
}

/** history_read arguments -> recall/read params, or an error for the agent. */
export function readParams(args: ReadArgs, sessionID: string, memory: HitMemory): ReadParams | { error: string } {
  let cursor = opt(args.cursor)
  const session = opt(args.session)
  if (!cursor && session) {
    // A session by id (or the live one): its first page unless a mode says otherwise.
    cursor = isCurrent(session) ? sessionID : session
    args = { ...args, mode: opt(args.mode) ?? "head", hit: undefined }
  }
  // "3" or "[3]" in cursor means hit 3: agents sometimes put the number there.
  const numeric = cursor && /^\[?\s*(\d+)\s*\]?$/.exec(cursor)
  let hit = toInt(args.hit)
  if (numeric) {
    hit = Number.parseInt(numeric[1]!, 10)
    cursor = undefined
  }
  if (!cursor) {
    if (hit === undefined) {
      return { error: `pass "hit" (the number of a result of your last history_search or history_sessions), "cursor", or "session" ("current" = this session)` }
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
  else if (p.mode !== "full") p.limit = DefaultReadLimit
  return p
}

export interface GetArgs {
  hit?: number
  id?: string
  offset?: number
  length?: number
}

/** Page length bounds of history_get: the server's default is ~2.5k tokens; 40,000 characters is ~12k. */
export const MaxGetLength = 40_000

/** history_get arguments -> recall/get params, or an error for the agent. */
export function getParams(args: GetArgs, sessionID: string, memory: HitMemory): GetParams | { error: string } {
  let id = opt(args.id)
  const numeric = id && /^\[?\s*(\d+)\s*\]?$/.exec(id)
  let hit = toInt(args.hit)
  if (numeric) {
    hit = Number.parseInt(numeric[1]!, 10)
    id = undefined
  }
  if (!id) {
    if (hit === undefined) return { error: `pass "hit" (a result number of your last history_search) or "id" (a prt_/msg_ id or a cursor)` }
    const r = memory.resolve(sessionID, hit)
    if ("error" in r) return r
    id = r.cursor
  }
  const p: GetParams = { id }
  const offset = toInt(args.offset)
  if (offset !== undefined && offset > 0) p.offset = offset
  const length = toInt(args.length)
  if (length !== undefined && length > 0) p.length = Math.min(length, MaxGetLength)
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
      // A cursor that names the wrong thing (a session for get) is the agent's to fix as told, not stale.
      if (/cursor/i.test(msg) && !/whole session|get takes/i.test(msg)) return `cursor is stale or invalid (${msg}): search again with history_search and read a fresh hit`
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
  /** Next-page tokens of session listings (default: a fresh store). */
  pages?: PageTokens
  /** Stopped scans, for continue: true (default: a fresh store). */
  scans?: ScanMemory
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
/** A whole number the model may send as a number or a numeric string. */
const int = () => z.coerce.number().int()

export const Descriptions = {
  history_search:
    "Search the user's past OpenCode sessions (prompts, answers, reasoning, tool calls, outputs) for earlier decisions, errors, " +
    'commands and fixes. Returns numbered hits (~1 KB for 8): then history_read {"hit": N} (the conversation) or history_get ' +
    '{"hit": N} (the whole part). This session is left out unless session is "current" (finds what compaction dropped). ' +
    "Use exact error codes, identifiers, file names or distinctive words.",
  history_read:
    'Read a window of a session as ChatML (8 messages, long outputs cut; ~3 KB): {"hit": N} of your last search/list, ' +
    'a "cursor" (hit, session or <nav> next/prev), or "session" (id or "current").',
  history_get:
    'One part or message whole, as OpenCode stored it: {"hit": N} or "id" (prt_/msg_/cursor). Pages of 8,000 chars ' +
    "(~2.5k tokens); states the size and next offset, and when the output was pruned.",
  history_sessions:
    'List past sessions, newest first (10 per page): title, time, counts, subagents, first prompt. page: 2, 3, ... ' +
    'Read one with history_read {"hit": N, "mode": "head"}.',
  history_files: 'Past sessions that read, edited or patched a file, newest first. Read one with history_read {"hit": N}.',
  history_status: "What history Recall reads: sessions, parts, index freshness. Use when searches look empty or stale.",
} as const

export function createTools(s: ToolSettings): Record<string, ToolDefinition> {
  const pages = s.pages ?? new PageTokens()
  const scans = s.scans ?? new ScanMemory()
  const history_search = tool({
    description: Descriptions.history_search,
    args: {
      query: z.string().describe('Words, "phrases", -exclusions, codes, identifiers, paths; empty = recent activity'),
      limit: int().min(1).max(MaxSearchLimit).optional().describe(`Hits (default ${DefaultSearchLimit})`),
      session: z.string().optional().describe('Only this session: a ses_ id or "current"'),
      directory: z.string().optional().describe('Only under this directory ("." = this project)'),
      since: z.string().optional().describe("After: 2026-11-01, 2d, 3h, yesterday"),
      until: z.string().optional().describe("Before"),
      role: z.enum(SearchRoles).optional(),
      author: z.enum(AuthorValues).optional().describe("human: typed by the user; agent: subagent prompts, summaries"),
      kind: z.string().optional().describe(`Comma list: ${KindValues.join(",")}`),
      tool: z.string().optional().describe("Comma list of tools (bash,edit,...)"),
      mode: z.enum(SearchModeValues).optional(),
      group: z.enum(GroupValues).optional().describe("none: every hit, not a few per session"),
      explain: z.boolean().optional().describe("Why each hit ranked"),
      match: z.enum(MatchValues).optional().describe("literal (substring) or regex (RE2) scan full texts; default ranked"),
      continue: z.boolean().optional().describe("Resume your last literal/regex scan that stopped at its budget"),
      scanMs: int().min(1).max(10000).optional().describe("literal/regex time budget (default 1500)"),
    },
    async execute(args, ctx) {
      let params = searchParams(args, ctx)
      if (params.excludeSession && s.rootOf) params.excludeSession = await s.rootOf(params.excludeSession)
      if (wantsLastScan(args.continue)) {
        const resumed = scans.resume(ctx.sessionID, params)
        if ("error" in resumed) throw new Error(resumed.error)
        params = resumed
      }
      const res = await run(s, "history_search", Requests.search, params, ctx)
      scans.remember(ctx.sessionID, params, res.continue)
      const hits = res.hits ?? []
      s.memory.remember(
        ctx.sessionID,
        "history_search",
        hits.map((h) => ({ cursor: h.cursor, title: h.title })),
      )
      return {
        title: `${hits.length} hit${hits.length === 1 ? "" : "s"}: ${params.query || "recent activity"}`,
        output: formatSearch(res, {
          query: params.query,
          cwd: ctx.directory,
          excluded: Boolean(params.excludeSession),
          current: params.session !== undefined && params.session === ctx.sessionID,
          explain: params.explain === true,
        }),
        metadata: { hits: hits.length, mode: res.mode },
      }
    },
  })

  const history_read = tool({
    description: Descriptions.history_read,
    args: {
      hit: int().min(1).optional().describe("Result number N of your last search or list"),
      cursor: z.string().optional(),
      session: z.string().optional().describe('From its start: a ses_ id or "current"'),
      mode: z.enum(ReadModeValues).optional().describe("Default around"),
      limit: int().min(1).max(500).optional().describe(`Messages (default ${DefaultReadLimit}, max 50; full: 500)`),
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
      filter: z.string().optional().describe("Fuzzy on titles"),
      directory: z.string().optional().describe('"." = this project'),
      since: z.string().optional().describe("Active after: 2026-11-01, 2d"),
      until: z.string().optional().describe("Active before"),
      parent: z.string().optional().describe('Its subagents: ses_ id or "current"'),
      limit: int().min(1).max(MaxSessionsLimit).optional().describe(`Per page (default ${DefaultSessionsLimit})`),
      page: z.union([int().min(1).max(MaxPage), z.string()]).optional().describe("Page number"),
    },
    async execute(args, ctx) {
      const params = sessionsParams(args, ctx)
      const want = pageArg(args.page)
      const root = s.rootOf ? await s.rootOf(ctx.sessionID) : ctx.sessionID
      let res: SessionsResult
      let page = 1
      if (want && "token" in want) {
        res = await run(s, "history_sessions", Requests.sessions, { ...params, cursor: want.token }, ctx)
        page = 0 // unknown: a token from an older answer
      } else {
        const key = JSON.stringify(params)
        const got = await fetchPage(
          (cursor) => run(s, "history_sessions", Requests.sessions, cursor ? { ...params, cursor } : params, ctx),
          pages.get(key),
          want?.number ?? 1,
        )
        if ("pages" in got) {
          s.memory.remember(ctx.sessionID, "history_sessions", [])
          throw new Error(`page ${want?.number} is past the end: there are ${got.pages} page${got.pages === 1 ? "" : "s"} of ${params.limit} sessions; use page 1-${got.pages}`)
        }
        res = got.res
        page = got.page
      }
      // The live family stays out of a listing, unless the agent asked for its subagents.
      const family = params.parent === ctx.sessionID || params.parent === root ? [] : [ctx.sessionID, root]
      const { kept, hidden } = withoutFamily(res.sessions ?? [], family)
      s.memory.remember(
        ctx.sessionID,
        "history_sessions",
        kept.map((x) => ({ cursor: x.cursor, title: x.title })),
      )
      return {
        title: `${kept.length} session${kept.length === 1 ? "" : "s"}${params.filter ? `: ${params.filter}` : ""}${page > 1 ? ` (page ${page})` : ""}`,
        output: formatSessions(res, kept, { cwd: ctx.directory, hidden, page }),
        metadata: { sessions: kept.length, page },
      }
    },
  })

  const history_get = tool({
    description: Descriptions.history_get,
    args: {
      hit: int().min(1).optional().describe("Result number N of your last search"),
      id: z.string().optional().describe("prt_/msg_ id or cursor"),
      offset: int().min(0).optional().describe("The previous page's next offset"),
      length: int().min(1).max(MaxGetLength).optional().describe("Chars (default 8000)"),
    },
    async execute(args, ctx) {
      const params = getParams(args, ctx.sessionID, s.memory)
      if ("error" in params) throw new Error(params.error)
      const res = await run(s, "history_get", Requests.get, params, ctx)
      return {
        title: `${res.tool ? `${res.tool} ` : ""}${res.kind} ${res.offset}-${res.offset + res.length}/${res.originalChars}`,
        output: formatGet(res, params.id),
        metadata: { partId: res.partId ?? "", originalChars: res.originalChars, nextOffset: res.nextOffset },
      }
    },
  })

  const history_files = tool({
    description: Descriptions.history_files,
    args: {
      path: z.string().describe("Absolute, or relative to this project"),
      limit: int().min(1).max(MaxSessionsLimit).optional().describe(`Sessions (default ${DefaultSessionsLimit})`),
    },
    async execute(args, ctx) {
      const file = resolveDirectory(args.path, ctx.directory)
      if (!file) throw new Error(`pass "path": the file whose sessions to list (absolute, or relative to ${ctx.directory || "the project"})`)
      const limit = clampLimit(args.limit, DefaultSessionsLimit, MaxSessionsLimit)
      const res = await run(s, "history_files", Requests.files, { path: file, limit }, ctx)
      const root = s.rootOf ? await s.rootOf(ctx.sessionID) : ctx.sessionID
      const { kept, hidden } = withoutFamily(res.sessions ?? [], [ctx.sessionID, root])
      s.memory.remember(
        ctx.sessionID,
        "history_files",
        kept.map((x) => ({ cursor: x.cursor, title: x.title })),
      )
      return {
        title: `${kept.length} session${kept.length === 1 ? "" : "s"}: ${path.basename(file)}`,
        output: formatFiles(res, kept, { cwd: ctx.directory, hidden }),
        metadata: { sessions: kept.length, total: res.total },
      }
    },
  })

  const history_status = tool({
    description: Descriptions.history_status,
    args: {},
    async execute(_args, ctx) {
      const res = await run(s, "history_status", Requests.status, {}, ctx)
      return { title: count(res.sessions, "session"), output: formatStatus(res), metadata: { sessions: res.sessions } }
    },
  })

  return { history_search, history_read, history_get, history_sessions, history_files, history_status }
}
