// RecallServer owns one `recall lsp` child process: started lazily on the
// first request, spoken to over stdio with vscode-jsonrpc (Content-Length
// framing), restarted when it dies, and shut down with OpenCode.

import { spawn, type ChildProcess } from "node:child_process"
import rpc from "vscode-jsonrpc/node.js"
import type { MessageConnection } from "vscode-jsonrpc/node.js"
import {
  ErrorCodes,
  Requests,
  type InitOptions,
  type RequestParams,
  type RequestResult,
  type RequestTypes,
  type SyncResult,
} from "./protocol.gen.js"

/** Why a call failed; the tools turn each into a message for the agent. */
export type FailureKind =
  | "unavailable" // the binary is missing, or the server cannot start
  | "timeout" // the call ran past its budget (and was cancelled)
  | "cancelled" // the tool call was aborted
  | "invalid" // the server rejected the params (-32602), e.g. a stale cursor
  | "died" // the server exited during the call
  | "failed" // any other server error

export class RecallError extends Error {
  constructor(
    message: string,
    readonly kind: FailureKind,
    readonly rpcCode?: number,
  ) {
    super(message)
    this.name = "RecallError"
  }
}

export interface ServerOptions {
  /** The recall binary. */
  command: string
  /** Arguments; default ["lsp"]. */
  args?: string[]
  initOptions?: InitOptions
  /** Budget of one request (search, read, sessions). */
  requestTimeoutMs?: number
  /** Budget of spawn + initialize. */
  startTimeoutMs?: number
  /**
   * How long the first request after a start waits for the first sync, so
   * the agent's first search sees the whole history. Past it the request
   * answers from the index as it is (the sync goes on in the background).
   */
  firstSyncMs?: number
  /** Starts allowed within restartWindowMs before the plugin gives up. */
  maxStarts?: number
  restartWindowMs?: number
  /** Grace period for shutdown/exit before the process is killed. */
  shutdownMs?: number
  env?: NodeJS.ProcessEnv
  log?: (line: string) => void
}

/**
 * Budgets. Searches over a few thousand sessions answer in well under a
 * second (the engine's own search budget is a few seconds); 20 s leaves room
 * for a cold page cache without letting a wedged server hold a tool call.
 */
export const Defaults = {
  requestTimeoutMs: 20_000,
  startTimeoutMs: 20_000,
  firstSyncMs: 30_000,
  maxStarts: 4,
  restartWindowMs: 60_000,
  shutdownMs: 2_000,
} as const

interface Instance {
  proc: ChildProcess
  conn: MessageConnection
  /** Settles (never rejects) when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  alive: boolean
  /** Fails the calls in flight when the process exits. */
  pending: Set<(e: RecallError) => void>
  /** The first sync after initialize; undefined once awaited. */
  firstSync?: Promise<unknown>
}

export interface CallOptions {
  signal?: AbortSignal
  timeoutMs?: number
}

export class RecallServer {
  private readonly opts: Required<Omit<ServerOptions, "initOptions" | "env" | "log">> & ServerOptions
  private inst?: Instance
  private starting?: Promise<Instance>
  private starts: number[] = []
  private stderrTail: string[] = []
  private disposed = false
  private exitHooked = false
  private syncing?: Promise<SyncResult | undefined>
  private syncAgain = false
  private readonly onProcessExit = () => this.inst?.proc.kill("SIGTERM")

  constructor(options: ServerOptions) {
    this.opts = {
      args: ["lsp"],
      requestTimeoutMs: Defaults.requestTimeoutMs,
      startTimeoutMs: Defaults.startTimeoutMs,
      firstSyncMs: Defaults.firstSyncMs,
      maxStarts: Defaults.maxStarts,
      restartWindowMs: Defaults.restartWindowMs,
      shutdownMs: Defaults.shutdownMs,
      ...options,
    }
  }

  /** True while a server process is up. */
  get running(): boolean {
    return this.inst?.alive === true
  }

