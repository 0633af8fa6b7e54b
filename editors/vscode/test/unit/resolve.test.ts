import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { bundledServerPath, describeServer, notFoundMessage, resolveServer, vsixTarget } from '../../src/server';

// Real files in a scratch dir: the probe is node's fs, as in the extension.
describe('resolveServer', () => {
  let dir: string;
  let ext: string; // an installed extension with a bundled server
  let bare: string; // the target-less package: no server/
  let binDir: string; // a PATH directory holding recall
  let emptyDir: string; // a PATH directory without it
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-resolve-'));
    ext = path.join(dir, 'ext');
    bare = path.join(dir, 'bare');
    binDir = path.join(dir, 'bin');
    emptyDir = path.join(dir, 'empty');
    for (const d of [path.join(ext, 'server'), bare, binDir, emptyDir]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(ext, 'server', 'recall'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(binDir, 'recall'), '#!/bin/sh\n', { mode: 0o755 });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const PATH = () => [emptyDir, binDir].join(':');

  it('uses recall.serverPath when it is set, before the bundled binary and PATH', async () => {
    const mine = path.join(binDir, 'recall');
    const r = await resolveServer({ serverPath: mine, extensionPath: ext, platform: 'linux', pathEnv: PATH() });
    assert.deepEqual(r.ok && [r.command, r.source], [mine, 'setting']);
  });

  it('reports a wrong recall.serverPath instead of silently starting another binary', async () => {
    const r = await resolveServer({ serverPath: path.join(dir, 'nope'), extensionPath: ext, platform: 'linux', pathEnv: PATH() });
    assert.equal(r.ok, false);
    assert.deepEqual(r.tried.map((t) => t.source), ['setting']);
    const msg = notFoundMessage(r.tried, 'linux-x64', '0.1.0');
    assert.match(msg, /recall\.serverPath/);
    assert.ok(msg.includes(path.join(dir, 'nope')) && msg.includes('does not exist'), msg);
  });

  it('prefers the bundled binary to recall on PATH', async () => {
    const r = await resolveServer({ extensionPath: ext, platform: 'linux', pathEnv: PATH() });
    assert.deepEqual(r.ok && [r.command, r.source], [bundledServerPath(ext, 'linux'), 'bundled']);
  });

  it('makes a bundled binary that lost its mode bits executable again', async () => {
    const p = path.join(ext, 'server', 'recall');
    fs.chmodSync(p, 0o644);
    const r = await resolveServer({ extensionPath: ext, platform: 'linux', pathEnv: '' });
    assert.deepEqual(r.ok && r.source, 'bundled');
    assert.equal(fs.statSync(p).mode & 0o111, 0o111);
  });

  it('falls back to recall on PATH (an absolute path: no shell resolves it) in a package without a server', async () => {
    const r = await resolveServer({ extensionPath: bare, platform: 'linux', pathEnv: PATH() });
    assert.deepEqual(r.ok && [r.command, r.source], [path.join(binDir, 'recall'), 'path']);
    assert.deepEqual(r.tried.map((t) => t.source), ['bundled', 'path']);
  });

  it('skips a recall on PATH that is not executable or not a file', async () => {
    const odd = path.join(dir, 'odd');
    fs.mkdirSync(path.join(odd, 'a', 'recall'), { recursive: true });
    fs.mkdirSync(path.join(odd, 'b'), { recursive: true });
    fs.writeFileSync(path.join(odd, 'b', 'recall'), 'x', { mode: 0o644 });
    const r = await resolveServer({ extensionPath: bare, platform: 'linux', pathEnv: [path.join(odd, 'a'), path.join(odd, 'b'), binDir].join(':') });
    assert.deepEqual(r.ok && r.command, path.join(binDir, 'recall'));
  });

  it('says what was tried and what to do when nothing is found', async () => {
    const r = await resolveServer({ extensionPath: bare, platform: 'linux', pathEnv: [emptyDir, '/nonexistent'].join(':') });
    assert.equal(r.ok, false);
    const msg = notFoundMessage(r.tried, vsixTarget('linux', 'x64'), '0.1.0');
    assert.match(msg, /bundled server/);
    assert.match(msg, /recall-linux-x64-0\.1\.0\.vsix/);
    assert.match(msg, /`recall` on PATH \(not in any of the 2 PATH directories/);
    assert.match(msg, /Set "recall\.serverPath"/);
  });

  it('names the Windows binary recall.exe, bundled and on PATH', async () => {
    assert.ok(bundledServerPath('C:\\ext', 'win32').endsWith('server\\recall.exe'));
    const seen: string[] = [];
    const probe = {
      kind: async (p: string) => (seen.push(p), p === 'C:\\bin\\recall.exe' ? ('file' as const) : undefined),
      executable: async () => false, // mode bits mean nothing there
      makeExecutable: async () => assert.fail('no chmod on Windows'),
    };
    const r = await resolveServer({ extensionPath: 'C:\\ext', platform: 'win32', pathEnv: 'C:\\tools;C:\\bin' }, probe);
    assert.deepEqual(r.ok && r.command, 'C:\\bin\\recall.exe');
    assert.deepEqual(seen, ['C:\\ext\\server\\recall.exe', 'C:\\tools\\recall.exe', 'C:\\bin\\recall.exe']);
  });

  it('describes the server in use with where it came from', () => {
    assert.equal(describeServer({ command: '/x/recall', source: 'bundled' }), '/x/recall (bundled)');
    assert.equal(describeServer({ command: '/usr/bin/recall', source: 'path' }), '/usr/bin/recall (from PATH)');
  });
});
