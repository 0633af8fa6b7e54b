// Contract test: the requests this extension builds (src/requests.ts), sent
// to the real `recall lsp` over stdio exactly as vscode-languageclient
// would, against the OpenCode v1 fixture. Skipped unless RECALL_BIN names
// the built server (go build -o /tmp/recall . && RECALL_BIN=/tmp/recall npm test).

import { strict as assert } from 'node:assert';
import * as cp from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as rpc from 'vscode-jsonrpc/node';

import { serverLaunch } from '../../src/config';
import { hitItem, sessionItem } from '../../src/format';
import { rewriteRecallLinks } from '../../src/links';
import { ClientCommands, ErrorCodes, type RequestResult, type RequestTypes } from '../../src/protocol.gen';
import {
  filesRequest,
  locateCursorRequest,
  locateMessageRequest,
  locateSessionRequest,
  Req,
  reindexRequest,
  searchRequest,
  sessionsRequest,
  transcriptRequest,
} from '../../src/requests';
import { messageLine, sessionUri, transcriptUri } from '../../src/uri';

const BIN = process.env.RECALL_BIN;
const EXT = path.resolve(__dirname, '../../..');
const FIXTURE = path.resolve(EXT, '../../testdata/opencode/v1/opencode.db');
// Planted in testdata/opencode/v1 (manifest.json, scenario.json).
const SESSION = 'ses_dd7571907ffe5vPpW7vxTE77tW';
const TITLE = 'Investigate nightly worker failure';
const FACT = 'ERR_QUOTA_7731';
const TOUCHED = '/tmp/ocgen/recall-v1/projects/ledger/ledger/worker.py';

