// Settings -> how to start the server. Pure, no vscode import.

export interface RecallSettings {
  serverPath?: string;
  databasePath?: string;
  indexPath?: string;
}

export interface ServerLaunch {
  /** recall.serverPath, expanded; undefined when unset (see server.ts for what is started then). */
  serverPath?: string;
  args: string[];
  initializationOptions: { db?: string; index?: string };
}

export interface ExpandContext {
  home?: string;
  workspaceFolder?: string;
}

/** Expands a leading "~" and "${workspaceFolder}"/"${userHome}" in a path setting. */
export function expandPath(p: string | undefined, ctx: ExpandContext): string | undefined {
  const s = (p ?? '').trim();
  if (!s) return undefined;
  let out = s;
  if (ctx.home && (out === '~' || out.startsWith('~/'))) out = ctx.home + out.slice(1);
  out = out.replace(/\$\{userHome\}/g, ctx.home ?? '${userHome}');
  if (ctx.workspaceFolder !== undefined) out = out.replace(/\$\{workspaceFolder\}/g, ctx.workspaceFolder);
  return out;
}

/**
 * How to start the server for the settings: recall.serverPath (when set;
 * else resolveServer picks the bundled binary or PATH's) started as
 * "<bin> lsp"; databasePath and indexPath become initializationOptions
 * db and index, left out when unset so the server applies its own defaults.
 */
export function serverLaunch(settings: RecallSettings, ctx: ExpandContext = {}): ServerLaunch {
  const init: ServerLaunch['initializationOptions'] = {};
  const db = expandPath(settings.databasePath, ctx);
  const index = expandPath(settings.indexPath, ctx);
  if (db) init.db = db;
  if (index) init.index = index;
  const launch: ServerLaunch = { args: ['lsp'], initializationOptions: init };
  const serverPath = expandPath(settings.serverPath, ctx);
  if (serverPath) launch.serverPath = serverPath;
  return launch;
}

/** Setting keys whose change needs a server restart. */
export const RESTART_KEYS = ['recall.serverPath', 'recall.databasePath', 'recall.indexPath'] as const;
