// Where the plugin finds the recall binary and the history, from the plugin
// options (opencode.json `"plugin": [["…/recall.js", {…}]]`) and the
// environment.

import * as os from "node:os"
import * as path from "node:path"
import type { InitOptions } from "./protocol.gen.js"

/** Options of the plugin entry in opencode.json; every field is optional. */
export interface RecallOptions {
  /** The recall binary (else RECALL_BIN, else `recall` on PATH). */
  bin?: string
  /**
   * OpenCode's database (else RECALL_DB, OPENCODE_DB, else OpenCode's own
   * default), or a list of histories searched as one: paths, or "NAME=PATH"
   * to name one (["~/.local/share/opencode/opencode.db",
   * "desktop=~/sync/desktop/opencode.db"]). A leading ~/ is the home dir.
   */
  db?: string | string[]
  /** Recall's index file (else RECALL_INDEX, else the server's default under $XDG_DATA_HOME/recall/index/). */
  index?: string
  /** Budget of one tool call to the server, in ms (else RECALL_TIMEOUT_MS, else 20000). */
  timeoutMs?: number
  /** A log file for the plugin and the server (else RECALL_LOG). */
  logFile?: string
}

export interface ResolvedConfig {
  command: string
  args: string[]
  initOptions: InitOptions
  timeoutMs?: number
  logFile?: string
}

type Env = Record<string, string | undefined>

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined
}

/** The db option: one path, or a list of them (NAME=PATH entries kept), ~/ expanded. */
function histories(v: unknown, env: Env): string | string[] | undefined {
  const home = str(env.HOME) ?? os.homedir()
  const expand = (s: string) => s.replace(/^([a-z0-9-]+=)?~\//, (_m, name: string | undefined) => `${name ?? ""}${home}/`)
  if (Array.isArray(v)) {
    const list = v.map(str).filter((s): s is string => s !== undefined).map(expand)
    return list.length ? list : undefined
  }
  const one = str(v)
  return one === undefined ? undefined : expand(one)
}

/**
 * OpenCode keeps its history in $XDG_DATA_HOME/opencode/opencode.db
 * (~/.local/share/opencode/opencode.db). The plugin names that file itself
 * instead of letting the server fall back to its bundled demo history, which
 * an agent must never mistake for the user's.
 */
export function defaultDatabase(env: Env): string {
  const data = str(env.XDG_DATA_HOME) ?? path.join(str(env.HOME) ?? os.homedir(), ".local", "share")
  return path.join(data, "opencode", "opencode.db")
}

export function resolveConfig(options: Record<string, unknown> | undefined, env: Env): ResolvedConfig {
  const o = (options ?? {}) as Record<string, unknown>
  const command = str(o.bin) ?? str(env.RECALL_BIN) ?? "recall"
  const logFile = str(o.logFile) ?? str(env.RECALL_LOG)
  const args = ["lsp"]
  if (logFile) args.push("--log-file", logFile)
  const initOptions: InitOptions = {
    db: histories(o.db, env) ?? str(env.RECALL_DB) ?? str(env.OPENCODE_DB) ?? defaultDatabase(env),
  }
  const index = str(o.index) ?? str(env.RECALL_INDEX)
  if (index) initOptions.index = index
  const t = typeof o.timeoutMs === "number" ? o.timeoutMs : Number.parseInt(env.RECALL_TIMEOUT_MS ?? "", 10)
  const cfg: ResolvedConfig = { command, args, initOptions }
  if (Number.isFinite(t) && t > 0) cfg.timeoutMs = t
  if (logFile) cfg.logFile = logFile
  return cfg
}
