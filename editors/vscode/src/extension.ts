// The Recall extension: starts `recall lsp`, and adds search, browsing and
// read-only transcripts on top of it. Hover, code lens and workspace symbols
// come straight from the server; this file only wires VS Code to it.

import { loadStartedAt } from './clock'; // first: it notes when loading began
import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import {
  CancellationToken as LspCancellationToken,
  CloseAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';

import { blameMarks, blameRanges, blameSummary, BlameMark, markAt, pitfallsBySession } from './blame';
import { RESTART_KEYS, ServerLaunch, serverLaunch } from './config';
import { LatestRunner } from './debounce';
import { findMatches, nextMatch, queryTerms } from './find';
import { distinctHits, fileSessionsTitle, hitItem, oneLine, plural, sessionItem } from './format';
import { OPEN_URI_COMMAND, rewriteRecallLinks } from './links';
import {
  ClientCommands,
  ErrorCodes,
  Notifications,
  Requests,
  type BlameRange,
  type FileLensArgs,
  type Hit,
  type ReadResult,
  type RequestResult,
  type RequestTypes,
  type SearchResult,
  type SessionInfo,
  type SessionsResult,
} from './protocol.gen';
import {
  filesRequest,
  locateCursorRequest,
  locateMessageRequest,
  locateSessionRequest,
  messageIdsRequest,
  Req,
  reindexRequest,
  searchRequest,
  sessionsRequest,
  statusRequest,
  transcriptRequest,
} from './requests';
import { describeServer, notFoundMessage, resolveServer, ServerSource, vsixTarget } from './server';
import { CiteSource, citationOf, commandLine, ResumeCommand, resumeOf } from './resume';
import { classifyInput, isSessionId, messageIndexAt, messageLine, SCHEME, SessionTarget, sessionUri } from './uri';

/** How long after start the status (for its notices) is asked: after a first search typed at once, which matters more. */
const STATUS_NOTICE_DELAY_MS = 2000;

/** Keystroke debounce for search-as-you-type; short enough to feel live, long enough to skip most keystrokes. */
const SEARCH_DEBOUNCE_MS = 150;

/**
 * How long after one showing the start-failure notification is not shown
 * again: a palette command that activates the extension fails the same
 * start twice (activation's own start, and the command's), which is one
 * event to the user. Later commands show it again.
 */
const FAILURE_NOTICE_QUIET_MS = 3000;

/** Client-side command ids. They must not collide with the server's executeCommandProvider list (recall.search, recall.read, recall.sessions, recall.status, recall.sync, recall.files, recall.reindex), which vscode-languageclient registers itself. */
const ExtensionCommands = {
  search: 'recall.searchHistory',
  browse: 'recall.browseSessions',
  open: 'recall.openTranscript',
  reindex: 'recall.reindexHistory',
  restart: 'recall.restartServer',
  showLog: 'recall.showLog',
  fileSessions: ClientCommands.showFileSessions,
  openUri: OPEN_URI_COMMAND,
  blame: 'recall.blameFile',
  openBlame: 'recall.openBlameRange',
  resume: 'recall.resumeSession',
  cite: 'recall.copyCitation',
  findNext: 'recall.findNextInTranscript',
  findPrevious: 'recall.findPreviousInTranscript',
} as const;

/** The buttons of the start-failure notification. */
const SET_SERVER_PATH = 'Set recall.serverPath';
const OPEN_DOCS = 'Open docs';

let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let extension: vscode.ExtensionContext;
let client: LanguageClient | undefined;
let starting: Promise<LanguageClient> | undefined;
let transcripts: TranscriptProvider;
/** Open quick picks re-run their query when the server reports a changed index. */
const liveViews = new Set<() => void>();
/** Why the server could not start (the notification's text); commands show it again until a restart or a settings change. */
let startFailure: string | undefined;
let failureShownAt = 0;
/** The server in use, for the status bar's tooltip. */
let serverInUse = '';
/** Notices the server attached to results (e.g. no embedding model), each logged once and listed in the status bar's tooltip. */
const notices = new Set<string>();
/** When activate() began: the [timing] log lines count from it. */
let activatedAt = 0;

/** Logs a step of start-up or a first result, with the time since activation (how README's first-result figures were taken). */
function mark(what: string): void {
  output.appendLine(`[timing] +${Date.now() - activatedAt} ms ${what}`);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  activatedAt = Date.now();
  extension = context;
  output = vscode.window.createOutputChannel('Recall');
  transcripts = new TranscriptProvider();
  status = vscode.window.createStatusBarItem('recall.status', vscode.StatusBarAlignment.Left, 0);
  status.name = 'Recall';
  status.command = ExtensionCommands.showLog;
  showStatus('starting');
  status.show();
  context.subscriptions.push(
    output,
    status,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, transcripts),
    vscode.commands.registerCommand(ExtensionCommands.search, (query?: unknown) => run(() => searchHistory(typeof query === 'string' ? query : ''))),
    vscode.commands.registerCommand(ExtensionCommands.browse, () => run(browseSessions)),
    vscode.commands.registerCommand(ExtensionCommands.open, (arg?: unknown) => run(() => openTranscriptCommand(arg))),
    vscode.commands.registerCommand(ExtensionCommands.reindex, () => run(reindex)),
    vscode.commands.registerCommand(ExtensionCommands.restart, () => run(restartClient)),
    vscode.commands.registerCommand(ExtensionCommands.showLog, () => (startFailure ? showStartFailure(true) : output.show(true))),
    vscode.commands.registerCommand(ExtensionCommands.fileSessions, (arg?: unknown) => run(() => showFileSessions(arg))),
    vscode.commands.registerCommand(ExtensionCommands.openUri, (arg?: unknown) => run(() => openTranscriptCommand(arg))),
    vscode.commands.registerCommand(ExtensionCommands.blame, () => runFor(blameFile)),
    vscode.commands.registerCommand(ExtensionCommands.openBlame, (arg?: unknown) => run(() => openBlameRange(arg))),
    vscode.commands.registerCommand(ExtensionCommands.resume, (arg?: unknown) => runFor(() => resumeSession(arg))),
    vscode.commands.registerCommand(ExtensionCommands.cite, (arg?: unknown) => runFor(() => copyCitation(arg))),
    vscode.commands.registerCommand(ExtensionCommands.findNext, () => runFor(() => findInTranscript(true))),
    vscode.commands.registerCommand(ExtensionCommands.findPrevious, () => runFor(() => findInTranscript(false))),
    vscode.window.onDidChangeVisibleTextEditors((editors) => {
      for (const ed of editors) redecorate(ed);
    }),
    vscode.workspace.onDidCloseTextDocument((doc) => {
      blames.delete(doc.uri.toString());
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (RESTART_KEYS.some((k) => e.affectsConfiguration(k))) void run(restartClient);
    }),
    { dispose: () => void stopClient() },
  );
  mark(
    `activated (${vscode.env.appName} ${vscode.version}, ${vsixTarget(process.platform, process.arch)}; ` +
      `loading the extension took ${activatedAt - loadStartedAt} ms; extension host up ${Math.round(process.uptime() * 1000)} ms; at ${new Date(activatedAt).toISOString()})`,
  );
  // Start now, not on first command: hover and code lens need the server too.
  ensureClient().catch((err: unknown) => {
    if (err instanceof ServerUnavailable) showStartFailure(false);
  });
}

