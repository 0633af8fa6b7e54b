// recall: URIs and the "Open Transcript" input: pure, no vscode import.
//
// URIs and cursors are the server's and opaque here: a search hit, a
// session, a hover link or a code lens names what to open, and this client
// never takes one apart (the server answers a bad one with a clear -32602).
// The one kind of URI the client builds itself, a session's transcript from
// the fields the server gave (session id, message id), is built in
// transcriptUri below and nowhere else; a session the server gives a uri
// for opens that uri instead.

import { Scheme } from './protocol.gen';

export const SCHEME = Scheme;

/** A session as the server names it: its id, its title, and the transcript URI to open when the server gives one. */
export interface SessionTarget {
  id: string;
  title?: string;
  uri?: string;
}

/** What transcriptUri builds a URI from: server-given ids (and title) only. */
export interface TranscriptTarget {
  sessionId: string;
  /** The session's title: the URI's display segment, so the editor's tab says it. */
  title?: string;
  /** A message id: the window around it. */
  around?: string;
  limit?: number;
}

/** Longest display segment, in characters: a tab shows about this much, and a URI stays short. */
const DISPLAY_MAX = 80;

/**
 * The display segment for a title: "<title>.md" on one line, without
 * path separators, at most DISPLAY_MAX characters, percent-encoded; ''
 * for a blank title. The server ignores the segment (recall:/session/<id>/<display>);
 * VS Code names the tab after it, and ".md" makes it markdown.
 */
export function displaySegment(title: string | undefined): string {
  let t = (title ?? '')
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .replace(/[/\\]/g, '-')
    .replace(/\s+/g, ' ')
    .trim();
  if (!t) return '';
  if (t.length > DISPLAY_MAX) t = t.slice(0, DISPLAY_MAX - 1).trimEnd() + '…';
  return encodeURIComponent(t + '.md');
}

const ID_RE = /^[A-Za-z0-9_-]+$/;

/**
 * The URI of a session's transcript (around a message when given), in the
 * form the server reads: recall:/session/<sessionId>[/<title>.md][?around=<messageId>][&limit=<n>].
 * The only place this client writes a recall: URI.
 */
export function transcriptUri(t: TranscriptTarget): string {
  if (!ID_RE.test(t.sessionId)) throw new Error(`not a session id: ${JSON.stringify(t.sessionId)}`);
  const q: string[] = [];
  if (t.around) {
    if (!ID_RE.test(t.around)) throw new Error(`not a message id: ${JSON.stringify(t.around)}`);
    q.push(`around=${t.around}`);
  }
  if (t.limit && t.limit > 0) q.push(`limit=${Math.floor(t.limit)}`);
  const display = displaySegment(t.title);
  return `${SCHEME}:/session/${t.sessionId}${display ? '/' + display : ''}${q.length ? '?' + q.join('&') : ''}`;
}

/** The document of a whole session: the server's uri for it, else the one built from its id and title. */
export function sessionUri(s: SessionTarget): string {
  return typeof s.uri === 'string' && s.uri.startsWith(SCHEME + ':') ? s.uri : transcriptUri({ sessionId: s.id, title: s.title });
}

/** What the user typed into "Open Transcript". */
export type TranscriptInput =
  | { kind: 'cursor'; cursor: string }
  | { kind: 'session'; sessionId: string }
  | { kind: 'uri'; uri: string }
  | { kind: 'invalid'; message: string };

const SESSION_RE = /^ses_[A-Za-z0-9]+$/;

export function isSessionId(s: string): boolean {
  return SESSION_RE.test(s);
}

/**
 * Classifies input: a recall: URI, a session id (ses_…) or else a cursor,
 * which only the server can check. Surrounding quotes and backticks (as
 * copied from a transcript or the CLI output) are dropped.
 */
export function classifyInput(raw: string): TranscriptInput {
  const s = (raw ?? '').trim().replace(/^[`'"<]+|[`'">]+$/g, '');
  if (!s) return { kind: 'invalid', message: 'Enter a cursor (from a search hit or `recall search`) or a session id (ses_…).' };
  if (s.startsWith(SCHEME + ':')) return { kind: 'uri', uri: s };
  if (isSessionId(s)) return { kind: 'session', sessionId: s };
  if (/^(msg|prt)_/.test(s)) {
    return { kind: 'invalid', message: 'A message id alone is not enough: use the cursor of a search hit, or the session id (ses_…).' };
  }
  if (/\s/.test(s)) {
    return { kind: 'invalid', message: `"${s.length > 40 ? s.slice(0, 40) + '…' : s}" is neither a cursor nor a session id (ses_…).` };
  }
  return { kind: 'cursor', cursor: s };
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

/**
 * The number of the message whose section holds 0-based line `line` of a
 * markdown transcript (the last "## <index>. " heading at or above it,
 * outside code fences); 0 above the first message (the session header).
 */
export function messageIndexAt(markdown: string, line: number): number {
  const lines = markdown.split('\n');
  let fence: string | undefined;
  let index = 0;
  for (let i = 0; i <= Math.min(line, lines.length - 1); i++) {
    const l = lines[i] ?? '';
    const f = /^\s*(`{3,}|~{3,})/.exec(l);
    if (f && f[1]) {
      if (fence === undefined) fence = f[1][0]!.repeat(f[1].length);
      else if (l.trim().startsWith(fence)) fence = undefined;
      continue;
    }
    const h = fence === undefined ? /^## (\d+)\. /.exec(l) : null;
    if (h) index = Number(h[1]);
  }
  return index;
}
