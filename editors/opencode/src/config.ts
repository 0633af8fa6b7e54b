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
  /** A short system reminder of the history tools in every request (default true). */
  reminder?: boolean
  /** Failure recall: a failed bash command gets one cited line when a past session met the same error (default true). */
  failureRecall?: boolean
  /** Compaction recall: the session's durable facts go into the compaction prompt (default true). */
  compactionRecall?: boolean
  /** Auto-recall on cue: "like we did last week" in a message injects the top cited hits (default false). */
  autoRecall?: boolean
  /** Budget of one hook's work, in ms (default 2500); past it the hook adds nothing. */
  hookTimeoutMs?: number
}

/** The hooks that run, after defaults. */
export interface HookConfig {
  reminder: boolean
  failureRecall: boolean
  compactionRecall: boolean
  autoRecall: boolean
  hookTimeoutMs: number
}

/**
 * Hook defaults. failureRecall is on because its measured precision on the
 * public corpus was 1.0 at the chosen threshold (README, "Failure recall");
 * autoRecall is opt-in: a cue phrase is a guess about intent, and its
 * injected hits cost tokens on every step of that turn.
 */
export const HookDefaults: HookConfig = { reminder: true, failureRecall: true, compactionRecall: true, autoRecall: false, hookTimeoutMs: 2500 }

export interface ResolvedConfig {
  command: string
  args: string[]
  initOptions: InitOptions
  timeoutMs?: number
  logFile?: string
  hooks: HookConfig
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
  const flag = (v: unknown, def: boolean) => (typeof v === "boolean" ? v : v === "true" ? true : v === "false" ? false : def)
  const hooks: HookConfig = {
    reminder: flag(o.reminder, HookDefaults.reminder),
    failureRecall: flag(o.failureRecall, HookDefaults.failureRecall),
    compactionRecall: flag(o.compactionRecall, HookDefaults.compactionRecall),
    autoRecall: flag(o.autoRecall, HookDefaults.autoRecall),
    hookTimeoutMs: typeof o.hookTimeoutMs === "number" && o.hookTimeoutMs > 0 ? o.hookTimeoutMs : HookDefaults.hookTimeoutMs,
  }
  const cfg: ResolvedConfig = { command, args, initOptions, hooks }
  if (Number.isFinite(t) && t > 0) cfg.timeoutMs = t
  if (logFile) cfg.logFile = logFile
  return cfg
}