export async function deactivate(): Promise<void> {
  await stopClient();
}

// ---------------------------------------------------------------------------
// The language client

/** The server could not be started; its message is the notification's. */
class ServerUnavailable extends Error {}

/**
 * vscode-languageclient shows notifications of its own for a failed start
 * or a crash ("couldn't create connection to server", "connection to
 * server is erroring"), some of them forced, on top of the one this
 * extension shows with what to do. Its messages still go to the Recall
 * output channel; the user sees one notification, ours.
 */
class RecallClient extends LanguageClient {
  override error(message: string, data?: unknown, _showNotification?: boolean | 'force'): void {
    super.error(message, data, false);
  }
}

function launchSettings(): ServerLaunch {
  const cfg = vscode.workspace.getConfiguration('recall');
  return serverLaunch(
    {
      serverPath: cfg.get<string>('serverPath'),
      databasePath: cfg.get<string>('databasePath'),
      indexPath: cfg.get<string>('indexPath'),
    },
    { home: os.homedir(), workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
  );
}

function createClient(command: string, launch: ServerLaunch): LanguageClient {
  // Spawned directly (no shell): the binary resolveServer found, as an absolute path.
  const serverOptions: ServerOptions = { command, args: launch.args };
  const clientOptions: LanguageClientOptions = {
    // Hover works on ses_/msg_ ids in any document; code lens on files
    // touched by past sessions (the server decides which).
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }, { scheme: SCHEME }],
    initializationOptions: launch.initializationOptions,
    outputChannel: output,
    // A failed initialize is the start failure this extension reports (no retry, no second message).
    initializationFailedHandler: () => false,
    middleware: {
      provideHover: async (document, position, token, next) => {
        const hover = await next(document, position, token);
        if (!hover) return hover;
        hover.contents = hover.contents.map(trustRecallLinks);
        return hover;
      },
    },
  };
  const c = new RecallClient('recall', 'Recall', serverOptions, clientOptions);
  const restarts = c.createDefaultErrorHandler(4);
  clientOptions.errorHandler = {
    error: (error, message, count) => restarts.error(error, message, count),
    closed: async () => {
      const res = await restarts.closed();
      if (res.action === CloseAction.DoNotRestart) {
        // The server keeps crashing: say so once; the next command starts it again.
        const msg = 'Recall: the server stopped after crashing repeatedly; see the Recall log. Any Recall command starts it again.';
        output.appendLine(msg);
        showStatus('stopped');
        client = undefined;
        void vscode.window.showErrorMessage(msg, 'Show Log').then((choice) => choice && output.show(true));
        return { action: CloseAction.DoNotRestart, handled: true };
      }
      return { ...res, handled: true };
    },
  };
  c.onNotification(Notifications.indexUpdated, () => {
    transcripts.refreshAll();
    for (const refresh of liveViews) refresh();
  });
  return c;
}

function trustRecallLinks(content: vscode.MarkdownString | vscode.MarkedString): vscode.MarkdownString | vscode.MarkedString {
  const value = typeof content === 'string' ? content : 'value' in content && !('language' in content) ? content.value : undefined;
  if (value === undefined) return content;
  const { text, changed } = rewriteRecallLinks(value);
  if (!changed) return content;
  const md = new vscode.MarkdownString(text);
  md.isTrusted = { enabledCommands: [OPEN_URI_COMMAND] };
  return md;
}

/**
 * The running client, started on first use. It rejects with
 * ServerUnavailable when no server can be found or started, and keeps
 * rejecting (at once, with the same message) until a restart or a change
 * of the server settings.
 */
function ensureClient(): Promise<LanguageClient> {
  if (client && client.state === State.Running) return Promise.resolve(client);
  if (startFailure) return Promise.reject(new ServerUnavailable(startFailure));
  if (!starting) {
    starting = startClient().catch((err: unknown) => {
      starting = undefined;
      throw err;
    });
  }
  return starting;
}

