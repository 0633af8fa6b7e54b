// Wire types of the Recall language server (see lsp/README.md for the
// contracts). Only the fields this extension reads are
// declared; the server may send more.

/** Custom request names (the same commands as workspace/executeCommand). */
export const Requests = {
  search: 'recall/search',
  read: 'recall/read',
  sessions: 'recall/sessions',
  status: 'recall/status',
  files: 'recall/files',
  reindex: 'recall/reindex',
  /** Fallback for workspace/textDocumentContent: {uri} -> ReadResult. */
  transcript: 'recall/transcript',
} as const;

export interface SearchParams {
  query: string;
  limit?: number;
  directory?: string;
  session?: string;
  group?: 'session' | 'none';
  mode?: 'auto' | 'lexical' | 'semantic' | 'hybrid';
}

export interface Hit {
  cursor: string;
  sessionId: string;
  messageId: string;
  partId?: string;
  title: string;
  directory: string;
  role: string;
  kind: string;
  tool?: string;
  time: string;
  score?: number;
  snippet: string;
  highlights?: Array<[number, number]>;
}

export interface SearchResult {
  hits: Hit[] | null;
  mode?: string;
  notices?: string[] | null;
  corrections?: string[] | null;
  /** Index freshness; stale with no hits right after start means the first sync is still running. */
  index?: { syncedAt?: string; stale?: boolean; busy?: boolean };
}

export type ReadMode = 'around' | 'next' | 'prev' | 'head' | 'tail' | 'full';

export interface ReadParams {
  cursor: string;
  mode?: ReadMode;
  limit?: number;
  format?: 'chatml' | 'markdown' | 'json';
}

export interface SessionRef {
  id: string;
  title: string;
}

export interface SessionInfo {
  id: string;
  title: string;
  directory: string;
  parentId?: string;
  created?: string;
  updated: string;
  archived?: boolean;
  messages: number;
  turns: number;
  toolCalls: number;
  firstPrompt?: string;
  children?: SessionRef[] | null;
  cursor: string;
}

export interface ReadResult {
  text: string;
  format?: string;
  session?: SessionInfo;
  range?: { first: number; last: number; total: number };
  anchor?: string;
}

export interface SessionsParams {
  filter?: string;
  directory?: string;
  parent?: string;
  limit?: number;
  cursor?: string;
}

export interface SessionsResult {
  sessions: SessionInfo[] | null;
  next?: string;
}
