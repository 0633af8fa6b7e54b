// Proactive recall: OpenCode hooks that bring history to the agent without
// it asking. A system reminder of the tools, failure recall (a failed bash
// command meets the past session that met the same error), compaction
// recall (the session's durable facts survive the summary) and auto-recall
// on cue ("like we did last week"). Each is behind a plugin option and
// wrapped by guard(): a hook can be slow or fail, it never throws into
// OpenCode's hook runner and never stalls a turn past its budget.

import * as path from "node:path"
import { Requests, type Hit, type Part, type ReadResult } from "./protocol.gen.js"
import type { Caller } from "./tools.js"

export type Log = (line: string) => void

/**
 * Wraps a hook: the work computes an apply step within budgetMs; only a
 * step that arrives in time touches OpenCode's output object, and any
 * error is logged and swallowed.
 */
export function guard<I, O>(
  name: string,
  budgetMs: number,
  log: Log | undefined,
  work: (input: I, output: O) => Promise<(() => void) | undefined | void>,
): (input: I, output: O) => Promise<void> {
  return async (input, output) => {
    const t0 = Date.now()
    let timer: NodeJS.Timeout | undefined
    try {
      const late = Symbol("late")
      const timeout = new Promise<typeof late>((resolve) => {
        timer = setTimeout(() => resolve(late), budgetMs)
        timer.unref?.()
      })
      const work$ = work(input, output)
      work$.catch(() => undefined) // a late failure is not an unhandled rejection
      const step = await Promise.race([work$, timeout])
      if (step === late) {
        log?.(`${name}: over its ${budgetMs} ms budget; skipped`)
        return
      }
      if (typeof step === "function") {
        step()
        log?.(`${name}: added (${Date.now() - t0} ms)`)
      }
    } catch (err) {
      log?.(`${name}: failed (${err instanceof Error ? err.message : String(err)}); skipped`)
    } finally {
      clearTimeout(timer)
    }
  }
}

// ---------------------------------------------------------------- reminder

/** Marks what the plugin adds, so each addition is made once. */
export const Marker = "[recall]"

/** The system reminder: one short paragraph (~330 bytes, ~85 tokens). */
export const Reminder =
  `${Marker} The user's past OpenCode sessions are searchable. Before redoing past work or when an error looks familiar: ` +
  `history_search (errors, decisions, commands, fixes; session "current" finds what compaction dropped from this one), ` +
  `history_read {"hit": N}, history_get (a whole tool output), history_sessions, history_files (sessions that touched a file).`

/** Adds the reminder once, whatever else the system prompt holds. */
export function addReminder(system: string[]): boolean {
  if (system.some((s) => s.includes(Reminder))) return false
  system.push(Reminder)
  return true
}

// ---------------------------------------------------------- failure recall

/** The output of a failed tool call, or undefined for a success: bash with a non-zero exit. */
export function failedOutput(tool: string, output: { output?: unknown; metadata?: unknown }): string | undefined {
  if (tool !== "bash") return undefined
  const meta = (output.metadata ?? {}) as Record<string, unknown>
  const exit = meta.exit ?? meta.exitCode
  if (typeof exit !== "number" || exit === 0) return undefined
  const text = typeof output.output === "string" ? output.output : typeof meta.output === "string" ? meta.output : ""
  return text || undefined
}

// An error line names what went wrong; these words and codes mark one.
const errorWords =
  /\b(error|errors|err|fail(ed|ure)?|panic(ked)?|exception|fatal|cannot|can't|couldn't|undefined|not found|no such|denied|refused|timed? ?out|traceback|violates|invalid|unexpected|mismatch|missing|unable|expected|conflict|deadlock|exhausted|too many|not enough|unknown|unsupported|unresolved|segmentation|abort(ed)?)\b|\b(E\d{3,5}|TS\d{4}|[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z][a-zA-Z]+(Error|Exception))\b/i