async function startClient(): Promise<LanguageClient> {
  const launch = launchSettings();
  const found = await resolveServer({
    serverPath: launch.serverPath,
    extensionPath: extension.extensionUri.fsPath,
    platform: process.platform,
    pathEnv: process.env.PATH,
  });
  for (const t of found.tried) if (t.problem) output.appendLine(`server: ${t.source} ${t.where}: ${t.problem}`);
  if (!found.ok) {
    throw failStart(notFoundMessage(found.tried, vsixTarget(process.platform, process.arch), extensionVersion()));
  }
  serverInUse = describeServer(found);
  mark(`server: ${serverInUse}; starting ${found.command} ${launch.args.join(' ')} ${JSON.stringify(launch.initializationOptions)}`);
  const c = createClient(found.command, launch);
  client = c;
  try {
    await c.start();
  } catch (err) {
    client = undefined;
    await c.dispose().catch(() => undefined);
    throw failStart(startFailureMessage(err, found.command, found.source));
  }
  mark('server initialized');
  showStatus('running');
  // The server attaches a search notice (no embedding model, …) to one
  // search result per process; a result the client cancelled (a newer
  // keystroke) loses it, so the status's notice is noted too. Later than
  // start-up: the first search goes first on a busy machine.
  setTimeout(() => {
    if (client !== c) return;
    request(statusRequest()).then(
      (st) => noteNotices(st.semantic?.notice ? [st.semantic.notice] : []),
      (err: unknown) => output.appendLine(`recall/status: ${String(err)}`),
    );
  }, STATUS_NOTICE_DELAY_MS);
  return c;
}

/** Records why the server could not start (the caller's notification shows it) and returns the error to throw. */
function failStart(msg: string): ServerUnavailable {
  startFailure = msg;
  output.appendLine(msg);
  showStatus('failed');
  return new ServerUnavailable(msg);
}

/**
 * The one notification of a failed start: what was tried and what to do,
 * with buttons to set recall.serverPath and to open the install docs.
 * force: shown even right after the last showing (the status bar was clicked).
 */
function showStartFailure(force: boolean): void {
  const msg = startFailure;
  if (!msg) return;
  const now = Date.now();
  if (!force && now - failureShownAt < FAILURE_NOTICE_QUIET_MS) return;
  failureShownAt = now;
  void vscode.window.showErrorMessage(msg, SET_SERVER_PATH, OPEN_DOCS).then((choice) => {
    if (choice === SET_SERVER_PATH) void vscode.commands.executeCommand('workbench.action.openSettings', 'recall.serverPath');
    if (choice === OPEN_DOCS) void openDocs();
  });
}

/** The extension's README (its Install section says which package to install), rendered. */
async function openDocs(): Promise<void> {
  const readme = vscode.Uri.joinPath(extension.extensionUri, 'README.md');
  try {
    await vscode.commands.executeCommand('markdown.showPreview', readme);
  } catch {
    await vscode.window.showTextDocument(readme);
  }
}

function extensionVersion(): string {
  return String((extension.extension.packageJSON as { version?: unknown }).version ?? '');
}

function startFailureMessage(err: unknown, command: string, source: ServerSource): string {
  const text = err instanceof Error ? err.message : String(err);
  const what = source === 'setting' ? `"recall.serverPath" (${command})` : `${command}`;
  if (/EACCES|ENOEXEC|ENOENT|EPERM/.test(text)) {
    return `Recall: the server ${what} could not be run (${oneLine(text, 160)}). It may be for another platform: install the ${vsixTarget(process.platform, process.arch)} package, or set "recall.serverPath" to a recall binary for this machine.`;
  }
  return `Recall: the server ${what} did not start: ${oneLine(text, 300)}. See the Recall log; fix the setting it names, or set "recall.serverPath".`;
}

type ServerState = 'starting' | 'running' | 'failed' | 'stopped';
let serverState: ServerState = 'starting';

/** The status bar item: the server's state, and in its tooltip the server in use and the search notices. */
function showStatus(state: ServerState = serverState): void {
  serverState = state;
  const icon = { starting: '$(sync~spin)', running: '$(history)', failed: '$(error)', stopped: '$(debug-disconnect)' }[state];
  status.text = `${icon} Recall`;
  const lines: string[] = [];
  if (state === 'failed' && startFailure) lines.push(startFailure, '', 'Click for what to do.');
  else {
    lines.push(state === 'running' ? `Server: ${serverInUse}` : state === 'starting' ? 'Starting the server…' : 'The server stopped; any Recall command starts it again.');
    for (const n of notices) lines.push('', n);
    lines.push('', 'Click for the Recall log.');
  }
  status.tooltip = lines.join('\n');
  status.backgroundColor = state === 'failed' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
}

/** Logs a result's notices the first time each is seen and lists them in the status bar's tooltip, off the quick pick's title. */
function noteNotices(list: ReadonlyArray<string> | undefined): void {
  let changed = false;
  for (const n of list ?? []) {
    if (notices.has(n)) continue;
    notices.add(n);
    output.appendLine(`notice: ${n}`);
    changed = true;
  }
  if (changed) showStatus();
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  starting = undefined;
  if (c) {
    try {
      await c.stop(2000);
    } catch {
      /* already gone */
    }
  }
}

async function restartClient(): Promise<void> {
  await stopClient();
  startFailure = undefined;
  showStatus('starting');
  await ensureClient();
  transcripts.refreshAll();
}

/**
 * Runs a command body; errors become one error message instead of an
 * unhandled rejection. A server that could not start shows its start
 * failure again, so a command never does nothing visible.
 */
async function run(body: () => Promise<void>): Promise<void> {
  await runFor(body);
}

