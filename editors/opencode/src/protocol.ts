// Wire types of `recall lsp` (lsp/README.md, the same shapes as the CLI's
// --json). Only the fields this plugin reads are declared; the server may
// send more.

/** Custom requests (the same commands as workspace/executeCommand). */
export const Requests = {
  search: "recall/search",
  read: "recall/read",
  sessions: "recall/sessions",
  sync: "recall/sync",
} as const

/** initializationOptions of `initialize`. */
export interface InitOptions {
  /** One history, or several searched as one (paths, "NAME=PATH", or {name, path, index}). */
  db?: string | Array<string | { name?: string; path: string; index?: string }>
  index?: string
  excludeSession?: string
  watch?: boolean
}

export interface SearchParams {
  query: string
  limit?: number
  directory?: string
  after?: string
  before?: string
  role?: string
  kind?: string
  tool?: string
  excludeSession?: string
  mode?: string
}

export interface Hit {
  cursor: string
  /** The history the hit is in (a source name: "local", "laptop"). */
  source?: string
  sessionId: string
  messageId: string
  partId?: string
  title: string
  directory: string
  role: string
  kind: string
  tool?: string
  time: string
  score?: number
  snippet: string
}

export interface SearchResult {
  hits: Hit[] | null
  mode?: string
  notices?: string[] | null
  corrections?: string[] | null
  partial?: boolean
  index?: { syncedAt?: string; stale?: boolean; busy?: boolean }
}

export type ReadMode = "around" | "next" | "prev" | "head" | "tail" | "full"

export interface ReadParams {
  cursor: string
  mode?: ReadMode
  limit?: number
  format?: "chatml" | "markdown" | "json"
}

export interface SessionRef {
  id: string
  title: string
}

export interface SessionInfo {
  id: string
  source?: string
  title: string
  directory: string
  parentId?: string
  created?: string
  updated: string
  archived?: boolean
  agent?: string
  messages: number
  turns: number
  toolCalls: number
  firstPrompt?: string
  children?: SessionRef[] | null
  cursor: string
}

export interface ReadResult {
  text: string
  format?: string
  session?: SessionInfo
  range?: { first: number; last: number; total: number }
  anchor?: string
  nav?: { prev?: string; next?: string; head?: string; tail?: string }
}

export interface SessionsParams {
  filter?: string
  directory?: string
  after?: string
  before?: string
  limit?: number
  cursor?: string
}

export interface SessionsResult {
  sessions: SessionInfo[] | null
  next?: string
}

export interface SyncResult {
  idle?: boolean
  added?: number
  updated?: number
  deleted?: number
  busy?: boolean
  tookMs?: number
}

/** JSON-RPC error codes the server uses (lsp/README.md "Errors"). */
export const ErrorCodes = {
  invalidParams: -32602,
  methodNotFound: -32601,
  serverNotInitialized: -32002,
  invalidRequest: -32600,
  requestCancelled: -32800,
  internalError: -32603,
} as const
