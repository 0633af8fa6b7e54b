// recall: URIs and the "Open Transcript" input: pure, no vscode import.
//
// The server's contract (lsp/README.md):
//   recall:/session/<sessionId>[?around=<messageId>][&mode=<mode>][&limit=<n>][&format=markdown|chatml]
// No `around` means the whole session; with `around`, a window around that
// message unless `mode` says otherwise.

import type { ReadMode } from './protocol';

export const SCHEME = 'recall';

/** The parts of a vscode.Uri this module needs (vscode.Uri.from takes them). */
export interface UriParts {
  scheme: string;
  path: string;
  query: string;
}

export interface TranscriptTarget {
  sessionId: string;
  around?: string;
  mode?: ReadMode;
  limit?: number;
  format?: 'markdown' | 'chatml';
}

const READ_MODES: readonly string[] = ['around', 'next', 'prev', 'head', 'tail', 'full'];
const ID_RE = /^[A-Za-z0-9_-]+$/;

/** The URI of a transcript; query keys in a stable order. */
export function transcriptUri(t: TranscriptTarget): UriParts {
  if (!ID_RE.test(t.sessionId)) throw new Error(`not a session id: ${JSON.stringify(t.sessionId)}`);
  const q: string[] = [];
  if (t.around) q.push(`around=${encodeURIComponent(t.around)}`);
  if (t.mode) q.push(`mode=${t.mode}`);
  if (t.limit && t.limit > 0) q.push(`limit=${Math.floor(t.limit)}`);
  if (t.format) q.push(`format=${t.format}`);
  return { scheme: SCHEME, path: `/session/${t.sessionId}`, query: q.join('&') };
}

/**
 * The wire form of a recall: URI for the server. Built by hand because
 * vscode.Uri.toString() percent-encodes "=" and "&" inside the query, which
 * a standard query parser on the server would then misread.
 */
export function formatUri(u: UriParts): string {
  return `${u.scheme}:${u.path}${u.query ? '?' + u.query : ''}`;
}

/** Reads a transcript URI back; undefined when it is not one. */
export function parseTranscriptUri(u: UriParts): TranscriptTarget | undefined {
  if (u.scheme !== SCHEME) return undefined;
  const m = /^\/session\/([A-Za-z0-9_-]+)\/?$/.exec(u.path);
  if (!m || !m[1]) return undefined;
  const t: TranscriptTarget = { sessionId: m[1] };
  const q = new URLSearchParams(u.query);
  const around = q.get('around');
  if (around) t.around = around;
  const mode = q.get('mode');
  if (mode && READ_MODES.includes(mode)) t.mode = mode as ReadMode;
  const limit = Number(q.get('limit'));
  if (Number.isInteger(limit) && limit > 0) t.limit = limit;
  const format = q.get('format');
  if (format === 'markdown' || format === 'chatml') t.format = format;
  return t;
}

/** What the user typed into "Open Transcript". */
export type TranscriptInput =
  | { kind: 'cursor'; cursor: string }
  | { kind: 'session'; sessionId: string }
  | { kind: 'uri'; target: TranscriptTarget }
  | { kind: 'invalid'; message: string };

const CURSOR_RE = /^rc\d+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const SESSION_RE = /^ses_[A-Za-z0-9]+$/;

export function isCursor(s: string): boolean {
  return CURSOR_RE.test(s);
}

export function isSessionId(s: string): boolean {
  return SESSION_RE.test(s);
}

/**
 * Classifies input: a cursor (rc1.…), a session id (ses_…) or a recall:
 * URI. Surrounding quotes and backticks (as copied from a transcript or the
 * CLI output) are dropped.
 */
export function classifyInput(raw: string): TranscriptInput {
  const s = (raw ?? '').trim().replace(/^[`'"<]+|[`'">]+$/g, '');
  if (!s) return { kind: 'invalid', message: 'Enter a cursor (rc1.…) or a session id (ses_…).' };
  if (s.startsWith(SCHEME + ':')) {
    const rest = s.slice(SCHEME.length + 1);
    const qi = rest.indexOf('?');
    const target = parseTranscriptUri({
      scheme: SCHEME,
      path: qi < 0 ? rest : rest.slice(0, qi),
      query: qi < 0 ? '' : rest.slice(qi + 1),
    });
    return target ? { kind: 'uri', target } : { kind: 'invalid', message: 'Not a transcript URI: use recall:/session/ses_….' };
  }
  if (isCursor(s)) return { kind: 'cursor', cursor: s };
  if (isSessionId(s)) return { kind: 'session', sessionId: s };
  if (/^(msg|prt)_/.test(s)) {
    return { kind: 'invalid', message: 'A message id alone is not enough: use the cursor of a search hit, or the session id (ses_…).' };
  }
  return { kind: 'invalid', message: `"${s.length > 40 ? s.slice(0, 40) + '…' : s}" is neither a cursor (rc1.…) nor a session id (ses_…).` };
}

/**
 * The line of message number `index` in a markdown transcript: the server
 * renders each message under a heading "## <index>. <role> · <time>".
 * Headings inside fenced code blocks are skipped. -1 when absent.
 */
export function messageLine(markdown: string, index: number): number {
  const lines = markdown.split('\n');
  let fence: string | undefined;
  const want = `## ${index}. `;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const f = /^\s*(`{3,}|~{3,})/.exec(line);
    if (f && f[1]) {
      if (fence === undefined) fence = f[1][0]!.repeat(f[1].length);
      else if (line.trim().startsWith(fence)) fence = undefined;
      continue;
    }
    if (fence === undefined && line.startsWith(want)) return i;
  }
  return -1;
}