describe('against recall lsp', { skip: BIN ? false : 'set RECALL_BIN to run against the real server' }, () => {
  let dir: string;
  let proc: cp.ChildProcess;
  let conn: rpc.MessageConnection;
  let capabilities: { executeCommandProvider?: { commands: string[] } };
  const send = <M extends keyof RequestTypes>(r: Req<M>) => conn.sendRequest<RequestResult<M>>(r.method, r.params);

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'recall-vscode-contract-'));
    fs.copyFileSync(FIXTURE, path.join(dir, 'opencode.db'));
    const launch = serverLaunch({ serverPath: BIN, databasePath: path.join(dir, 'opencode.db'), indexPath: path.join(dir, 'index', 'index.db') });
    proc = cp.spawn(launch.serverPath!, launch.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    proc.stderr?.resume();
    conn = rpc.createMessageConnection(new rpc.StreamMessageReader(proc.stdout!), new rpc.StreamMessageWriter(proc.stdin!));
    conn.onRequest(() => null); // window/workDoneProgress/create, codeLens refresh
    conn.listen();
    const init = await conn.sendRequest<{ capabilities: typeof capabilities }>('initialize', {
      processId: process.pid,
      rootUri: null,
      capabilities: { window: { workDoneProgress: true } },
      initializationOptions: launch.initializationOptions,
    });
    capabilities = init.capabilities;
    conn.sendNotification('initialized', {});
    // The first sync runs in the background; wait for the planted fact.
    for (let i = 0; i < 300; i++) {
      const res = await send(searchRequest(FACT));
      if (res.hits?.length) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the fixture never became searchable');
  });

  after(async () => {
    try {
      await conn.sendRequest('shutdown');
      conn.sendNotification('exit');
    } catch {
      /* already gone */
    }
    await new Promise((r) => setTimeout(r, 200));
    proc.kill();
    conn.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('advertises no command id the extension registers itself', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(EXT, 'package.json'), 'utf8')) as {
      contributes: { commands: Array<{ command: string }> };
    };
    const ours = pkg.contributes.commands.map((c) => c.command);
    const theirs = capabilities.executeCommandProvider?.commands ?? [];
    assert.ok(theirs.length > 0);
    assert.deepEqual(ours.filter((c) => theirs.includes(c)), [], 'vscode-languageclient would fail to register these twice');
  });

  let cursor = '';
  let messageId = '';
  it('search finds the planted fact, and the row shows the match', async () => {
    const res = await send(searchRequest(FACT));
    const hit = res.hits![0]!;
    assert.equal(hit.title, TITLE);
    assert.equal(hit.sessionId, SESSION);
    const item = hitItem(hit);
    assert.equal(item.label, TITLE);
    // The match must survive a ~70 character quick-pick row.
    assert.ok(item.detail.indexOf(FACT) >= 0 && item.detail.indexOf(FACT) < 40, item.detail);
    cursor = hit.cursor;
    messageId = hit.messageId;
  });

  it('a cursor locates its session and message index', async () => {
    const res = await send(locateCursorRequest(cursor));
    assert.equal(res.session.id, SESSION);
    assert.equal(res.range.first, 2);
    assert.ok(res.anchor);
  });

  it('a message URI (hover links) locates the same message', async () => {
    const res = await send(locateMessageRequest(SESSION, messageId));
    assert.equal(res.range.first, 2);
  });

  it('a hover link, read as the server gave it, names its session and message (what opening it needs)', async () => {
    const uri = 'file:///tmp/recall-contract-link.md';
    const msg = messageId;
    conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'markdown', version: 1, text: `see ${msg}\n` } });
    const hover = await conn.sendRequest<{ contents: { value: string } } | null>('textDocument/hover', {
      textDocument: { uri },
      position: { line: 0, character: 6 },
    });
    const link = /\]\((recall:[^)\s]+)\)/.exec(hover?.contents.value ?? '')?.[1];
    assert.ok(link, hover?.contents.value);
    const res = await send(transcriptRequest(link));
    assert.equal(res.session.id, SESSION);
    assert.equal(res.anchor, msg);
    // VS Code hands a restored document's URI back percent-encoded; the server reads that form too.
    const encoded = await send(transcriptRequest(link.replace(/=/g, '%3D').replace(/&/g, '%26')));
    assert.equal(encoded.anchor, msg);
  });

  it('the transcript is the whole session as markdown, with the message heading to reveal', async () => {
    const res = await send(transcriptRequest(sessionUri({ id: SESSION })));
    assert.ok(res.text.startsWith(`# ${TITLE}`), res.text.slice(0, 80));
    assert.ok(res.text.includes(`code=${FACT}`));
    assert.ok(res.text.includes('Decision: we will shard the nightly upload by fiscal quarter'));
    assert.equal(res.range.first, 1);
    assert.equal(res.range.last, res.range.total);
    assert.ok(messageLine(res.text, 2) > 0);
  });

  it('a URI named by the session title (the tab shows it) reads the same session, and an id alone names its title', async () => {
    const res = await send(transcriptRequest(sessionUri({ id: SESSION, title: TITLE })));
    assert.ok(res.text.startsWith(`# ${TITLE}`), res.text.slice(0, 80));
    const located = await send(locateSessionRequest(SESSION));
    assert.equal(located.session.title, TITLE);
    // The server names the session's document itself (its title as a slug, and the source): that URI is the one opened.
    assert.equal(sessionUri(located.session), located.session.uri);
    assert.match(located.session.uri, new RegExp(`^recall:/session/${SESSION}/investigate-nightly-worker-failure\\.md(\\?|$)`));
  });

  it('a bad transcript URI is invalid params (-32602)', async () => {
    await assert.rejects(send(transcriptRequest('recall:/session/nope')), (e: { code?: number }) => e.code === ErrorCodes.invalidParams);
  });

  it('a cursor the client passes through unread is checked by the server: invalid params, named', async () => {
    await assert.rejects(send(locateCursorRequest('not-a-cursor')), (e: { code?: number; message?: string }) => {
      return e.code === ErrorCodes.invalidParams && /cursor/i.test(e.message ?? '');
    });
  });

  it('a session URI the server gives (sessions[].uri, when it sends one) opens as is; else the id builds it', () => {
    assert.equal(sessionUri({ id: SESSION, uri: 'recall:/session/local/x' }), 'recall:/session/local/x');
    assert.equal(sessionUri({ id: SESSION }), transcriptUri({ sessionId: SESSION }));
  });

  it('sessions filter by title', async () => {
    const res = await send(sessionsRequest('nightly worker'));
    const s = res.sessions?.find((x) => x.id === SESSION);
    assert.ok(s, JSON.stringify(res.sessions?.map((x) => x.title)));
    assert.match(sessionItem(s).detail, /10 messages, 2 turns, 6 tool calls/);
  });

  it('the code lens runs recall.showFileSessions with {path, total, sessionIds}, and recall/files lists them', async () => {
    const uri = 'file://' + TOUCHED;
    conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: 'MAX_RETRIES = 3\n' } });
    const lenses = await conn.sendRequest<Array<{ command: { command: string; arguments: unknown[] } }>>('textDocument/codeLens', {
      textDocument: { uri },
    });
    // The file lens first; then the server's pitfall and blame lenses, whose
    // command (recall.openTranscript {uri, ...}) this extension must also have.
    assert.ok(lenses.length >= 1);
    const pkg = JSON.parse(fs.readFileSync(path.join(EXT, 'package.json'), 'utf8')) as { contributes: { commands: Array<{ command: string }> } };
    for (const l of lenses) assert.ok(pkg.contributes.commands.some((c) => c.command === l.command.command), l.command.command);
    assert.equal(lenses[0]!.command.command, ClientCommands.showFileSessions);
    for (const l of lenses.slice(1)) {
      assert.equal(l.command.command, 'recall.openTranscript');
      assert.match(String((l.command.arguments[0] as { uri?: unknown }).uri), /^recall:/);
    }
    const arg = lenses[0]!.command.arguments[0] as { path: string; total: number; sessionIds: string[] };
    assert.equal(arg.path, TOUCHED);
    assert.ok(arg.sessionIds.includes(SESSION));
    const files = await send(filesRequest(arg.path));
    assert.ok(files.sessions?.some((s) => s.id === SESSION));
  });

  it('hover on a session id links to its transcript, and the link becomes a command link', async () => {
    const uri = 'file:///tmp/recall-contract-notes.md';
    const text = `see ${SESSION} here\n`;
    conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'markdown', version: 1, text } });
    const hover = await conn.sendRequest<{ contents: { value: string } } | null>('textDocument/hover', {
      textDocument: { uri },
      position: { line: 0, character: 10 },
    });
    assert.ok(hover, 'no hover');
    assert.ok(hover.contents.value.includes(TITLE));
    const { text: md, changed } = rewriteRecallLinks(hover.contents.value);
    assert.ok(changed, hover.contents.value);
    assert.ok(md.includes('command:recall.openUri?'));
  });

  it('reindex returns a sync summary', async () => {
    const res = await send(reindexRequest());
    assert.equal(typeof res.updated, 'number');
    assert.ok(res.added + res.updated > 0, JSON.stringify(res));
  });
});
