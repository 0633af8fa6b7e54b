import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import {
  ageString,
  compactDirectory,
  distinctHits,
  escapeIcons,
  fileSessionsTitle,
  focusSnippet,
  hitItem,
  oneLine,
  plural,
  sessionItem,
  shortenDirectory,
} from '../../src/format';
import type { Hit, SessionInfo } from '../../src/protocol.gen';

const NOW = Date.parse('2026-11-29T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('ageString', () => {
  const cases: Array<[string, string]> = [
    [ago(5_000), 'just now'],
    [ago(59_999), 'just now'],
    [ago(MIN), '1m ago'],
    [ago(59 * MIN), '59m ago'],
    [ago(HOUR), '1h ago'],
    [ago(23 * HOUR + 59 * MIN), '23h ago'],
    [ago(DAY), '1d ago'],
    [ago(13 * DAY), '13d ago'],
    [ago(14 * DAY), '2w ago'],
    [ago(52 * 7 * DAY), '52w ago'],
    [ago(400 * DAY), '2025-10-25'],
  ];
  for (const [iso, want] of cases) {
    it(`${iso} -> ${want}`, () => assert.equal(ageString(iso, NOW), want));
  }
  it('treats a few seconds in the future (clock skew) as just now', () => {
    assert.equal(ageString(new Date(NOW + 10_000).toISOString(), NOW), 'just now');
  });
  it('shows a real future date as the date', () => {
    assert.equal(ageString('2027-01-02T00:00:00Z', NOW), '2027-01-02');
  });
  it('passes unparseable input through', () => {
    assert.equal(ageString('yesterday-ish', NOW), 'yesterday-ish');
    assert.equal(ageString('', NOW), '');
  });
});

describe('shortenDirectory', () => {
  it('replaces the home prefix with ~', () => {
    assert.equal(shortenDirectory('/home/ann/src/ledger', '/home/ann'), '~/src/ledger');
    assert.equal(shortenDirectory('/home/ann', '/home/ann/'), '~');
  });
  it('does not touch a sibling that only shares a prefix', () => {
    assert.equal(shortenDirectory('/home/anna/x', '/home/ann'), '/home/anna/x');
  });
  it('ignores a root or missing home', () => {
    assert.equal(shortenDirectory('/srv/x', '/'), '/srv/x');
    assert.equal(shortenDirectory('/srv/x'), '/srv/x');
  });
});

describe('oneLine / escapeIcons / plural', () => {
  it('collapses whitespace and truncates with an ellipsis', () => {
    assert.equal(oneLine('  a\n\n b\tc  '), 'a b c');
    const s = oneLine('x'.repeat(300), 10);
    assert.equal(s.length, 10);
    assert.ok(s.endsWith('…'));
  });
  it('keeps history text from becoming codicons', () => {
    assert.equal(escapeIcons('run $(rm -rf) now'), 'run $\u200b(rm -rf) now');
  });
  it('pluralises', () => {
    assert.equal(plural(1, 'turn'), '1 turn');
    assert.equal(plural(0, 'turn'), '0 turns');
  });
});

const hit: Hit = {
  cursor: 'rc1.abc.def',
  source: 'local',
  uri: 'recall:/session/ses_1?source=local',
  sessionId: 'ses_1',
  messageId: 'msg_1',
  partId: 'prt_1',
  title: 'Investigate nightly worker failure',
  directory: '/home/ann/projects/ledger',
  role: 'assistant',
  kind: 'output',
  tool: 'bash',
  time: ago(3 * HOUR),
  score: 1,
  snippet: '…ERROR upstream rejected\n batch=118 code=ERR_QUOTA_7731 ',
  highlights: null,
};

describe('hitItem', () => {
  it('shows title, directory · age · source, and the snippet on one line', () => {
    assert.deepEqual(hitItem(hit, NOW, '/home/ann'), {
      label: 'Investigate nightly worker failure',
      description: '~/projects/ledger · 3h ago · assistant · bash',
      detail: '…ERROR upstream rejected batch=118 code=ERR_QUOTA_7731',
      alwaysShow: true,
    });
  });
  it('falls back to the session id for an untitled session and skips empty parts', () => {
    const item = hitItem({ ...hit, title: '', directory: '', tool: '' }, NOW);
    assert.equal(item.label, 'ses_1');
    assert.equal(item.description, '3h ago · assistant');
  });
});

describe('sessionItem', () => {
  const s: SessionInfo = {
    id: 'ses_2',
    title: 'Audit currency handling',
    directory: '/home/ann/projects/ledger',
    created: ago(3 * DAY),
    updated: ago(2 * DAY),
    messages: 3,
    turns: 1,
    toolCalls: 1,
    firstPrompt: 'Audit\nthe currency code',
    children: [{ id: 'ses_3', source: 'local', title: 'sub' }],
    cursor: 'rc1.x.y',
    source: 'local',
    uri: 'recall:/session/ses_2?source=local',
  };
  it('shows counts, subagents and the first prompt', () => {
    assert.deepEqual(sessionItem(s, NOW, '/home/ann'), {
      label: 'Audit currency handling',
      description: '~/projects/ledger · 2d ago',
      detail: '3 messages, 1 turn, 1 tool call, 1 subagent — Audit the currency code',
      alwaysShow: true,
    });
  });
  it('marks archived sessions and tolerates null children', () => {
    const item = sessionItem({ ...s, archived: true, children: null, firstPrompt: '' }, NOW);
    assert.equal(item.detail, '3 messages, 1 turn, 1 tool call, archived');
  });
});

