import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { citationOf, commandLine, resumeOf, shellQuote } from '../../src/resume';

const S = 'ses_dd7571907ffe5vPpW7vxTE77tW';
const M = 'msg_22a8e6f1b001abcdEFGH';

describe('resumeOf', () => {
  it("prefers the server's resume", () => {
    assert.deepEqual(resumeOf({ sessionId: S, directory: '/a', resume: { cwd: '/p', argv: ['opencode', '-s', S] } }), {
      cwd: '/p',
      argv: ['opencode', '-s', S],
    });
  });
  it('else runs opencode --session <id> in the session directory (a malformed server value is ignored)', () => {
    const want = { cwd: '/tmp/proj', argv: ['opencode', '--session', S] };
    assert.deepEqual(resumeOf({ sessionId: S, directory: '/tmp/proj' }), want);
    assert.deepEqual(resumeOf({ sessionId: S, directory: '/tmp/proj', resume: { cwd: '/x', argv: [] } }), want);
    assert.deepEqual(resumeOf({ sessionId: S, directory: '/tmp/proj', resume: 'opencode' }), want);
  });
});

describe('citationOf', () => {
  it("prefers the server's citation", () => {
    assert.equal(citationOf({ sessionId: S, title: 't', citation: '  Server says (x)  ' }), 'Server says (x)');
  });
  it('else is "<title> (ses_…, msg_…, <date>)", the date in UTC', () => {
    assert.equal(citationOf({ sessionId: S, messageId: M, title: 'Investigate  nightly\nworker', time: '2026-11-29T23:54:47-02:00' }), `Investigate nightly worker (${S}, ${M}, 2026-11-30)`);
    assert.equal(citationOf({ sessionId: S }), `(untitled session) (${S})`);
    assert.equal(citationOf({ sessionId: S, title: 'T', time: 'garbage' }), `T (${S})`);
  });
});

describe('commandLine', () => {
  it('leaves plain words bare and quotes the rest for POSIX shells and PowerShell', () => {
    assert.equal(commandLine(['opencode', '--session', S]), `opencode --session ${S}`);
    assert.equal(shellQuote("it's here"), `'it'\\''s here'`);
    assert.equal(shellQuote("it's here", true), `'it''s here'`);
    assert.equal(shellQuote('$(rm -rf ~)'), `'$(rm -rf ~)'`);
  });
});
