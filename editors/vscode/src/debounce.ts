// A debounced, latest-wins runner for search-as-you-type. Pure, no vscode.

export interface Cancelable {
  cancel(): void;
}

/**
 * Runs task(value, signal) delayMs after the last schedule() call. Starting
 * a new run aborts the one in flight (its signal fires), and results of a
 * superseded run are dropped: onResult only ever sees the newest query.
 */
export class LatestRunner<V, R> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private generation = 0;
  private inflight: AbortController | undefined;

  constructor(
    private readonly delayMs: number,
    private readonly task: (value: V, signal: AbortSignal) => Promise<R>,
    private readonly onResult: (result: R, value: V) => void,
    private readonly onError: (err: unknown, value: V) => void = () => {},
    private readonly onBusy: (busy: boolean) => void = () => {},
  ) {}

  /** Schedules a run; immediate skips the delay (first render). */
  schedule(value: V, immediate = false): void {
    const gen = ++this.generation;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(value, gen), immediate ? 0 : this.delayMs);
  }

  private async run(value: V, gen: number): Promise<void> {
    this.timer = undefined;
    this.inflight?.abort();
    const ac = new AbortController();
    this.inflight = ac;
    this.onBusy(true);
    try {
      const r = await this.task(value, ac.signal);
      if (gen === this.generation && !ac.signal.aborted) this.onResult(r, value);
    } catch (err) {
      if (gen === this.generation && !ac.signal.aborted) this.onError(err, value);
    } finally {
      if (this.inflight === ac) {
        this.inflight = undefined;
        this.onBusy(false);
      }
    }
  }

  /** Stops the timer and aborts any run in flight. */
  dispose(): void {
    this.generation++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.inflight?.abort();
    this.inflight = undefined;
  }
}
