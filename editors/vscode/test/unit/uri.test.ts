import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { classifyInput, formatUri, messageLine, parseTranscriptUri, transcriptUri } from '../../src/uri';

describe('transcriptUri / formatUri', () => {
  it('builds the server contract form recall:/session/<id>', () => {
    const u = transcriptUri({ sessionId: 'ses_dd7571907ffe5vPpW7vxTE77tW' });
    assert.deepEqual(u, { scheme: 'recall', path: '/session/ses_dd7571907ffe5vPpW7vxTE77tW', query: '' });
    assert.equal(formatUri(u), 'recall:/session/ses_dd7571907ffe5vPpW7vxTE77tW');
  });
  it('puts around, mode, limit and format in a stable order, unencoded = and &', () => {
    const u = transcriptUri({ sessionId: 'ses_a', around: 'msg_b', mode: 'around', limit: 1, format: 'chatml' });
    assert.equal(formatUri(u), 'recall:/session/ses_a?around=msg_b&mode=around&limit=1&format=chatml');
  });
  it('rejects a session id that would escape the path', () => {
    assert.throws(() => transcriptUri({ sessionId: '../etc' }), /not a session id/);
  });
  it('round-trips through parseTranscriptUri', () => {
    const t = { sessionId: 'ses_a', around: 'msg_b', mode: 'full' as const, limit: 20, format: 'markdown' as const };
    assert.deepEqual(parseTranscriptUri(transcriptUri(t)), t);
  });
  it('drops unknown modes and junk limits, and refuses other schemes and paths', () => {
    assert.deepEqual(parseTranscriptUri({ scheme: 'recall', path: '/session/ses_a', query: 'mode=sideways&limit=-3' }), {
      sessionId: 'ses_a',
    });
    assert.equal(parseTranscriptUri({ scheme: 'file', path: '/session/ses_a', query: '' }), undefined);
    assert.equal(parseTranscriptUri({ scheme: 'recall', path: '/sessions/ses_a', query: '' }), undefined);
  });
});

describe('classifyInput', () => {
  const cursor = 'rc1.c2VzX2RkNzU3MTkwN2ZmZTV2UHBXN3Z4VEU3N3RXfHx8aGVhZA.fCOdvFRWVF8otMrj';
  it('recognises cursors, with quotes or backticks around them', () => {
    assert.deepEqual(classifyInput(cursor), { kind: 'cursor', cursor });
    assert.deepEqual(classifyInput(` \`${cursor}\` `), { kind: 'cursor', cursor });
  });
  it('recognises session ids', () => {
    assert.deepEqual(classifyInput('ses_dd7571907ffe5vPpW7vxTE77tW'), { kind: 'session', sessionId: 'ses_dd7571907ffe5vPpW7vxTE77tW' });
  });
  it('recognises recall: URIs (as in hover links)', () => {
    assert.deepEqual(classifyInput('recall:/session/ses_a?around=msg_b'), { kind: 'uri', target: { sessionId: 'ses_a', around: 'msg_b' } });
    assert.equal(classifyInput('recall:/nope').kind, 'invalid');
  });
  it('explains why a message id or junk is not enough', () => {
    const m = classifyInput('msg_228a8e71b001xn0ZJQ343fSPfT');
    assert.equal(m.kind, 'invalid');
    assert.match((m as { message: string }).message, /session id/);
    assert.equal(classifyInput('').kind, 'invalid');
    assert.equal(classifyInput('hello world').kind, 'invalid');
  });
});

describe('messageLine', () => {
  const md = [
    '# Title',
    '',
    '## 1. user · 2026-11-29T18:54:47Z',
    'hello',
    '```',
    '## 2. not a heading inside a fence',
    '```',
    '## 2. assistant · 2026-11-29T18:54:48Z',
    '## 12. user · x',
  ].join('\n');
  it('finds the heading of message n outside code fences', () => {
    assert.equal(messageLine(md, 1), 2);
    assert.equal(messageLine(md, 2), 7);
    assert.equal(messageLine(md, 12), 8);
  });
  it('returns -1 when the message is not in the document', () => {
    assert.equal(messageLine(md, 3), -1);
  });
});
