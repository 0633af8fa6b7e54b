import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { LatestRunner } from '../../src/debounce';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A promise settled by the runner's callbacks, with a generous guard so a loaded CI box cannot flake it. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const p = new Promise<T>((r) => (resolve = r));
  const guard = setTimeout(() => resolve(undefined as T), 5000);
  return { p: p.finally(() => clearTimeout(guard)), resolve };
}

describe('LatestRunner', () => {
  it('runs once for a burst of keystrokes, with the last value', async () => {
    const calls: string[] = [];
    const done = deferred<string>();
    const r = new LatestRunner<string, string>(
      30,
      async (v) => {
        calls.push(v);
        return v.toUpperCase();
      },
      (res) => done.resolve(res),
    );
    for (const v of ['e', 'er', 'err', 'err_q']) r.schedule(v);
    assert.equal(await done.p, 'ERR_Q');
    assert.deepEqual(calls, ['err_q']);
    r.dispose();
  });

  it('drops the result of a slow, superseded search and aborts it', async () => {
    const results: string[] = [];
    const aborted: string[] = [];
    const started = deferred<void>();
    const done = deferred<void>();
    const release: Record<string, () => void> = {};
    const r = new LatestRunner<string, string>(
      1,
      (v, signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => aborted.push(v));
          release[v] = () => resolve(v);
          if (v === 'slow') started.resolve();
          else resolve(v);
        }),
      (res) => {
        results.push(res);
        done.resolve();
      },
    );
    r.schedule('slow');
    await started.p; // slow is in flight
    r.schedule('fast');
    await done.p;
    release.slow?.(); // the stale answer arrives late and must be ignored
    await sleep(10);
    assert.deepEqual(results, ['fast']);
    assert.deepEqual(aborted, ['slow']);
    r.dispose();
  });

  it('reports errors of the newest run only, and toggles busy', async () => {
    const busy: boolean[] = [];
    const failed = deferred<string>();
    const r = new LatestRunner<string, string>(
      1,
      async (v) => {
        throw new Error(`bad ${v}`);
      },
      () => assert.fail('no result expected'),
      (e) => failed.resolve((e as Error).message),
      (b) => busy.push(b),
    );
    r.schedule('q', true);
    assert.equal(await failed.p, 'bad q');
    await sleep(5);
    assert.deepEqual(busy, [true, false]);
    r.dispose();
  });

  it('does nothing after dispose', async () => {
    let ran = false;
    const r = new LatestRunner<string, string>(5, async (v) => ((ran = true), v), () => {});
    r.schedule('x');
    r.dispose();
    await sleep(30);
    assert.equal(ran, false);
  });
});
