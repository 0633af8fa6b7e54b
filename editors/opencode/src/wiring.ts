// The proactive hooks as OpenCode calls them: each enabled by its option,
// each guarded (hooks.ts guard) so it can never throw into OpenCode's hook
// runner or hold a turn past its budget.

import type { Hooks } from "@opencode-ai/plugin"
import type { HookConfig } from "./config.js"
import {
  addReminder,
  AutoRecallBytes,
  citeFailure,
  cueQuery,
  durableFacts,
  failedOutput,
  findPastFailure,
  formatCueHits,
  guard,
  hasCue,
  Marker,
  type Log,
  type SessionMessage,
} from "./hooks.js"
import { Requests } from "./protocol.gen.js"
import type { Caller } from "./tools.js"

export interface HookDeps {
  server: Caller
  rootOf: (sessionID: string) => Promise<string>
  /** The messages of a session, from OpenCode (fresher than the index). */
  messages: (sessionID: string) => Promise<SessionMessage[]>
  directory?: string
  log?: Log
}

/** Sessions whose pending auto-recall block is kept (bounded like the hit memory). */
const PendingSessions = 200

export function createHooks(cfg: HookConfig, d: HookDeps): Partial<Hooks> {
  const hooks: Partial<Hooks> = {}
  const budget = cfg.hookTimeoutMs
  // The auto-recall block of each session's current turn, added to every
  // request of that turn by the system transform.
  const pending = new Map<string, string>()

  if (cfg.reminder || cfg.autoRecall) {
    hooks["experimental.chat.system.transform"] = guard("system reminder", budget, d.log, async (input, output) => {
      const block = input.sessionID ? pending.get(input.sessionID) : undefined
      return () => {
        if (cfg.reminder) addReminder(output.system)
        if (block && !output.system.some((s) => s.includes(block))) output.system.push(block)
      }
    })
  }

  if (cfg.failureRecall) {
    hooks["tool.execute.after"] = guard("failure recall", budget, d.log, async (input, output) => {
      const failed = failedOutput(input.tool, output)
      if (!failed || String(output.output ?? "").includes(Marker)) return
      const root = await d.rootOf(input.sessionID)
      const match = await findPastFailure(d.server, failed, root)
      if (!match) return
      const line = citeFailure(match)
      d.log?.(`failure recall: ${match.hit.sessionId} (coverage ${match.coverage.toFixed(2)})`)
      return () => {
        output.output = `${String(output.output ?? "").trimEnd()}\n\n${line}`
      }
    })
  }

  if (cfg.compactionRecall) {
    hooks["experimental.session.compacting"] = guard("compaction recall", budget, d.log, async (input, output) => {
      const facts = durableFacts(await d.messages(input.sessionID), d.directory)
      if (!facts) return
      return () => {
        if (!output.context.some((c) => c.includes(Marker))) output.context.push(facts)
      }
    })
  }

  if (cfg.autoRecall) {
    hooks["chat.message"] = guard("auto-recall", budget, d.log, async (input, output) => {
      pending.delete(input.sessionID) // a new turn: the last one's hits no longer apply
      const text = output.parts
        .filter((p) => p.type === "text" && !p.synthetic)
        .map((p) => (p as { text: string }).text)
        .join("\n")
      if (!hasCue(text)) return
      const query = cueQuery(text)
      if (!query) return
      const root = await d.rootOf(input.sessionID)
      const res = await d.server.request(Requests.search, { query, limit: 3, excludeSession: root })
      const block = formatCueHits(query, res.hits ?? [], AutoRecallBytes)
      if (!block) return
      return () => {
        pending.set(input.sessionID, block)
        while (pending.size > PendingSessions) pending.delete(pending.keys().next().value!)
      }
    })
  }
  return hooks
}