// Lines that say a failure happened without saying which.
const genericLine =
  /^(FAIL|FAILED|ERROR|error|fatal)\b[\s:]*([\w./-]*\s*(\(?\d+(\.\d+)?m?s\)?)?)?$|^(exit status \d+|make: \*\*\*.*Error \d+|npm ERR! (code|errno|A complete log|This is probably).*|ELIFECYCLE.*|error: Recipe .*|Error: Process completed with exit code \d+\.?|.*\bexited with (code|status) \d+.*|.*Command failed with exit code \d+.*|test result: FAILED.*|FAILED \(.*\)|=+ \d+ failed.*=+|\d+ (failed|errors?)[,.].*|error: could not compile .*|error: aborting due to.*|For more information about this error.*|Some errors have detailed explanations.*|Tests: .*failed.*)$/i

const ansi = /\x1b\[[0-9;]*[A-Za-z]/g

/** The most telling error line of a failed command's output (<= 240 chars), if any. */
export function errorLine(output: string): string | undefined {
  const lines = output.replace(ansi, "").split("\n").map((l) => l.replace(/^[\s│|>❯→×✗✘•*-]+/, "").trim()).filter(Boolean)
  let best: string | undefined
  let bestScore = 0
  lines.forEach((l, i) => {
    if (l.length < 8 || genericLine.test(l) || !errorWords.test(l)) return
    // The first specific line usually names the cause; later ones repeat
    // or summarise it. Words such as "error"/"panicked" weigh more than
    // "expected"/"missing", which also appear in passing lines.
    let score = 10 - Math.min(i, 40) / 10
    if (/\b(error|panic(ked)?|exception|fatal|violates|refused|denied|E\d{3,5}|TS\d{4})\b|Error:/.test(l)) score += 5
    if (/[A-Z][a-zA-Z]+(Error|Exception)\b|\b[A-Z][A-Z0-9]*_[A-Z0-9_]{3,}\b/.test(l)) score += 2
    if (score > bestScore) {
      best = l
      bestScore = score
    }
  })
  if (best === undefined) return undefined
  // "thread 'main' panicked at src/parse.rs:52:13:" and the like name the
  // place; the cause is on the next line.
  if (best.endsWith(":")) {
    const next = lines[lines.indexOf(best) + 1]
    if (next) best = `${best} ${next}`
  }
  return best.length > 240 ? best.slice(0, 240) : best
}

/**
 * The error line with what changes between runs collapsed: paths keep
 * their file name, numbers, hex and quoted values become placeholders, so
 * the same error in another checkout, line or batch reads the same.
 */
export function normaliseError(line: string): string {
  return line
    .replace(ansi, "")
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "<url>")
    .replace(/\b[0-9a-f]{7,}\b|\b0x[0-9a-f]+\b/gi, "<hex>")
    .replace(/(?:~|\.{1,2}|\b[\w.@-]+)?(?:\/[\w.@+-]+)*\/([\w.@+-]+)/g, "$1") // a path -> its file name
    .replace(/(\.[A-Za-z]{1,5}):\d+(:\d+)?/g, "$1") // file.go:52:58 -> file.go
    .replace(/\b\d+(\.\d+)*\b/g, "<n>")
    .replace(/\s+/g, " ")
    .trim()
}

const stopWords = new Set(
  "the a an and or of to in on at for from with by is are was were be been has have had not but this that it its as into got want than then when while there their error errors err failed fail failure n hex".split(" "),
)

/** The distinctive words of a normalised error line (what the search and the match compare). */
export function errorTerms(norm: string): string[] {
  const out: string[] = []
  for (const w of norm.replace(/<\w+>/g, " ").split(/[^A-Za-z0-9_.]+/)) {
    const t = w.replace(/^\.+|\.+$/g, "")
    if (t.length < 3 || stopWords.has(t.toLowerCase()) || /^\d+$/.test(t)) continue
    if (!out.some((o) => o.toLowerCase() === t.toLowerCase())) out.push(t)
  }
  return out
}

/** Share of the error's terms that a line of a past output holds. */
export function coverage(terms: string[], text: string): number {
  if (terms.length === 0) return 0
  const have = new Set(errorTerms(normaliseError(text)).map((t) => t.toLowerCase()))
  return terms.filter((t) => have.has(t.toLowerCase())).length / terms.length
}

export interface FailureRecallOptions {
  /** Minimum share of the error's terms the past output line must hold. */
  threshold?: number
  /** Past hits checked. */
  candidates?: number
  /** Byte budget of the cited line. */
  maxBytes?: number
  signal?: AbortSignal
}