/** run for a command with a result (what executeCommand returns to a caller); undefined when it failed. */
async function runFor<T>(body: () => Promise<T>): Promise<T | undefined> {
  try {
    return await body();
  } catch (err) {
    if (isCancelled(err)) return undefined;
    if (err instanceof ServerUnavailable) {
      showStartFailure(false);
      return undefined;
    }
    const msg = err instanceof Error ? err.message : String(err);
    output.appendLine(`error: ${msg}`);
    void vscode.window.showErrorMessage(`Recall: ${msg}`);
    return undefined;
  }
}

function isCancelled(err: unknown): boolean {
  return err instanceof vscode.CancellationError || (typeof err === 'object' && err !== null && (err as { code?: number }).code === -32800);
}

/** Sends a request; its result type is the one the server's Go types declare for that method. */
async function request<M extends keyof RequestTypes>(req: Req<M>, token?: vscode.CancellationToken): Promise<RequestResult<M>> {
  const { method, params } = req;
  const c = await ensureClient();
  // Pass the token only when there is one: sendRequest(method, params, undefined)
  // sends [params, null] as positional params, which the server rejects.
  return token
    ? c.sendRequest<RequestResult<M>>(method, params, token as LspCancellationToken)
    : c.sendRequest<RequestResult<M>>(method, params);
}

/** An AbortSignal as a CancellationToken (the debouncer speaks AbortSignal). */
function tokenFor(signal: AbortSignal): vscode.CancellationToken {
  const cts = new vscode.CancellationTokenSource();
  if (signal.aborted) cts.cancel();
  else signal.addEventListener('abort', () => cts.cancel(), { once: true });
  return cts.token;
}

// ---------------------------------------------------------------------------
// Transcripts: read-only markdown documents under recall:

class TranscriptProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /**
   * The server's own string of each URI opened (by vscode.Uri's string),
   * sent back verbatim: vscode.Uri re-encodes what it parses, and a URI is
   * the server's to read, not ours to rewrite.
   */
  private readonly wire = new Map<string, string>();

  /** The document of a server-given URI. */
  uri(serverUri: string): vscode.Uri {
    const u = vscode.Uri.parse(serverUri, true);
    this.wire.set(u.toString(), serverUri);
    return u;
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    // vscode-languageclient 9 has no workspace/textDocumentContent, so this
    // is the server's documented fallback: recall/transcript {uri} runs the
    // same read and returns the recall/read result. A document VS Code
    // restored from an earlier window has only its encoded form, which the
    // server reads too.
    const res = await request(transcriptRequest(this.wire.get(uri.toString()) ?? uri.toString()), token);
    if (res.session?.id) docSessions.set(uri.toString(), res.session);
    return res.text;
  }

  refreshAll(): void {
    for (const doc of vscode.workspace.textDocuments) {
      if (doc.uri.scheme === SCHEME) this.changed.fire(doc.uri);
    }
  }
}

/**
 * Opens a transcript document (a recall: URI the server gave, or a
 * session's, see sessionUri) as markdown; revealIndex scrolls to that
 * message.
 */
async function openDocument(serverUri: string, revealIndex?: number, query?: string): Promise<void> {
  const uri = transcripts.uri(serverUri);
  // The query that found it: find next/previous and the highlights use it.
  if (query?.trim()) docQuery.set(uri.toString(), query);
  let doc = await vscode.workspace.openTextDocument(uri);
  if (doc.languageId !== 'markdown') doc = await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
  const line = revealIndex === undefined ? -1 : messageLine(doc.getText(), revealIndex);
  const at = line >= 0 ? new vscode.Range(line, 0, line, 0) : undefined;
  const editor = await vscode.window.showTextDocument(doc, { preview: true, ...(at ? { selection: at } : {}) });
  if (at) editor.revealRange(at, vscode.TextEditorRevealType.AtTop);
  redecorate(editor);
}

/** Opens a session as its whole transcript (one tab per session, named by its title), scrolled to message revealIndex when given. */
function openSession(s: SessionTarget, revealIndex?: number, query?: string): Promise<void> {
  return openDocument(sessionUri(s), revealIndex, query);
}

/** Opens a session known only by its id: the server names its title first, for the tab. */
async function openSessionById(id: string): Promise<void> {
  const res = await request(locateSessionRequest(id));
  await openSession(readSession(res, 'id'));
}

/** The session a read names, or an error saying the server did not. */
function readSession(res: ReadResult, what: string): SessionInfo {
  if (!res.session?.id) throw new Error(`the server did not say which session the ${what} belongs to`);
  return res.session;
}

/** Opens the session a cursor points into, scrolled to the cursor's message. */
async function openCursor(cursor: string, query?: string): Promise<void> {
  // A one-message window around the cursor names its session and the
  // message's index; the document itself is the whole session.
  const res = await request(locateCursorRequest(cursor));
  await openSession(readSession(res, 'cursor'), res.anchor ? res.range.first : undefined, query);
}

/**
 * Opens a recall: URI (a hover link, or typed in): the server reads it. One
 * that names a message (its read has an anchor) becomes the whole session
 * scrolled to that message; any other opens as the document it names.
 */
async function openUri(uri: string): Promise<void> {
  const res = await request(transcriptRequest(uri));
  if (!res.anchor) {
    // The bare URI of a whole session (a hover on a ses_ id links to one)
    // is the same document as the session's titled one, which names its tab.
    const whole = res.session?.id && uri === sessionUri({ id: res.session.id });
    await (whole ? openSession(res.session) : openDocument(uri));
    return;
  }
  const session = readSession(res, 'link');
  const at = await request(locateMessageRequest(session.id, res.anchor));
  await openSession(session, at.range.first);
}

