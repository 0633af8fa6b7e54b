import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { findMatches, nextMatch, queryTerms } from '../../src/find';

describe('queryTerms', () => {
  it('takes words and "phrases", drops -exclusions and operators, longest first', () => {
    assert.deepEqual(queryTerms('quota "nightly worker" -flaky OR retry'), ['nightly worker', 'quota', 'retry']);
    assert.deepEqual(queryTerms('-"not this" ERR_QUOTA_7731'), ['err_quota_7731']);
    assert.deepEqual(queryTerms('Quota quota'), ['quota']);
    assert.deepEqual(queryTerms('   '), []);
    assert.deepEqual(queryTerms('retr* (backoff)'), ['backoff', 'retr']);
  });
});

describe('findMatches', () => {
  it('finds every occurrence case-folded, without overlaps (a longer term wins at one start)', () => {
    const text = 'Quota hit. The nightly worker ran; QUOTA again, nightly.';
    const m = findMatches(text, queryTerms('quota "nightly worker" nightly'));
    assert.deepEqual(
      m.map(([a, b]) => text.slice(a, b)),
      ['Quota', 'nightly worker', 'QUOTA', 'nightly'],
    );
  });
  it('finds nothing without terms or text', () => {
    assert.deepEqual(findMatches('abc', []), []);
    assert.deepEqual(findMatches('', ['a']), []);
  });
});

describe('nextMatch', () => {
  const m: Array<[number, number]> = [[5, 8], [20, 25], [40, 41]];
  it('goes forward past the caret and wraps at the end', () => {
    assert.equal(nextMatch(m, 0, true), 0);
    assert.equal(nextMatch(m, 5, true), 1); // the caret on a match: the next one
    assert.equal(nextMatch(m, 40, true), 0);
  });
  it('goes backward before the caret and wraps at the start', () => {
    assert.equal(nextMatch(m, 20, false), 0);
    assert.equal(nextMatch(m, 5, false), 2);
    assert.equal(nextMatch(m, 100, false), 2);
  });
  it('is -1 without matches', () => {
    assert.equal(nextMatch([], 3, true), -1);
  });
});