/**
 * FailureThreshold: a past output (a line and the next) must hold this
 * share of the new error's distinctive terms. Chosen on the labelled
 * failed outputs of the public corpus (test/failure/cases.json, 19
 * positives, 17 negatives; test/unit/failure.test.ts prints the table):
 * precision 1.00 from 0.6 up (0.5 cites a wrong session), recall 1.00 at
 * 0.6 and 0.89 at 0.75. 0.75 keeps a step of margin from the first wrong
 * citation; a missed recall costs nothing, a wrong one misleads the agent.
 */
export const FailureThreshold = 0.75
/** Hits looked at: the match is usually first; 3 covers a near-duplicate above it. */
export const FailureCandidates = 3
/** The cited line's budget: one line, never more than ~75 tokens. */
export const FailureLineBytes = 300

export interface FailureMatch {
  hit: Hit
  line: string
  coverage: number
  fix?: string
  /** The new error's distinctive terms (what the fix's sentences are weighed against). */
  terms?: string[]
}


/**
 * Looks a failed command's error up in the history (the live family
 * excluded) and returns the past session that met it, with what came next
 * there (the fix), or undefined.
 */
export async function findPastFailure(server: Caller, output: string, excludeSession: string | undefined, o: FailureRecallOptions = {}): Promise<FailureMatch | undefined> {
  const threshold = o.threshold ?? FailureThreshold
  for await (const m of failureCandidates(server, output, excludeSession, o)) if (m.coverage >= threshold) return m
  return undefined
}

/** The past hits for a failed output in rank order, each with how much of the error it holds. */
export async function* failureCandidates(server: Caller, output: string, excludeSession: string | undefined, o: FailureRecallOptions = {}): AsyncGenerator<FailureMatch> {
  const line = errorLine(output)
  if (!line) return
  const terms = errorTerms(normaliseError(line))
  if (terms.length < 2) return // "undefined: x" alone says too little to cite a session for
  const call = o.signal ? { signal: o.signal } : {}
  const res = await server.request(
    Requests.search,
    { query: terms.slice(0, 10).join(" "), limit: o.candidates ?? FailureCandidates, kind: "output", mode: "lexical", ...(excludeSession ? { excludeSession } : {}) },
    call,
  )
  for (const hit of res.hits ?? []) {
    const win = await server.request(Requests.read, { cursor: hit.cursor, mode: "around", limit: 8, format: "json" }, call)
    const part = partOf(win, hit.partId)
    const text = part ? (part.output ?? part.error ?? part.text ?? "") : hit.snippet
    // A line and the next: a panic or a compiler error names the place on
    // one line and the cause on the next, as errorLine joins them.
    const lines = text.split("\n")
    let bestLine = ""
    let best = 0
    for (let i = 0; i < lines.length; i++) {
      const l = `${lines[i]} ${lines[i + 1] ?? ""}`
      const c = coverage(terms, l)
      if (c > best) {
        best = c
        bestLine = l.trim()
      }
    }
    const fix = fixAfter(win, hit.partId)
    yield { hit, line: bestLine, coverage: best, terms, ...(fix ? { fix } : {}) }
  }
}

function partOf(win: ReadResult, partId: string): Part | undefined {
  for (const m of win.messages ?? []) for (const p of m.parts ?? []) if (p.id === partId) return p
  return undefined
}

const editTools = new Set(["edit", "write", "apply_patch", "patch", "multiedit"])

/** What came after a part in its session: the next assistant text, or the next edit. */
export function fixAfter(win: ReadResult, partId: string): string | undefined {
  let seen = false
  for (const m of win.messages ?? []) {
    for (const p of m.parts ?? []) {
      if (!seen) {
        seen = p.id === partId
        continue
      }
      if (m.role === "user" && p.kind === "text" && !p.synthetic) return undefined // the user moved on
      if (m.role !== "assistant") continue
      if (p.kind === "text" && p.text?.trim()) return p.text
      if (p.tool && editTools.has(p.tool)) return `edited ${(p.paths ?? []).map((f) => path.basename(f)).join(", ") || "a file"}`
    }
  }
  return undefined
}

