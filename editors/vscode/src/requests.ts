// The requests this extension sends, as data: method + params, typed by
// the generated protocol (each method's params and result come from the
// server's Go types). Pure, no vscode import, so the contract test can
// send exactly these to a real `recall lsp` (test/unit/server.test.ts).

import { Requests, type RequestParams, type RequestTypes } from './protocol.gen';
import { transcriptUri } from './uri';

/** Rows per search; a quick pick shows ~10 at a time, the rest is scrolling room. */
export const SEARCH_LIMIT = 30;
/** Sessions per Browse Sessions / code lens page. */
export const SESSIONS_LIMIT = 50;

/** One request: its method and the params that method takes. */
export interface Req<M extends keyof RequestTypes> {
  method: M;
  params: RequestParams<M>;
}

/** Search History: one request per (debounced) query; the server ranks and groups. */
export function searchRequest(query: string): Req<typeof Requests.search> {
  return { method: Requests.search, params: { query, limit: SEARCH_LIMIT } };
}

/**
 * Where a cursor points: a one-message window around it names the session
 * (session.id) and the message's index (range.first), so the client can
 * open the whole session scrolled to that message.
 */
export function locateCursorRequest(cursor: string): Req<typeof Requests.read> {
  return { method: Requests.read, params: { cursor, mode: 'around', limit: 1, format: 'markdown' } };
}

/** The same for a message the server named by its session and message ids (a transcript's anchor). */
export function locateMessageRequest(sessionId: string, messageId: string): Req<typeof Requests.transcript> {
  return transcriptRequest(transcriptUri({ sessionId, around: messageId, limit: 1 }));
}

/** A session known by its id alone: its first message names it (session.title, for the tab). */
export function locateSessionRequest(sessionId: string): Req<typeof Requests.transcript> {
  return transcriptRequest(transcriptUri({ sessionId, limit: 1 }));
}

/** A transcript's text: recall/transcript {uri} (the fallback for workspace/textDocumentContent). */
export function transcriptRequest(uri: string): Req<typeof Requests.transcript> {
  return { method: Requests.transcript, params: { uri } };
}

export function sessionsRequest(filter: string): Req<typeof Requests.sessions> {
  return { method: Requests.sessions, params: { filter, limit: SESSIONS_LIMIT } };
}

export function filesRequest(path: string): Req<typeof Requests.files> {
  return { method: Requests.files, params: { path, limit: SESSIONS_LIMIT } };
}

export function reindexRequest(): Req<typeof Requests.reindex> {
  return { method: Requests.reindex, params: {} };
}

/**
 * The first `upTo` messages of a session as JSON: the ids of the messages
 * a transcript shows by number (message n is messages[n-1]), for a
 * citation of the message at the caret.
 */
export function messageIdsRequest(sessionId: string, source: string | undefined, upTo: number): Req<typeof Requests.read> {
  return {
    method: Requests.read,
    params: { cursor: sessionId, mode: 'full', format: 'json', limit: Math.max(1, Math.floor(upTo)), ...(source ? { source } : {}) },
  };
}

/** The index and semantic status: its notice (e.g. no embedding model) goes to the log and the status bar once per start. */
export function statusRequest(): Req<typeof Requests.status> {
  return { method: Requests.status, params: {} };
}
