// The proactive hooks without a server: the guard (never throws, keeps its
// budget, logs), the reminder, failure detection and the error line,
// compaction facts, cues; and createHooks wired to a server that throws.
import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { HookDefaults, resolveConfig } from "../../src/config.js"
import {
  addReminder,
  citeFailure,
  clipBytes,
  cueQuery,
  durableFacts,
  errorLine,
  errorTerms,
  failedOutput,
  fixSentences,
  guard,
  hasCue,
  normaliseError,
  Reminder,
  type SessionMessage,
} from "../../src/hooks.js"
import type { Hit } from "../../src/protocol.gen.js"
import type { Caller } from "../../src/tools.js"
import { createHooks } from "../../src/wiring.js"

const throwing: Caller = {
  async request() {
    throw new Error("server exploded")
  },
}

function logs(): { log: (l: string) => void; lines: string[] } {
  const lines: string[] = []
  return { log: (l) => lines.push(l), lines }
}

describe("guard", () => {
  it("swallows a throwing hook and logs it", async () => {
    const { log, lines } = logs()
    const h = guard("x", 1000, log, async () => {
      throw new Error("boom")
    })
    await h({}, {})
    assert.match(lines.join("\n"), /x: failed \(boom\); skipped/)
  })
  it("a hook past its budget changes nothing, even when it finishes later", async () => {
    const { log, lines } = logs()
    const out = { v: 0 }
    const h = guard<object, { v: number }>("slow", 20, log, async (_i, o) => {
      await new Promise((r) => setTimeout(r, 400))
      return () => {
        o.v = 1
      }
    })
    const t0 = Date.now()
    await h({}, out)
    assert.ok(Date.now() - t0 < 300, "returned at its budget")
    await new Promise((r) => setTimeout(r, 450))
    assert.equal(out.v, 0)
    assert.match(lines.join("\n"), /slow: over its 20 ms budget/)
  })
})

describe("createHooks with a server that throws", () => {
  it("every hook swallows the failure, logs it, and leaves OpenCode's output as it was", async () => {
    const { log, lines } = logs()
    const hooks = createHooks({ ...HookDefaults, autoRecall: true }, {
      server: throwing,
      rootOf: async (id) => id,
      messages: async () => {
        throw new Error("no client")
      },
      log,
    })
    const out = { title: "t", output: "cmd/ledger/main.go:52:58: undefined: syscall", metadata: { exit: 1 } }
    await hooks["tool.execute.after"]!({ tool: "bash", sessionID: "ses_a", callID: "c", args: {} }, out)
    assert.equal(out.output, "cmd/ledger/main.go:52:58: undefined: syscall")
    const ctx = { context: [] as string[] }
    await hooks["experimental.session.compacting"]!({ sessionID: "ses_a" }, ctx)
    assert.deepEqual(ctx.context, [])
    await hooks["chat.message"]!({ sessionID: "ses_a" }, { message: {} as never, parts: [{ type: "text", text: "do it like we did last week" } as never] })
    const sys = { system: ["You are OpenCode."] }
    await hooks["experimental.chat.system.transform"]!({ sessionID: "ses_a", model: {} as never }, sys)
    assert.deepEqual(sys.system, ["You are OpenCode.", Reminder])
    const text = lines.join("\n")
    assert.match(text, /failure recall: failed \(server exploded\); skipped/)
    assert.match(text, /compaction recall: failed \(no client\); skipped/)
    assert.match(text, /auto-recall: failed \(server exploded\); skipped/)
  })
  it("options turn hooks off; autoRecall is off by default", () => {
    const deps = { server: throwing, rootOf: async (id: string) => id, messages: async () => [] }
    assert.deepEqual(Object.keys(createHooks(resolveConfig({}, {}).hooks, deps)).sort(), ["experimental.chat.system.transform", "experimental.session.compacting", "tool.execute.after"])
    const none = resolveConfig({ reminder: false, failureRecall: false, compactionRecall: false }, {}).hooks
    assert.deepEqual(Object.keys(createHooks(none, deps)), [])
    assert.ok(Object.keys(createHooks(resolveConfig({ autoRecall: true }, {}).hooks, deps)).includes("chat.message"))
  })
})

describe("system reminder", () => {
  it("is added once, short", () => {
    const sys = ["a"]
    assert.equal(addReminder(sys), true)
    assert.equal(addReminder(sys), false)
    assert.deepEqual(sys, ["a", Reminder])
    assert.ok(Buffer.byteLength(Reminder) < 450)
  })
})

