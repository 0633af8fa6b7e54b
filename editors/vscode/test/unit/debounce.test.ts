import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { LatestRunner } from '../../src/debounce';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LatestRunner', () => {
  it('runs once for a burst of keystrokes, with the last value', async () => {
    const calls: string[] = [];
    const results: string[] = [];
    const r = new LatestRunner<string, string>(
      30,
      async (v) => {
        calls.push(v);
        return v.toUpperCase();
      },
      (res) => results.push(res),
    );
    for (const v of ['e', 'er', 'err', 'err_q']) r.schedule(v);
    await sleep(80);
    assert.deepEqual(calls, ['err_q']);
    assert.deepEqual(results, ['ERR_Q']);
    r.dispose();
  });

  it('drops the result of a slow, superseded search and aborts it', async () => {
    const results: string[] = [];
    const aborted: string[] = [];
    const r = new LatestRunner<string, string>(
      5,
      (v, signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => aborted.push(v));
          setTimeout(() => resolve(v), v === 'slow' ? 60 : 5);
        }),
      (res) => results.push(res),
    );
    r.schedule('slow');
    await sleep(20); // slow is in flight
    r.schedule('fast');
    await sleep(100);
    assert.deepEqual(results, ['fast']);
    assert.deepEqual(aborted, ['slow']);
    r.dispose();
  });

  it('reports errors of the newest run only, and toggles busy', async () => {
    const errors: string[] = [];
    const busy: boolean[] = [];
    const r = new LatestRunner<string, string>(
      1,
      async (v) => {
        throw new Error(`bad ${v}`);
      },
      () => assert.fail('no result expected'),
      (e) => errors.push((e as Error).message),
      (b) => busy.push(b),
    );
    r.schedule('q', true);
    await sleep(20);
    assert.deepEqual(errors, ['bad q']);
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