async function openTranscriptCommand(arg?: unknown): Promise<void> {
  let input = typeof arg === 'string' ? arg : argCursor(arg);
  if (!input) {
    input = await vscode.window.showInputBox({
      title: 'Recall: Open Transcript',
      prompt: 'A cursor (from a search hit or `recall search`) or a session id (ses_…)',
      placeHolder: 'a cursor or ses_…',
      value: idUnderCursor(),
      ignoreFocusOut: true,
      validateInput: (v) => {
        const c = classifyInput(v);
        return c.kind === 'invalid' && v.trim() !== '' ? c.message : undefined;
      },
    });
    if (input === undefined) return;
  }
  const c = classifyInput(input);
  switch (c.kind) {
    case 'cursor':
      return openCursor(c.cursor);
    case 'session':
      return openSessionById(c.sessionId);
    case 'uri':
      return openUri(c.uri);
    case 'invalid':
      throw new Error(c.message);
  }
}

/** Accepts {uri}, {cursor} or {sessionId} objects from the server's lenses, other extensions and links. */
function argCursor(arg: unknown): string | undefined {
  if (typeof arg !== 'object' || arg === null) return undefined;
  // The server's blame and pitfall lenses pass {uri, sessionId, messageId}: the uri is the message's transcript.
  const o = arg as { uri?: unknown; cursor?: unknown; sessionId?: unknown };
  if (typeof o.uri === 'string' && o.uri.startsWith(SCHEME + ':')) return o.uri;
  if (typeof o.cursor === 'string') return o.cursor;
  if (typeof o.sessionId === 'string') return o.sessionId;
  return undefined;
}

/**
 * The selection (a cursor, session id or URI someone selected) or the
 * session id under the caret, to prefill the input box. Cursors are the
 * server's to read, so only a selection offers one.
 */
function idUnderCursor(): string {
  const ed = vscode.window.activeTextEditor;
  if (!ed) return '';
  const selected = ed.document.getText(ed.selection).trim();
  if (selected && classifyInput(selected).kind !== 'invalid') return selected;
  const range = ed.document.getWordRangeAtPosition(ed.selection.active, /ses_[A-Za-z0-9]+/);
  const word = range ? ed.document.getText(range) : '';
  return isSessionId(word) ? word : '';
}

// ---------------------------------------------------------------------------
// Search History: a quick pick that searches as you type

interface HitPick extends vscode.QuickPickItem {
  hit?: Hit;
  /** A "did you mean" row: accepting it searches for this instead. */
  correction?: string;
}

const SEARCH_TITLE = 'Recall: Search History';

async function searchHistory(initial: string): Promise<void> {
  // The pick shows at once, busy, while the server starts (on the first
  // command of a window) and answers; rows replace it as they come.
  const qp = vscode.window.createQuickPick<HitPick>();
  qp.title = SEARCH_TITLE;
  qp.placeholder = 'Search past sessions: prompts, answers, tool calls, outputs ("phrases", -exclude)';
  qp.matchOnDescription = false;
  qp.matchOnDetail = false;
  qp.value = initial;
  qp.busy = true;
  const home = os.homedir();
  let firstRows = true;
  const runner = new LatestRunner<string, SearchResult>(
    SEARCH_DEBOUNCE_MS,
    (query, signal) => request(searchRequest(query), tokenFor(signal)),
    (res, query) => {
      const hits = distinctHits(res.hits);
      const now = Date.now();
      lastQuery = query.trim() ? query : lastQuery;
      const items: HitPick[] = hits.map((hit) => ({ ...hitItem(hit, now, home), hit, buttons: HIT_BUTTONS }));
      if (items.length === 0 && res.index?.stale) {
        // A fresh index: the server's first sync is running; indexUpdated re-runs the query.
        items.push({ label: '$(sync~spin) Indexing your history…', detail: 'Results appear when the first sync finishes.', alwaysShow: true });
      } else if (items.length === 0) {
        items.push({ label: query.trim() ? `No matches for "${oneLine(query, 60)}"` : 'No sessions yet', alwaysShow: true });
      }
      // A correction is a row the user can take (after the hits, or
      // first when nothing matched); notices go to the log and the
      // status bar, never into the title, which must stay one short line.
      const corrections: HitPick[] = (res.corrections ?? []).map((c) => ({
        label: `$(lightbulb) Did you mean "${oneLine(c, 60)}"?`,
        correction: c,
        alwaysShow: true,
      }));
      qp.items = hits.length ? [...items, ...corrections] : [...corrections, ...items];
      noteNotices(res.notices);
      if (firstRows) {
        firstRows = false;
        mark(`search: first rows (${hits.length} hits for "${oneLine(query, 40)}", server ${res.tookMs} ms)`);
      }
    },
    (err) => showPickError(qp, err),
    (busy) => (qp.busy = busy),
  );
  qp.onDidAccept(() => {
    const c = (qp.selectedItems[0] ?? qp.activeItems[0])?.correction;
    if (c === undefined) return;
    qp.value = c;
    runner.schedule(c, true);
  });
  qp.onDidTriggerItemButton((e) => {
    const hit = e.item.hit;
    if (!hit) return;
    const src = hitCiteSource(hit);
    if (e.button === CITE_BUTTON) void runFor(() => copyCitation(src));
    else if (e.button === RESUME_BUTTON) void runFor(() => resumeSession(src));
  });
  showLivePick(qp, runner, initial, (item) => {
    const query = qp.value; // read now: the pick is disposed before the opener runs
    return item.hit && (() => openCursor(item.hit!.cursor, query));
  });
  mark('search: quick pick shown');
}

// ---------------------------------------------------------------------------
// Browse Sessions

interface SessionPick extends vscode.QuickPickItem {
  session?: SessionInfo;
}

