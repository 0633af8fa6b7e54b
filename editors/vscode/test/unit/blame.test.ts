import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { blameMarks, blameRanges, blameSummary, markAt, pitfallsBySession } from '../../src/blame';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const S = 'ses_dd7571907ffe5vPpW7vxTE77tW';

describe('blame', () => {
  const res = {
    path: '/p/worker.py',
    attributed: 5,
    lines: 9,
    ranges: [
      { startLine: 1, endLine: 1, sessionId: S, messageId: 'msg_a', title: 'Investigate nightly worker failure', time: '2026-11-27T12:00:00Z', tool: 'edit', uri: 'recall:/x?around=msg_a' },
      { startLine: 4, endLine: 7, sessionId: S, messageId: 'msg_b', title: 'Investigate nightly worker failure', time: '2026-11-29T09:00:00Z' },
      { startLine: 9, endLine: 12, sessionId: 'ses_other', title: '' },
      { startLine: 3, endLine: 2, sessionId: S },
      { startLine: 'x', endLine: 2, sessionId: S },
    ],
  };
  it('keeps well-formed ranges only', () => {
    assert.deepEqual(blameRanges(res).map((r) => r.startLine), [1, 4, 9]);
    assert.deepEqual(blameRanges(null), []);
    assert.deepEqual(blameRanges({ ranges: 'no' }), []);
  });
  it('marks each range with its title and age, 0-based, clipped to the document', () => {
    const marks = blameMarks(blameRanges(res), 10, NOW);
    assert.deepEqual(marks.map((m) => [m.startLine, m.endLine, m.label]), [
      [0, 0, 'Investigate nightly worker failure · 2d ago'],
      [3, 6, 'Investigate nightly worker failure · 3h ago'],
      [8, 9, 'ses_other'],
    ]);
    assert.equal(marks[0]!.uri, 'recall:/x?around=msg_a');
    assert.match(marks[0]!.hover, /\(edit\), 2d ago: line 1$/);
    assert.match(marks[1]!.hover, /lines 4–7$/);
    assert.equal(markAt(marks, 5)?.range.messageId, 'msg_b');
    assert.equal(markAt(marks, 1), undefined);
  });
  it('summarises what the server counted', () => {
    assert.equal(blameSummary({ attributed: 5, lines: 9 }, blameRanges(res)), '5 of 9 lines from 2 past sessions');
    assert.equal(blameSummary({ attributed: 1, lines: 1 }, blameRanges({ ranges: [res.ranges[0]] })), '1 of 1 line from 1 past session');
  });
  it('groups pitfalls by session, whatever the error field is called', () => {
    const p = pitfallsBySession({ pitfalls: [{ sessionId: S, error: 'KeyError: x', time: 't' }, { session: S, line: 'exit 1' }, { sessionId: 'ses_b' }] });
    assert.deepEqual(p.get(S)?.map((x) => x.error), ['KeyError: x', 'exit 1']);
    assert.equal(p.has('ses_b'), false);
    assert.equal(pitfallsBySession({}).size, 0);
  });
});