describe("failure detection and the error line", () => {
  it("only a bash call with a non-zero exit is a failure", () => {
    assert.equal(failedOutput("bash", { output: "x", metadata: { exit: 0 } }), undefined)
    assert.equal(failedOutput("bash", { output: "boom", metadata: { exit: 2 } }), "boom")
    assert.equal(failedOutput("read", { output: "boom", metadata: { exit: 2 } }), undefined)
    assert.equal(failedOutput("bash", { output: "x", metadata: {} }), undefined)
  })
  it("picks the telling line, not the summary", () => {
    const out = "=== RUN TestX\n    users_test.go:17: got err = pq: duplicate key value violates unique constraint \"users_email_key\"\n--- FAIL: TestX (0.01s)\nFAIL\nexit status 1\n"
    assert.match(errorLine(out)!, /violates unique constraint/)
    assert.equal(errorLine("FAIL\nexit status 1\n"), undefined)
    assert.equal(errorLine("thread 'main' panicked at src/parse.rs:52:13:\nindex out of bounds: the len is 0\n"), "thread 'main' panicked at src/parse.rs:52:13: index out of bounds: the len is 0")
  })
  it("normalises what changes between runs: numbers, paths, hex, urls", () => {
    assert.equal(normaliseError("/home/u/x/cmd/main.go:52:58: undefined: syscall"), "main.go: undefined: syscall")
    assert.equal(normaliseError("batch=118 id 0xdeadbeef at deadbeef12 GET http://h:1/a?b"), "batch=<n> id <hex> at <hex> GET <url>")
    assert.deepEqual(errorTerms(normaliseError("src/a.rs:3:4: error[E0502]: cannot borrow `*self` as mutable")), ["a.rs", "E0502", "cannot", "borrow", "self", "mutable"])
  })
  it("the cited line keeps its byte budget, whatever the title and fix", () => {
    const hit = { title: "Ü".repeat(200), time: "2026-03-02T01:00:00Z", sessionId: "ses_1", cursor: "c1:local:prt_x.abcdef" } as Hit
    const line = citeFailure({ hit, line: "", coverage: 1, fix: "fixed it by ".repeat(100) })
    assert.ok(Buffer.byteLength(line) <= 300, `${Buffer.byteLength(line)} bytes`)
    assert.match(line, /More: history_read \{"cursor": "c1:local:prt_x.abcdef"\}$/)
    assert.equal(clipBytes("ééé", 5), "é…")
  })
})

describe("compaction facts", () => {
  const msgs: SessionMessage[] = [
    { info: { role: "user", id: "m1" }, parts: [{ type: "text", text: "Make CreateUser return ErrEmailTaken on duplicates" }] },
    { info: { role: "assistant", id: "m2" }, parts: [
      { type: "tool", tool: "bash", state: { status: "completed", input: { command: "go test ./internal/store/" }, output: "users_test.go:17: pq: duplicate key value violates unique constraint \"users_email_key\"\nFAIL", metadata: { exit: 1 } } },
    ] },
    { info: { role: "assistant", id: "m3" }, parts: [
      { type: "text", text: "The insert does not map the unique violation; I will translate pq error 23505 into ErrEmailTaken." },
      { type: "tool", tool: "edit", state: { status: "completed", input: { filePath: "/p/internal/store/users.go", oldString: "a", newString: "b" } } },
      { type: "tool", tool: "apply_patch", state: { status: "completed", input: { patchText: "*** Begin Patch\n*** Update File: internal/store/users_test.go\n@@\n*** End Patch" } } },
      { type: "tool", tool: "bash", state: { status: "completed", input: { command: "go test ./internal/store/" }, output: "ok", metadata: { exit: 0 } } },
    ] },
  ]
  it("files edited, errors met with what followed, commands, identifiers; bounded", () => {
    const f = durableFacts(msgs, "/p")
    assert.match(f, /^\[recall\] Durable facts of this session/)
    assert.match(f, /files edited: internal\/store\/users.go, internal\/store\/users_test.go/)
    assert.match(f, /violates unique constraint "users_email_key" \[from: go test \.\/internal\/store\/\] -> The insert does not map the unique violation/)
    assert.match(f, /commands run \(last\):\n  - go test \.\/internal\/store\/ \(exit 1\)\n  - go test \.\/internal\/store\/\n/)
    assert.match(f, /identifiers: .*ErrEmailTaken/)
    assert.ok(Buffer.byteLength(durableFacts(msgs, "/p", 300)) <= 300)
    assert.equal(durableFacts([{ info: { role: "user", id: "m" }, parts: [{ type: "text", text: "hi" }] }], "/p"), "")
  })
})

describe("cues for auto-recall", () => {
  it("phrases that point at earlier work, and not ordinary requests", () => {
    for (const t of ["Set up the cache like we did last week", "redo the migration from before", "same as before, please", "remember how we fixed the flaky test?", "what did we decide in the previous session about retries", "We already fixed this once"]) {
      assert.ok(hasCue(t), t)
    }
    for (const t of ["fix the bug in the last line", "add a before hook", "run the tests", "what is the previous value of x"]) {
      assert.ok(!hasCue(t), t)
    }
    assert.equal(cueQuery("redo the migration from before for the billing tables"), "redo billing tables")
  })
})

describe("what came next", () => {
  it("a fix that opens by restating the error leads with the rest", () => {
    const terms = errorTerms(normaliseError('migrate: 0043_x.sql:54: ERROR: relation "invoice_lines" does not exist (SQLSTATE 42P01)'))
    assert.equal(
      fixSentences("Migration 0041 failed: relation invoice_lines does not exist. It is created by 0040.sql, which never ran; apply them in order.", terms),
      "It is created by 0040.sql, which never ran; apply them in order.",
    )
    assert.equal(fixSentences("Only one sentence here.", terms), "Only one sentence here.")
  })
})