/** The one cited line the agent sees, within maxBytes. */
export function citeFailure(m: FailureMatch, maxBytes = FailureLineBytes): string {
  const when = m.hit.time ? m.hit.time.slice(0, 10) : "earlier"
  const title = clipBytes(m.hit.title || m.hit.sessionId, 60)
  // The cursor names the session and the part: no session id beside it.
  const head = `${Marker} Seen before in "${title}" (${when}): `
  const tail = ` More: history_read {"cursor": "${m.hit.cursor}"}`
  const room = maxBytes - byteLen(head) - byteLen(tail) - byteLen("what came next: ")
  const fix = m.fix ? `what came next: ${clipBytes(fixSentences(flat(m.fix), m.terms ?? []), Math.max(room, 0))}` : "no fix recorded after it."
  const line = head + fix + tail
  return byteLen(line) <= maxBytes ? line : clipBytes(head + fix, maxBytes)
}

/**
 * The part of what came next that says what to do: an answer often opens by
 * restating the error ("Migration 0041 failed: relation … does not
 * exist."); sentences that mostly repeat the error's terms go after the rest.
 */
export function fixSentences(text: string, terms: string[]): string {
  const sentences = text.split(/(?<=[.!?])\s+/).map((x) => x.trim()).filter(Boolean)
  if (sentences.length < 2 || terms.length === 0) return text
  const restates = (x: string) => coverage(terms, x) >= 0.5
  const rest = sentences.filter((x) => !restates(x))
  return rest.length ? rest.join(" ") : text
}

// -------------------------------------------------------- compaction recall

/** The parts of the session's messages, as OpenCode's client returns them. */
export interface SessionMessage {
  info: { role: string; id: string }
  parts: Array<Record<string, unknown>>
}

/** CompactionBytes bounds the facts added to a compaction (~400 tokens next to a summary of a few thousand). */
export const CompactionBytes = 1600

/**
 * The session's durable facts for the compaction prompt: files edited,
 * commands run (with failures), errors met and what followed them, and the
 * identifiers the work turned on. Within maxBytes; empty when the session
 * has none.
 */
export function durableFacts(messages: SessionMessage[], cwd: string | undefined, maxBytes = CompactionBytes): string {
  const files: string[] = []
  const commands: string[] = []
  const errors: string[] = []
  const words = new Map<string, number>()
  const add = <T>(list: T[], v: T) => {
    const i = list.indexOf(v)
    if (i >= 0) list.splice(i, 1)
    list.push(v)
  }
  const rel = (f: string) => (cwd && path.isAbsolute(f) ? path.relative(cwd, f) || f : f)
  const ident = (text: string) => {
    for (const m of text.matchAll(/\b(?:[A-Za-z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+|E\d{4}|TS\d{4})\b/g)) {
      words.set(m[0], (words.get(m[0]) ?? 0) + 1)
    }
  }
  let pendingError: number | undefined // index in errors of the last error awaiting what followed it
  for (const msg of messages) {
    for (const p of msg.parts) {
      if (p.type === "text" && typeof p.text === "string" && !p.synthetic) {
        ident(p.text)
        if (msg.info.role === "assistant" && pendingError !== undefined) {
          errors[pendingError] += ` -> ${clipBytes(flat(p.text), 140)}`
          pendingError = undefined
        }
        continue
      }
      if (p.type !== "tool") continue
      const tool = String(p.tool ?? "")
      const st = (p.state ?? {}) as Record<string, unknown>
      const input = (st.input ?? {}) as Record<string, unknown>
      if (editTools.has(tool)) {
        const fp = input.filePath ?? input.path
        if (typeof fp === "string") add(files, rel(fp))
        if (typeof input.patchText === "string") for (const m of input.patchText.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)) add(files, rel(m[1]!.trim()))
        continue
      }
      if (tool === "bash" && typeof input.command === "string") {
        const meta = (st.metadata ?? {}) as Record<string, unknown>
        const exit = typeof meta.exit === "number" ? meta.exit : undefined
        const cmd = clipBytes(flat(input.command), 120)
        add(commands, exit ? `${cmd} (exit ${exit})` : cmd)
        if (exit) {
          const line = errorLine(String(st.output ?? ""))
          if (line) {
            ident(line)
            errors.push(`${clipBytes(line, 160)} [from: ${clipBytes(cmd, 60)}]`)
            pendingError = errors.length - 1
          }
        }
      } else if (st.status === "error" && typeof st.error === "string") {
        errors.push(`${tool}: ${clipBytes(flat(st.error), 160)}`)
        pendingError = errors.length - 1
      }
    }
  }
  if (!files.length && !commands.length && !errors.length) return ""
  const ids = [...words.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([w]) => w)
  const head = `${Marker} Durable facts of this session (keep them in the summary; the full outputs stay findable with history_search {"session": "current"} and history_get):`
  const sections: Array<[string, string[]]> = [
    ["files edited", files.slice(-20)],
    ["errors met (-> what followed)", errors.slice(-8)],
    ["commands run (last)", commands.slice(-10)],
    ["identifiers", ids],
  ]
  let out = head
  for (const [name, list] of sections) {
    if (!list.length) continue
    const line = name === "files edited" || name === "identifiers" ? `\n- ${name}: ${list.join(", ")}` : `\n- ${name}:\n${list.map((l) => `  - ${l}`).join("\n")}`
    if (byteLen(out + line) > maxBytes) {
      out += clipBytes(line, Math.max(0, maxBytes - byteLen(out)))
      break
    }
    out += line
  }
  return out
}

