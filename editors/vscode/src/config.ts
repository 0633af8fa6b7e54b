// Settings -> how to start the server. Pure, no vscode import.

export interface RecallSettings {
  serverPath?: string;
  databasePath?: string;
  indexPath?: string;
}

export interface ServerLaunch {
  command: string;
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
 * The server command line and initializationOptions for the settings:
 * recall.serverPath (else "recall" on PATH) started as "<bin> lsp";
 * databasePath and indexPath become initializationOptions db and index,
 * left out when unset so the server applies its own defaults.
 */
export function serverLaunch(settings: RecallSettings, ctx: ExpandContext = {}): ServerLaunch {
  const init: ServerLaunch['initializationOptions'] = {};
  const db = expandPath(settings.databasePath, ctx);
  const index = expandPath(settings.indexPath, ctx);
  if (db) init.db = db;
  if (index) init.index = index;
  return { command: expandPath(settings.serverPath, ctx) ?? 'recall', args: ['lsp'], initializationOptions: init };
}

/** Setting keys whose change needs a server restart. */
export const RESTART_KEYS = ['recall.serverPath', 'recall.databasePath', 'recall.indexPath'] as const;