  /** The server's pid (tests kill it to check restarts). */
  get pid(): number | undefined {
    return this.inst?.alive ? this.inst.proc.pid : undefined
  }

  /**
   * Sends a request, starting (or restarting) the server when needed; its
   * params and result are the ones the server's Go types declare for it.
   */
  async request<M extends keyof RequestTypes>(method: M, params: RequestParams<M>, call: CallOptions = {}): Promise<RequestResult<M>> {
    if (call.signal?.aborted) throw new RecallError("cancelled", "cancelled")
    const inst = await withAbort(this.ensure(), call.signal)
    if (inst.firstSync) {
      // Bounded: a huge first index must not hold the agent's call.
      const first = inst.firstSync
      inst.firstSync = undefined
      await withAbort(Promise.race([first.catch(() => undefined), delay(this.opts.firstSyncMs)]), call.signal)
    }
    return this.send<RequestResult<M>>(inst, method, params, call)
  }

  /**
   * Asks a running server to sync (after a session went idle). Never starts
   * the server: until the first tool call there is nothing to keep fresh.
   * Calls that arrive during a sync fold into one more sync after it.
   */
  sync(): Promise<SyncResult | undefined> {
    if (!this.running || this.disposed) return Promise.resolve(undefined)
    if (this.syncing) {
      this.syncAgain = true
      return this.syncing
    }
    const run = async (): Promise<SyncResult | undefined> => {
      try {
        do {
          this.syncAgain = false
          const inst = this.inst
          if (!inst?.alive) return undefined
          const res = await this.send<SyncResult>(inst, Requests.sync, {}, { timeoutMs: 5 * this.opts.requestTimeoutMs })
          this.log(`sync: idle=${res.idle} added=${res.added} updated=${res.updated} busy=${res.busy ?? false}`)
          if (!this.syncAgain) return res
        } while (true)
      } catch (err) {
        this.log(`sync: ${(err as Error).message}`)
        return undefined
      } finally {
        this.syncing = undefined
      }
    }
    this.syncing = run()
    return this.syncing
  }

  /** Stops the server: shutdown + exit, then SIGTERM, then SIGKILL. */
  async dispose(): Promise<void> {
    this.disposed = true
    process.off("exit", this.onProcessExit)
    this.exitHooked = false
    this.log("dispose")
    const inst = this.inst ?? (await this.starting?.catch(() => undefined))
    this.inst = undefined
    if (!inst?.alive) return
    const grace = this.opts.shutdownMs
    try {
      await this.send(inst, "shutdown", null, { timeoutMs: grace })
      await inst.conn.sendNotification("exit")
    } catch {
      // a wedged server gets the signals below
    }
    inst.proc.stdin?.end()
    if (await settlesWithin(inst.exited, grace)) return
    inst.proc.kill("SIGTERM")
    if (await settlesWithin(inst.exited, grace)) return
    inst.proc.kill("SIGKILL")
    await settlesWithin(inst.exited, grace)
  }

  private ensure(): Promise<Instance> {
    if (this.disposed) return Promise.reject(new RecallError("the recall plugin is shutting down", "unavailable"))
    if (this.inst?.alive) return Promise.resolve(this.inst)
    if (!this.starting) {
      this.starting = this.start().finally(() => {
        this.starting = undefined
      })
    }
    return this.starting
  }