describe('compactDirectory / focusSnippet', () => {
  it('keeps the tail of a long directory', () => {
    assert.equal(compactDirectory('/tmp/ocgen/recall-v1/projects/ledger', 30), '…/recall-v1/projects/ledger');
    assert.equal(compactDirectory('~/src/x'), '~/src/x');
  });
  it('moves the first match (UTF-8 byte offsets) near the start', () => {
    const snippet =
      '…00:07Z INFO posted 40/42 invoices 2026-03-02T01:00:09Z ERROR upstream rejected batch=118 code=ERR_QUOTA_7731 (monthly API quota exhausted)';
    const start = Buffer.byteLength(snippet.slice(0, snippet.indexOf('ERR_QUOTA')), 'utf8');
    const error = Buffer.byteLength(snippet.slice(0, snippet.indexOf('ERROR')), 'utf8');
    const got = focusSnippet(snippet, [[error, error + 5], [start, start + 14], [start + 4, start + 14]], 20);
    assert.ok(got.startsWith('…'), got);
    assert.ok(got.indexOf('ERR_QUOTA_7731') <= 22, got);
    assert.ok(!got.startsWith('…ERR'), 'keeps some context before the match');
  });
  it('leaves a snippet whose match is already near the start alone', () => {
    assert.equal(focusSnippet('a match here', [[2, 7]]), 'a match here');
    assert.equal(focusSnippet('no highlights', null), 'no highlights');
  });
});

describe('distinctHits', () => {
  const h = (over: Partial<Hit>): Hit => ({ ...hit, ...over });
  // The server's answer to "nightly worker" on the v1 fixture (shortened):
  // the session's title hit first, then its content hits.
  const title = h({ cursor: 'c-title', partId: '', kind: 'title', role: '', tool: '', snippet: hit.title });
  const prompt = h({ cursor: 'c-prompt', partId: 'prt_p', kind: 'text', role: 'user', tool: '', snippet: 'The nightly invoice worker failed' });
  const call = h({ cursor: 'c-call', partId: 'prt_b', kind: 'tool', snippet: 'bash tail -n 4 logs/worker.log' });
  const output = h({ cursor: 'c-call', partId: 'prt_b', kind: 'output', snippet: 'ERROR upstream rejected' });
  const other = h({ sessionId: 'ses_2', title: 'Onboarding notes', cursor: 'c-other', partId: 'prt_o', kind: 'text', snippet: 'worker.py' });

  it('drops the title hit of a session that has content hits, so a content row is row 1', () => {
    const got = distinctHits([title, prompt, other]);
    assert.deepEqual(got.map((x) => x.cursor), ['c-prompt', 'c-other']);
  });
  it('keeps a title hit when it is all its session has', () => {
    const lone = h({ sessionId: 'ses_3', cursor: 'c-lone', partId: '', kind: 'title', snippet: hit.title });
    assert.deepEqual(distinctHits([lone, other]).map((x) => x.cursor), ['c-lone', 'c-other']);
  });
  it('shows a part once: a tool call and its output share a cursor and a part', () => {
    assert.deepEqual(distinctHits([call, output, prompt]).map((x) => x.kind), ['tool', 'text']);
    assert.equal(distinctHits([call, h({ ...output, cursor: 'c-out' })]).length, 1, 'same part, another cursor');
  });
  it('shows a snippet once per session, but the same text in another session again', () => {
    const again = h({ cursor: 'c-again', partId: 'prt_q', snippet: ' The nightly  invoice worker failed' });
    const elsewhere = h({ sessionId: 'ses_4', cursor: 'c-else', partId: 'prt_r', snippet: prompt.snippet });
    assert.deepEqual(distinctHits([prompt, again, elsewhere]).map((x) => x.cursor), ['c-prompt', 'c-else']);
  });
  it('keeps the server order otherwise, and takes null', () => {
    assert.deepEqual(distinctHits([other, prompt]).map((x) => x.cursor), ['c-other', 'c-prompt']);
    assert.deepEqual(distinctHits(null), []);
  });
  it('does not repeat the title as the snippet of a title row', () => {
    assert.equal(hitItem(title, NOW).detail, 'the session title matches');
  });
});

describe('plurals', () => {
  it('says 1 past session, 2 past sessions in the code lens pick', () => {
    assert.equal(fileSessionsTitle(1, '/w/ledger/worker.py'), 'Recall: 1 past session touched worker.py');
    assert.equal(fileSessionsTitle(2, 'C:\\w\\worker.py'), 'Recall: 2 past sessions touched worker.py');
    assert.equal(fileSessionsTitle(0, 'x.py'), 'Recall: 0 past sessions touched x.py');
  });
});