async function browseSessions(): Promise<void> {
  const qp = vscode.window.createQuickPick<SessionPick>();
  qp.title = 'Recall: Browse Sessions';
  qp.placeholder = 'Filter sessions by title';
  qp.busy = true;
  const home = os.homedir();
  const runner = new LatestRunner<string, SessionsResult>(
    SEARCH_DEBOUNCE_MS,
    (filter, signal) => request(sessionsRequest(filter), tokenFor(signal)),
    (res) => {
      const now = Date.now();
      const items: SessionPick[] = (res.sessions ?? []).map((s) => ({ ...sessionItem(s, now, home), session: s }));
      qp.items = items.length ? items : [{ label: 'No sessions match', alwaysShow: true }];
    },
    (err) => showPickError(qp, err),
    (busy) => (qp.busy = busy),
  );
  showLivePick(qp, runner, '', (item) => item.session && (() => openSession(item.session!)));
}

function showPickError<T extends vscode.QuickPickItem>(qp: vscode.QuickPick<T>, err: unknown): void {
  if (isCancelled(err)) return;
  if (err instanceof ServerUnavailable) {
    // The pick cannot work; the notification says why and what to do.
    qp.hide();
    showStartFailure(false);
    return;
  }
  qp.items = [{ label: `$(error) ${oneLine(err instanceof Error ? err.message : String(err))}`, alwaysShow: true } as T];
}

// showLivePick wires a quick pick whose items come from the server as the
// user types: each keystroke schedules a (debounced, latest-wins) request,
// a changed index re-runs it, and Enter opens what the chosen item names.
function showLivePick<T extends vscode.QuickPickItem, R>(
  qp: vscode.QuickPick<T>,
  runner: LatestRunner<string, R>,
  initial: string,
  opener: (item: T) => (() => Promise<void>) | undefined,
): void {
  const refresh = () => runner.schedule(qp.value, true);
  liveViews.add(refresh);
  qp.onDidChangeValue((v) => runner.schedule(v));
  qp.onDidAccept(() => {
    const item = qp.selectedItems[0] ?? qp.activeItems[0];
    const open = item && opener(item);
    if (!open) return;
    qp.hide();
    void run(open);
  });
  qp.onDidHide(() => {
    liveViews.delete(refresh);
    runner.dispose();
    qp.dispose();
  });
  qp.show();
  runner.schedule(initial, true);
}

// ---------------------------------------------------------------------------
// The code lens command: sessions that touched a file

interface FileSessionPick extends vscode.QuickPickItem {
  session: SessionTarget;
}

async function showFileSessions(arg?: unknown): Promise<void> {
  const a = arg as Partial<FileLensArgs> | undefined;
  if (!a || typeof a.path !== 'string') throw new Error('showFileSessions needs {path, sessionIds}');
  const home = os.homedir();
  let items: FileSessionPick[];
  try {
    const res = await request(filesRequest(a.path));
    const now = Date.now();
    // Pitfalls (sessions that hit an error in this file) sit on their session's row.
    const pitfalls = pitfallsBySession(res);
    items = (res.sessions ?? []).map((s) => {
      const item = sessionItem(s, now, home);
      const bit = pitfalls.get(s.id);
      return { ...item, ...(bit?.length ? { detail: `$(warning) bit us before: ${bit[0]!.error}` } : {}), session: s };
    });
  } catch (err) {
    if (err instanceof ServerUnavailable) throw err;
    // Titles are a nicety; the ids from the lens still open.
    output.appendLine(`recall/files: ${String(err)}`);
    items = (a.sessionIds ?? []).map((id) => ({ label: id, session: { id } }));
  }
  const pick = await vscode.window.showQuickPick(items, {
    title: fileSessionsTitle(a.total ?? items.length, a.path),
    matchOnDescription: true,
  });
  if (!pick) return;
  await (pick.session.title === undefined ? openSessionById(pick.session.id) : openSession(pick.session));
}

// ---------------------------------------------------------------------------
// Reindex

async function reindex(): Promise<void> {
  const res = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Recall: reindexing history…', cancellable: true },
    (_progress, token) => request(reindexRequest(), token),
  );
  const secs = (res.tookMs / 1000).toFixed(1);
  const msg = res.busy
    ? 'Recall: another process is indexing; try again shortly.'
    : `Recall: reindexed in ${secs}s (${plural(res.added + res.updated, 'session')} read: ${res.added} added, ${res.updated} updated, ${res.deleted} deleted; ${plural(res.parts, 'part')}).`;
  void vscode.window.showInformationMessage(msg);
  transcripts.refreshAll();
}

// ---------------------------------------------------------------------------
// Find in transcript: the query's hits inside an open transcript

/** The query each transcript was opened for (by document URI); else the last one searched. */
const docQuery = new Map<string, string>();
let lastQuery = '';
/** The session each transcript document shows (from its read), for citations and resume. */
const docSessions = new Map<string, SessionInfo>();

let findDecoration: vscode.TextEditorDecorationType | undefined;
let findCurrentDecoration: vscode.TextEditorDecorationType | undefined;

function findDecorations(): [vscode.TextEditorDecorationType, vscode.TextEditorDecorationType] {
  findDecoration ??= vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.findMatchForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Center,
  });
  findCurrentDecoration ??= vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchBackground'),
    borderColor: new vscode.ThemeColor('editor.findMatchBorder'),
    borderStyle: 'solid',
    borderWidth: '1px',
  });
  return [findDecoration, findCurrentDecoration];
}

/** The matches of a transcript editor's query, as ranges. */
function queryRanges(ed: vscode.TextEditor, query: string): vscode.Range[] {
  const doc = ed.document;
  return findMatches(doc.getText(), queryTerms(query)).map(([a, b]) => new vscode.Range(doc.positionAt(a), doc.positionAt(b)));
}