  private async start(): Promise<Instance> {
    const now = Date.now()
    this.starts = this.starts.filter((t) => now - t < this.opts.restartWindowMs)
    if (this.starts.length >= this.opts.maxStarts) {
      throw new RecallError(
        `the recall server stopped ${this.starts.length} times in the last ${Math.round(this.opts.restartWindowMs / 1000)} s and is not restarted for now` +
          this.stderrHint(),
        "unavailable",
      )
    }
    this.starts.push(now)
    this.stderrTail = []
    const { command, args } = this.opts
    this.log(`start: ${command} ${args.join(" ")}`)
    let proc: ChildProcess
    try {
      proc = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], env: this.opts.env ?? process.env })
    } catch (err) {
      throw notFound(command, err as Error)
    }
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      proc.once("exit", (code, signal) => resolve({ code, signal }))
    })
    await new Promise<void>((resolve, reject) => {
      proc.once("spawn", resolve)
      proc.once("error", (err) => reject(notFound(command, err)))
    })
    proc.on("error", (err) => this.log(`process: ${err.message}`))
    proc.stderr?.setEncoding("utf8")
    proc.stderr?.on("data", (chunk: string) => this.keepStderr(chunk))
    // A failed write to a dead server must not become an unhandled error.
    proc.stdin?.on("error", () => undefined)

    const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout!), new QuietWriter(proc.stdin!))
    conn.onNotification("window/logMessage", (p: { message?: string }) => this.log(`server: ${p.message ?? ""}`))
    conn.onRequest("window/workDoneProgress/create", () => null)
    conn.onRequest("workspace/codeLens/refresh", () => null)
    const inst: Instance = { proc, conn, exited, alive: true, pending: new Set() }
    // A broken pipe (EPIPE, unreadable frames) ends this instance: no more
    // writes into it (each would fail again, some outside any caller's
    // promise); the next call starts a new server.
    conn.onError(([err]) => {
      this.log(`connection: ${err.message}`)
      if (!inst.alive) return
      inst.alive = false
      const broke = new RecallError(`the recall server connection broke (${err.message})` + this.stderrHint(), "died")
      for (const fail of [...inst.pending]) fail(broke)
      proc.kill("SIGKILL")
    })
    conn.listen()
    exited.then(({ code, signal }) => {
      inst.alive = false
      this.log(`exit: code=${code} signal=${signal}`)
      const died = new RecallError(`the recall server exited (${signal ?? `code ${code}`})` + this.stderrHint(), "died")
      for (const fail of [...inst.pending]) fail(died)
      conn.dispose()
      if (this.inst === inst) this.inst = undefined
    })
    if (!this.exitHooked) {
      process.on("exit", this.onProcessExit)
      this.exitHooked = true
    }

    try {
      await this.send(
        inst,
        "initialize",
        {
          processId: process.pid,
          clientInfo: { name: "opencode-recall" },
          rootUri: null,
          capabilities: {},
          initializationOptions: this.opts.initOptions ?? {},
        },
        { timeoutMs: this.opts.startTimeoutMs },
      )
      conn.sendNotification("initialized", {}).catch(() => undefined)
    } catch (err) {
      proc.kill("SIGKILL")
      const e = err as RecallError
      throw new RecallError(`the recall server did not start: ${e.message}`, "unavailable", e.rpcCode)
    }
    inst.firstSync = this.send(inst, Requests.sync, {}, { timeoutMs: 10 * this.opts.requestTimeoutMs })
    inst.firstSync.catch((err: Error) => this.log(`first sync: ${err.message}`))
    this.inst = inst
    return inst
  }

  /** One request on one instance: time-boxed, cancellable, failing fast when the process exits. */
  private send<R>(inst: Instance, method: string, params: unknown, call: CallOptions): Promise<R> {
    if (!inst.alive) return Promise.reject(new RecallError("the recall server is not running" + this.stderrHint(), "died"))
    const budget = call.timeoutMs ?? this.opts.requestTimeoutMs
    const cts = new rpc.CancellationTokenSource()
    let timer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    let fail: (e: RecallError) => void = () => undefined
    const cleanup = () => {
      inst.pending.delete(fail)
      clearTimeout(timer)
      if (onAbort) call.signal?.removeEventListener("abort", onAbort)
      cts.dispose()
    }
    return new Promise<R>((resolve, reject) => {
      fail = (e: RecallError) => {
        // Cancelling the token sends $/cancelRequest; the server stops the query.
        if (inst.alive) {
          try {
            cts.cancel()
          } catch {
            // the connection closed under us: nothing to cancel
          }
        }
        cleanup()
        reject(e)
      }
      timer = setTimeout(
        () => fail(new RecallError(`${method} timed out after ${formatMs(budget)} and was cancelled`, "timeout")),
        budget,
      )
      if (call.signal) {
        onAbort = () => fail(new RecallError("cancelled", "cancelled", ErrorCodes.requestCancelled))
        call.signal.addEventListener("abort", onAbort, { once: true })
      }
      inst.pending.add(fail)
      const sent = params === null ? inst.conn.sendRequest<R>(method, cts.token) : inst.conn.sendRequest<R>(method, params, cts.token)
      const t0 = Date.now()
      sent.then(
        (res) => {
          this.log(`${method}: ${Date.now() - t0} ms`)
          cleanup()
          resolve(res)
        },
        (err: unknown) => {
          cleanup()
          reject(toRecallError(err, inst))
        },
      )
    })
  }

  private keepStderr(chunk: string): void {
    for (const line of chunk.split("\n")) {
      if (line.trim() === "") continue
      this.log(`stderr: ${line}`)
      // Routine slog lines are no help in an error message for the agent.
      if (/\blevel=(INFO|DEBUG)\b/.test(line)) continue
      this.stderrTail.push(line)
    }
    if (this.stderrTail.length > 10) this.stderrTail.splice(0, this.stderrTail.length - 10)
  }

  private stderrHint(): string {
    const last = this.stderrTail.slice(-3).join(" | ")
    return last ? `; server said: ${clip(last, 400)}` : ""
  }

  private log(line: string): void {
    this.opts.log?.(line)
  }
}

