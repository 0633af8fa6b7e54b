import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { classifyInput, displaySegment, messageIndexAt, messageLine, sessionUri, transcriptUri } from '../../src/uri';

describe('transcriptUri / sessionUri', () => {
  it('builds the server contract form recall:/session/<id>', () => {
    assert.equal(transcriptUri({ sessionId: 'ses_dd7571907ffe5vPpW7vxTE77tW' }), 'recall:/session/ses_dd7571907ffe5vPpW7vxTE77tW');
  });
  it('puts around and limit in a stable order, unencoded = and &', () => {
    assert.equal(transcriptUri({ sessionId: 'ses_a', around: 'msg_b', limit: 1 }), 'recall:/session/ses_a?around=msg_b&limit=1');
  });
  it('rejects ids that would escape the path or the query', () => {
    assert.throws(() => transcriptUri({ sessionId: '../etc' }), /not a session id/);
    assert.throws(() => transcriptUri({ sessionId: 'ses_a', around: 'msg_b&mode=full' }), /not a message id/);
  });
  it('names the document after the session title (the tab shows it): a display segment the server ignores', () => {
    assert.equal(
      transcriptUri({ sessionId: 'ses_a', title: 'Investigate nightly worker failure' }),
      'recall:/session/ses_a/Investigate%20nightly%20worker%20failure.md',
    );
    assert.equal(
      sessionUri({ id: 'ses_a', title: 'Fix a/b? #1 100%' }),
      'recall:/session/ses_a/Fix%20a-b%3F%20%231%20100%25.md',
      'no path separator, query or fragment escapes the segment',
    );
    assert.equal(decodeURIComponent(displaySegment('x'.repeat(200))).length, 80 + '.md'.length);
    assert.equal(transcriptUri({ sessionId: 'ses_a', title: ' \n ' }), 'recall:/session/ses_a', 'a blank title adds nothing');
    assert.equal(transcriptUri({ sessionId: 'ses_a', title: 'T', around: 'msg_b', limit: 1 }), 'recall:/session/ses_a/T.md?around=msg_b&limit=1');
  });
  it("opens the server's uri for a session when it gives one, else builds it from the id", () => {
    assert.equal(sessionUri({ id: 'ses_a', uri: 'recall:/session/laptop/ses_a/Fix%20it.md' }), 'recall:/session/laptop/ses_a/Fix%20it.md');
    assert.equal(sessionUri({ id: 'ses_a' }), 'recall:/session/ses_a');
    assert.equal(sessionUri({ id: 'ses_a', uri: 'https://example.invalid/' }), 'recall:/session/ses_a', 'only a recall: URI is a transcript');
  });
});

describe('classifyInput', () => {
  it('passes cursors through unread, whatever their shape, with quotes or backticks around them dropped', () => {
    for (const cursor of ['rc1.c2VzX2RkNzU3MTkwN2ZmZTV2UHBXN3Z4VEU3N3RXfHx8aGVhZA.fCOdvFRWVF8otMrj', 'local:prt_dd75W.h.Xy7q9Zk2']) {
      assert.deepEqual(classifyInput(cursor), { kind: 'cursor', cursor });
      assert.deepEqual(classifyInput(` \`${cursor}\` `), { kind: 'cursor', cursor });
    }
  });
  it('recognises session ids', () => {
    assert.deepEqual(classifyInput('ses_dd7571907ffe5vPpW7vxTE77tW'), { kind: 'session', sessionId: 'ses_dd7571907ffe5vPpW7vxTE77tW' });
  });
  it('keeps recall: URIs whole (as in hover links): the server reads them', () => {
    assert.deepEqual(classifyInput('recall:/session/ses_a?around=msg_b'), { kind: 'uri', uri: 'recall:/session/ses_a?around=msg_b' });
    assert.deepEqual(classifyInput('<recall:/session/laptop/ses_a/T.md>'), { kind: 'uri', uri: 'recall:/session/laptop/ses_a/T.md' });
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

describe('messageIndexAt', () => {
  const md = ['# T', '', '`ses_x` · …', '', '## 1. user · t', 'hi', '```', '## 9. not a heading', '```', '## 2. assistant · t', 'ok'].join('\n');
  it('names the message whose section holds the line, skipping fenced headings', () => {
    assert.equal(messageIndexAt(md, 0), 0);
    assert.equal(messageIndexAt(md, 4), 1);
    assert.equal(messageIndexAt(md, 8), 1);
    assert.equal(messageIndexAt(md, 10), 2);
    assert.equal(messageIndexAt(md, 99), 2);
  });
});
