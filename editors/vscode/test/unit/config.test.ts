import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';

import { expandPath, serverLaunch } from '../../src/config';
import { rewriteRecallLinks } from '../../src/links';

describe('serverLaunch', () => {
  it('leaves the server to resolveServer when serverPath is unset, with no initializationOptions', () => {
    assert.deepEqual(serverLaunch({}), { args: ['lsp'], initializationOptions: {} });
    assert.deepEqual(serverLaunch({ serverPath: '  ', databasePath: '', indexPath: undefined }), {
      args: ['lsp'],
      initializationOptions: {},
    });
  });
  it('maps serverPath, databasePath and indexPath (db/index) with ~ and ${workspaceFolder} expanded', () => {
    const got = serverLaunch(
      { serverPath: '~/bin/recall', databasePath: '${workspaceFolder}/opencode.db', indexPath: '${userHome}/idx.db' },
      { home: '/home/ann', workspaceFolder: '/w' },
    );
    assert.deepEqual(got, {
      serverPath: '/home/ann/bin/recall',
      args: ['lsp'],
      initializationOptions: { db: '/w/opencode.db', index: '/home/ann/idx.db' },
    });
  });
  it('leaves ~user and mid-path tildes alone', () => {
    assert.equal(expandPath('~bob/x', { home: '/home/ann' }), '~bob/x');
    assert.equal(expandPath('/a/~/b', { home: '/home/ann' }), '/a/~/b');
  });
});

describe('rewriteRecallLinks', () => {
  it('turns recall: links into command links carrying the URI', () => {
    const { text, changed } = rewriteRecallLinks('**t** [open transcript](recall:/session/ses_a?around=msg_b) and [web](https://x)');
    assert.equal(changed, true);
    const m = /\(command:recall\.openUri\?([^)]+)\)/.exec(text);
    assert.ok(m, text);
    assert.deepEqual(JSON.parse(decodeURIComponent(m[1]!)), ['recall:/session/ses_a?around=msg_b']);
    assert.ok(text.includes('[web](https://x)'));
  });
  it('reports no change when there is no recall: link', () => {
    assert.deepEqual(rewriteRecallLinks('plain'), { text: 'plain', changed: false });
  });
});
