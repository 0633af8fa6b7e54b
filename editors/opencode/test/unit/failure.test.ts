// Failure recall measured on the public corpus (testdata/corpus/public)
// with the REAL server: labelled failed outputs (test/failure/cases.json)
// -> the session that met the same error, or none. Prints precision and
// recall per threshold; the chosen threshold must keep precision >= 0.9.
import assert from "node:assert/strict"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { after, before, describe, it } from "node:test"
import { fileURLToPath } from "node:url"
import { RecallServer } from "../../src/client.js"
import { citeFailure, failureCandidates, FailureCandidates, FailureLineBytes, FailureThreshold, findPastFailure, type FailureMatch } from "../../src/hooks.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const plugin = path.resolve(here, "../../..") // out/test/unit -> editors/opencode
const repo = path.resolve(plugin, "../..")
const corpus = path.join(repo, "testdata/corpus/public/opencode.db")
const bin = process.env.RECALL_BIN ?? ""
const skip = !bin || !existsSync(bin) ? "RECALL_BIN is not set to a built recall binary" : false

interface Case {
  expect: string | null
  output: string
}
const cases: Case[] = JSON.parse(readFileSync(path.join(plugin, "test/failure/cases.json"), "utf8")).cases

describe("failure recall on the public corpus", { skip }, () => {
  let dir = ""
  let server: RecallServer
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), "recall-oc-failure-"))
    mkdirSync(path.join(dir, "oc"))
    copyFileSync(corpus, path.join(dir, "oc", "opencode.db"))
    server = new RecallServer({ command: bin, initOptions: { db: path.join(dir, "oc", "opencode.db"), index: path.join(dir, "index.db") } })
  })
  after(async () => {
    await server.dispose()
    rmSync(dir, { recursive: true, force: true })
  })

  it("precision and recall per threshold; the default keeps precision >= 0.9", async () => {
    const positives = cases.filter((c) => c.expect).length
    assert.ok(positives >= 15 && cases.length - positives >= 10, "enough labelled cases")
    const rows: string[] = ["| threshold | cited | right | wrong | precision | recall |", "|---|---|---|---|---|---|"]
    let chosen = { precision: 0, recall: 0 }
    // One pass: every candidate's coverage; a threshold cites the first candidate at or above it.
    const scored: Array<{ c: Case; cands: FailureMatch[] }> = []
    const t0 = Date.now()
    for (const c of cases) {
      const cands: FailureMatch[] = []
      for await (const m of failureCandidates(server, c.output, "ses_live_session_not_in_corpus")) cands.push(m)
      scored.push({ c, cands })
    }
    const ms = (Date.now() - t0) / cases.length
    for (const threshold of [0.5, 0.6, 0.75, 0.9, 1.0]) {
      let right = 0
      let wrong = 0
      const misses: string[] = []
      for (const { c, cands } of scored) {
        const m = cands.find((x) => x.coverage >= threshold)
        if (m) {
          assert.ok(Buffer.byteLength(citeFailure(m)) <= FailureLineBytes, "the cited line keeps its budget")
          if (m.hit.title === c.expect) right++
          else {
            wrong++
            misses.push(`cited "${m.hit.title}" for ${c.expect ? `"${c.expect}"` : "a new error"}: ${c.output.split("\n")[0]}`)
          }
        } else if (c.expect) misses.push(`missed "${c.expect}": ${c.output.split("\n")[0]}`)
      }
      const precision = right + wrong ? right / (right + wrong) : 1
      const recall = right / positives
      rows.push(`| ${threshold} | ${right + wrong} | ${right} | ${wrong} | ${precision.toFixed(2)} | ${recall.toFixed(2)} |`)
      if (threshold === FailureThreshold) {
        chosen = { precision, recall }
        for (const m of misses) console.log(`  at ${threshold}: ${m}`)
      }
    }
    console.log(`failure recall: ${ms.toFixed(0)} ms per failed output (search + up to ${FailureCandidates} reads)`)
    console.log(`failure recall: ${positives} positives, ${cases.length - positives} negatives\n${rows.join("\n")}`)
    assert.ok(chosen.precision >= 0.9, `precision at ${FailureThreshold}: ${chosen.precision}`)
    assert.ok(chosen.recall >= 0.6, `recall at ${FailureThreshold}: ${chosen.recall}`)
  })

  it("the cited line names the session, its date and what followed the error", async () => {
    const m = await findPastFailure(server, "cmd/ledger/main.go:61:3: undefined: syscall", "ses_live")
    assert.ok(m, "found")
    const line = citeFailure(m)
    assert.match(line, /^\[recall\] Seen before in "Graceful shutdown on SIGTERM" \(\d{4}-\d{2}-\d{2}\): what came next: .+ More: history_read \{"cursor": "c1:[^"]+"\}$/)
    // The session that met it is left out when it is the live family.
    assert.equal(await findPastFailure(server, "cmd/ledger/main.go:61:3: undefined: syscall", m.hit.sessionId), undefined)
  })
})