/** Redraws what this extension draws on an editor: a transcript's query highlights, a file's blame. */
function redecorate(ed: vscode.TextEditor, current?: vscode.Range): void {
  const key = ed.document.uri.toString();
  if (ed.document.uri.scheme === SCHEME) {
    const query = docQuery.get(key);
    if (!query) return;
    const [all, cur] = findDecorations();
    ed.setDecorations(all, queryRanges(ed, query));
    ed.setDecorations(cur, current ? [current] : []);
    return;
  }
  const marks = blames.get(key);
  if (marks) drawBlame(ed, marks);
}

/** Moves the caret to the next (or previous) hit of the transcript's query, asking for one if it has none. */
async function findInTranscript(forward: boolean): Promise<string | undefined> {
  const ed = vscode.window.activeTextEditor;
  if (!ed || ed.document.uri.scheme !== SCHEME) throw new Error('find in transcript works in a transcript: open one from Search History first');
  const key = ed.document.uri.toString();
  let query = docQuery.get(key);
  if (!query) {
    query = await vscode.window.showInputBox({ title: 'Recall: find in transcript', prompt: 'Words or "phrases" to find', value: lastQuery });
    if (!query?.trim()) return undefined;
    docQuery.set(key, query);
  }
  const ranges = queryRanges(ed, query);
  if (ranges.length === 0) {
    redecorate(ed);
    vscode.window.setStatusBarMessage(`Recall: "${oneLine(query, 40)}" is not in this transcript`, 4000);
    return undefined;
  }
  const doc = ed.document;
  const matches = ranges.map((r) => [doc.offsetAt(r.start), doc.offsetAt(r.end)] as const);
  const i = nextMatch(matches, doc.offsetAt(ed.selection.active), forward);
  const r = ranges[i]!;
  ed.selection = new vscode.Selection(r.start, r.start);
  ed.revealRange(r, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  redecorate(ed, r);
  vscode.window.setStatusBarMessage(`Recall: hit ${i + 1} of ${ranges.length} for "${oneLine(query, 40)}"`, 4000);
  return `${i + 1}/${ranges.length}`;
}

// ---------------------------------------------------------------------------
// Citations and resume, from a transcript or a search hit

const CITE_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('quote'), tooltip: 'Copy citation' };
const RESUME_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('terminal'), tooltip: 'Resume session in OpenCode' };
const HIT_BUTTONS = [CITE_BUTTON, RESUME_BUTTON];

/** What a hit says about itself (fields a newer server adds, resume and citation, pass through). */
function hitCiteSource(hit: Hit): CiteSource {
  const extra = hit as Hit & { resume?: unknown; citation?: unknown };
  return {
    sessionId: hit.sessionId,
    title: hit.title,
    messageId: hit.messageId,
    time: hit.time,
    directory: hit.directory,
    source: hit.source,
    target: hit.cursor,
    resume: extra.resume,
    citation: extra.citation,
  };
}

function isCiteSource(arg: unknown): arg is CiteSource {
  return typeof arg === 'object' && arg !== null && typeof (arg as { sessionId?: unknown }).sessionId === 'string';
}

/** The session (and the message at the caret) of the active transcript editor. */
async function transcriptCiteSource(what: string): Promise<CiteSource> {
  const ed = vscode.window.activeTextEditor;
  const session = ed && ed.document.uri.scheme === SCHEME ? docSessions.get(ed.document.uri.toString()) : undefined;
  if (!ed || !session) throw new Error(`${what} works from a transcript or a search hit (its button): open a transcript first`);
  const extra = session as SessionInfo & { resume?: unknown; citation?: unknown };
  const src: CiteSource = {
    sessionId: session.id,
    title: session.title,
    time: session.updated || session.created,
    directory: session.directory,
    source: session.source,
    target: session.id,
    resume: extra.resume,
    citation: extra.citation,
  };
  const n = messageIndexAt(ed.document.getText(), ed.selection.active.line);
  if (n < 1 || what !== 'Copy citation') return src;
  // The message at the caret: its id from the session's first n messages.
  try {
    const res = await request(messageIdsRequest(session.id, session.source || undefined, n));
    const m = res.messages?.[n - 1];
    if (m?.id) {
      const when = typeof m.created === 'number' && m.created > 0 ? new Date(m.created < 1e12 ? m.created * 1000 : m.created).toISOString() : src.time;
      // The session's citation names no message: this one does.
      return { ...src, messageId: m.id, target: m.id, ...(when ? { time: when } : {}), citation: undefined };
    }
  } catch (err) {
    if (err instanceof ServerUnavailable) throw err;
    output.appendLine(`citation: message ${n}: ${String(err)}`);
  }
  return src;
}

/** Set when the server answered recall/cite with method not found: an older server, cited by the client. */
let noServerCite = false;

/**
 * What the server says to cite and resume (recall/cite on the hit's
 * cursor, the message or the session), over what the client knows; a
 * server without recall/cite leaves src as it is.
 */
async function withServerCite(src: CiteSource): Promise<CiteSource> {
  if (noServerCite || !src.target) return src;
  try {
    const c = await request({ method: Requests.cite, params: { target: src.target, ...(src.source ? { source: src.source } : {}) } });
    return { ...src, citation: c.citation, resume: c.resume, directory: c.directory || src.directory };
  } catch (err) {
    if ((err as { code?: number }).code === ErrorCodes.methodNotFound) noServerCite = true;
    else if (err instanceof ServerUnavailable) throw err;
    else output.appendLine(`recall/cite ${src.target}: ${String(err)}`);
    return src;
  }
}

