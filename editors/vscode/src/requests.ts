// The requests this extension sends, as data: method + params. Pure, no
// vscode import, so the contract test can send exactly these to a real
// `recall lsp` (test/unit/server.test.ts).

import type { ReadParams, SearchParams, SessionsParams } from './protocol';
import { Requests } from './protocol';
import { formatUri, TranscriptTarget, transcriptUri } from './uri';

/** Rows per search; a quick pick shows ~10 at a time, the rest is scrolling room. */
export const SEARCH_LIMIT = 30;
/** Sessions per Browse Sessions / code lens page. */
export const SESSIONS_LIMIT = 50;

export interface Req<P> {
  method: string;
  params: P;
}

/** Search History: one request per (debounced) query; the server ranks and groups. */
export function searchRequest(query: string): Req<SearchParams> {
  return { method: Requests.search, params: { query, limit: SEARCH_LIMIT } };
}

/**
 * Where a cursor points: a one-message window around it names the session
 * (session.id) and the message's index (range.first), so the client can
 * open the whole session scrolled to that message.
 */
export function locateCursorRequest(cursor: string): Req<ReadParams> {
  return { method: Requests.read, params: { cursor, mode: 'around', limit: 1, format: 'markdown' } };
}

/** The same for a recall: URI naming a message (hover links, symbols). */
export function locateMessageRequest(sessionId: string, messageId: string): Req<{ uri: string }> {
  return transcriptRequest({ sessionId, around: messageId, mode: 'around', limit: 1 });
}

/** A transcript's text: recall/transcript {uri} (the fallback for workspace/textDocumentContent). */
export function transcriptRequest(target: TranscriptTarget | string): Req<{ uri: string }> {
  const uri = typeof target === 'string' ? target : formatUri(transcriptUri(target));
  return { method: Requests.transcript, params: { uri } };
}

export function sessionsRequest(filter: string): Req<SessionsParams> {
  return { method: Requests.sessions, params: { filter, limit: SESSIONS_LIMIT } };
}

export function filesRequest(path: string): Req<{ path: string; limit: number }> {
  return { method: Requests.files, params: { path, limit: SESSIONS_LIMIT } };
}

export function reindexRequest(): Req<Record<string, never>> {
  return { method: Requests.reindex, params: {} };
}
