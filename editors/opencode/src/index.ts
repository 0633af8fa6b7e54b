// OpenCode plugin "recall": the agent searches and reads the user's past
// OpenCode sessions through `recall lsp`, and hooks bring history to it
// unasked (hooks.ts). This module exports one function only: OpenCode
// treats every exported function as a plugin.

import { appendFileSync } from "node:fs"
import type { Hooks, Plugin } from "@opencode-ai/plugin"
import { RecallServer } from "./client.js"
import { resolveConfig } from "./config.js"
import { createHooks } from "./wiring.js"
import { createTools, HitMemory, sessionRoots } from "./tools.js"

export const RecallPlugin: Plugin = async (input, options) => {
  const cfg = resolveConfig(options, process.env)
  // Never write to stdout/stderr: that is OpenCode's terminal UI.
  const log = cfg.logFile
    ? (line: string) => {
        try {
          appendFileSync(cfg.logFile!, `${new Date().toISOString()} recall-plugin ${line}\n`)
        } catch {
          // logging must never fail a tool call
        }
      }
    : undefined
  const server = new RecallServer({
    command: cfg.command,
    args: cfg.args,
    initOptions: cfg.initOptions,
    ...(cfg.timeoutMs ? { requestTimeoutMs: cfg.timeoutMs } : {}),
    ...(log ? { log } : {}),
  })
  // A subagent's search leaves out its whole family: exclude from the root.
  const rootOf = sessionRoots(async (id) => {
    const res = await input.client.session.get({ path: { id } })
    return res.data?.parentID
  })
  const hooks: Hooks = {
    tool: createTools({ server, memory: new HitMemory(), rootOf }),
    ...createHooks(cfg.hooks, {
      server,
      rootOf,
      directory: input.directory,
      messages: async (id) => {
        const res = await input.client.session.messages({ path: { id } })
        return (res.data ?? []) as never
      },
      ...(log ? { log } : {}),
    }),
    // A session that just finished becomes searchable at once (the server's
    // watcher would see it within a second or two; this makes it certain).
    event: async ({ event }) => {
      if (event.type === "session.idle") void server.sync()
    },
    dispose: () => server.dispose(),
  }
  return hooks
}