/**
 * A writer whose failures surface only through onError. vscode-jsonrpc 8.2.1
 * rethrows a failed request write inside an async Promise executor, which
 * becomes an unhandled rejection in the host (OpenCode); here a failed write
 * resolves, onError marks the instance broken and fails its calls in flight.
 */
class QuietWriter extends rpc.StreamMessageWriter {
  override async write(msg: rpc.Message): Promise<void> {
    try {
      await super.write(msg)
    } catch {
      // reported through onError
    }
  }
}

function toRecallError(err: unknown, inst: Instance): RecallError {
  if (err instanceof RecallError) return err
  if (err instanceof rpc.ResponseError) {
    switch (err.code) {
      case ErrorCodes.invalidParams:
        return new RecallError(err.message, "invalid", err.code)
      case ErrorCodes.requestCancelled:
        return new RecallError("cancelled", "cancelled", err.code)
    }
    // vscode-jsonrpc's own codes (-32099 write error, -32098 read error,
    // -32097 pending response rejected, -32096 connection inactive) mean the
    // pipe broke.
    if (!inst.alive || (err.code >= -32099 && err.code <= -32096)) {
      return new RecallError(`the recall server stopped responding (${err.message})`, "died", err.code)
    }
    return new RecallError(err.message, "failed", err.code)
  }
  // Not a JSON-RPC answer: the pipe broke (EPIPE, connection closed), so
  // the process is gone or going; the next call starts a new one.
  const msg = err instanceof Error ? err.message : String(err)
  return new RecallError(`the recall server stopped responding (${msg})`, "died")
}

function notFound(command: string, err: Error & { code?: string }): RecallError {
  if (err.code === "ENOENT") {
    return new RecallError(
      `the recall binary was not found (${command}); install recall on PATH, or set RECALL_BIN (or the plugin option "bin") to its path`,
      "unavailable",
    )
  }
  return new RecallError(`cannot start ${command}: ${err.message}`, "unavailable")
}

function withAbort<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p
  if (signal.aborted) return Promise.reject(new RecallError("cancelled", "cancelled"))
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new RecallError("cancelled", "cancelled"))
    signal.addEventListener("abort", onAbort, { once: true })
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort)
        resolve(v)
      },
      (e) => {
        signal.removeEventListener("abort", onAbort)
        reject(e)
      },
    )
  })
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}

async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let done = false
  await Promise.race([p.then(() => (done = true)), delay(ms)])
  return done
}

function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s` : `${ms} ms`
}

function clip(s: string, n: number): string {
  return s.length <= n ? s : s.slice(0, n - 1) + "…"
}