// ---------------------------------------------------------- auto-recall cue

// Phrases that point at earlier work. Each was written from how people
// ask (the issue's examples and their variants); a test pins them, and
// ordinary requests ("fix the bug", "last line") do not match.
const cues = [
  /\b(?:like|as|what|how) (?:we|i|you) (?:did|had|fixed|handled|solved|used|decided)\b.{0,40}\b(?:last|before|earlier|previously|yesterday|the other day)\b/i,
  /\b(?:last|previous|other) (?:time|week|month|session|sprint)\b/i,
  /\b(?:the|that|our) [\w-]+(?: [\w-]+)? (?:from|we did|we had) (?:before|earlier|last \w+|yesterday)\b/i,
  /\b(?:we|you) (?:already|previously|once) (?:did|fixed|solved|decided|discussed|tried|wrote|had)\b/i,
  /\bremember (?:when|how|what|the)\b/i,
  /\b(?:earlier|previous|past|old) (?:session|conversation|chat|discussion)s?\b/i,
  /\bagain,? like before\b|\bsame as before\b/i,
]

/** True when a user's message refers to earlier work. */
export function hasCue(text: string): boolean {
  return cues.some((c) => c.test(text))
}

/** Search words of a cue message: the message without the cue phrase and filler. */
export function cueQuery(text: string): string {
  let t = text
  for (const c of cues) t = t.replace(c, " ")
  const filler = new Set("please can could would you we i me my our us let lets let's do did the a an and or to of in on for with like as that this it is be just again same what how when remember".split(" "))
  const words = t.split(/[^\w./#-]+/).filter((w) => w.length > 2 && !filler.has(w.toLowerCase()))
  return words.slice(0, 8).join(" ")
}

/** AutoRecallBytes bounds the hits injected for one turn (~250 tokens). */
export const AutoRecallBytes = 1000

/** The cited hits for a cue, as one block for the system prompt. */
export function formatCueHits(query: string, hits: Hit[], maxBytes = AutoRecallBytes): string {
  if (!hits.length) return ""
  let out = `${Marker} The user refers to earlier work; past sessions that match "${clipBytes(query, 80)}" (read one with history_read {"cursor": …}):`
  for (const h of hits) {
    const line = `\n- "${clipBytes(h.title, 60)}" (${(h.time || "").slice(0, 10)}): ${clipBytes(flat(h.snippet), 160)} cursor ${h.cursor}`
    if (byteLen(out + line) > maxBytes) break
    out += line
  }
  return out
}

// ------------------------------------------------------------------ helpers

function byteLen(s: string): number {
  return Buffer.byteLength(s, "utf8")
}

function flat(s: string): string {
  return s.replace(/\s+/g, " ").trim()
}

/** Clips to at most n UTF-8 bytes, never inside a character, marking the cut. */
export function clipBytes(s: string, n: number): string {
  if (byteLen(s) <= n) return s
  if (n <= 1) return ""
  let out = ""
  let used = 0
  for (const ch of s) {
    const b = byteLen(ch)
    if (used + b > n - 3) break // "…" is 3 bytes
    out += ch
    used += b
  }
  return out.trimEnd() + "…"
}