/** Copies a citation of a hit, or of the transcript at the caret, to the clipboard; returns it. */
async function copyCitation(arg?: unknown): Promise<string> {
  const src = await withServerCite(isCiteSource(arg) ? arg : await transcriptCiteSource('Copy citation'));
  const text = citationOf(src);
  await vscode.env.clipboard.writeText(text);
  void vscode.window.showInformationMessage(`Recall: copied ${text}`);
  return text;
}

/** Opens an integrated terminal in the session's directory running what resumes it in OpenCode; returns what it ran. */
async function resumeSession(arg?: unknown): Promise<ResumeCommand> {
  const src = await withServerCite(isCiteSource(arg) ? arg : await transcriptCiteSource('Resume session'));
  const r = resumeOf(src);
  if (!r.cwd || !fs.existsSync(r.cwd)) {
    throw new Error(`the session's directory ${r.cwd || '(none recorded)'} does not exist here; run \`${commandLine(r.argv)}\` in the project's directory`);
  }
  const title = oneLine(src.title || src.sessionId, 40);
  const term = vscode.window.createTerminal({ name: `OpenCode: ${title}`, cwd: r.cwd });
  term.show();
  const shell = (vscode.env.shell || '').toLowerCase();
  term.sendText(commandLine(r.argv, /pwsh|powershell/.test(shell)));
  output.appendLine(`resume: ${commandLine(r.argv)} (in ${r.cwd})`);
  return r;
}

// ---------------------------------------------------------------------------
// Session blame: which past session wrote each line of the file

/** The blame drawn on each file (by document URI), kept while the document is open. */
const blames = new Map<string, BlameMark[]>();
let blameDecoration: vscode.TextEditorDecorationType | undefined;

function drawBlame(ed: vscode.TextEditor, marks: ReadonlyArray<BlameMark>): void {
  blameDecoration ??= vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    borderColor: new vscode.ThemeColor('editorInfo.foreground'),
    borderStyle: 'solid',
    borderWidth: '0 0 0 2px',
    overviewRulerColor: new vscode.ThemeColor('editorInfo.foreground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  const options: vscode.DecorationOptions[] = [];
  for (const m of marks) {
    const link = `command:${ExtensionCommands.openBlame}?${encodeURIComponent(JSON.stringify([m.range]))}`;
    const hover = new vscode.MarkdownString(`${m.hover}\n\n[Open the transcript at that message](${link})`);
    hover.isTrusted = { enabledCommands: [ExtensionCommands.openBlame] };
    for (let line = m.startLine; line <= m.endLine; line++) {
      options.push({
        // The whole line, so its hover shows wherever the pointer (or caret) is on it.
        range: ed.document.lineAt(line).range,
        hoverMessage: hover,
        ...(line === m.startLine
          ? { renderOptions: { after: { contentText: `  ${m.label}`, color: new vscode.ThemeColor('editorCodeLens.foreground'), fontStyle: 'italic' } } }
          : {}),
      });
    }
  }
  ed.setDecorations(blameDecoration, options);
}

/** Recall: Blame this file: draws which past session wrote each line (run again to clear). */
async function blameFile(): Promise<string | undefined> {
  const ed = vscode.window.activeTextEditor;
  if (!ed || ed.document.uri.scheme !== 'file') throw new Error('Blame this file works on a file on disk: open one first');
  const key = ed.document.uri.toString();
  if (blames.has(key)) {
    blames.delete(key);
    if (blameDecoration) ed.setDecorations(blameDecoration, []);
    return undefined;
  }
  // The text as the editor has it, saved or not: the server matches the recorded edits against it.
  const res = await newerRequest({ method: Requests.blame, params: { path: ed.document.uri.fsPath, text: ed.document.getText() } }, 'session blame');
  const ranges = blameRanges(res);
  const marks = blameMarks(ranges, ed.document.lineCount);
  const summary = blameSummary(res, ranges);
  output.appendLine(`blame ${ed.document.uri.fsPath}: ${summary}`);
  if (marks.length === 0) {
    void vscode.window.showInformationMessage(`Recall: no line of ${vscode.workspace.asRelativePath(ed.document.uri)} was written by a past session.`);
    return summary;
  }
  blames.set(key, marks);
  drawBlame(ed, marks);
  vscode.window.setStatusBarMessage(`Recall blame: ${summary}`, 8000);
  return summary;
}

/** Opens the transcript at the message that wrote a blamed range (the hover's link); without one, the range at the caret. */
async function openBlameRange(arg?: unknown): Promise<void> {
  let range = typeof arg === 'object' && arg !== null && typeof (arg as BlameRange).sessionId === 'string' ? (arg as BlameRange) : undefined;
  if (!range) {
    const ed = vscode.window.activeTextEditor;
    const marks = ed ? blames.get(ed.document.uri.toString()) : undefined;
    range = marks && ed ? markAt(marks, ed.selection.active.line)?.range : undefined;
    if (!range) throw new Error('no blamed line at the caret: run "Recall: Blame this file" first');
  }
  if (range.uri) return openUri(range.uri);
  if (range.messageId) {
    const at = await request(locateMessageRequest(range.sessionId, range.messageId));
    return openSession(readSession(at, 'blame'), at.range.first);
  }
  return openSessionById(range.sessionId);
}

/**
 * A request a newer server added (blame, cite): a server without it
 * answers method not found, which says to update recall.
 */
async function newerRequest<M extends keyof RequestTypes>(req: Req<M>, what: string): Promise<RequestResult<M>> {
  try {
    return await request(req);
  } catch (err) {
    if ((err as { code?: number }).code === ErrorCodes.methodNotFound) {
      throw new Error(`this recall server has no ${req.method} (${what}); update recall (${serverInUse})`);
    }
    throw err;
  }
}
