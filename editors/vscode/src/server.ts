// Which `recall` binary the extension starts. Pure (node's fs only, no
// vscode import), so the unit tests cover the order and the messages.
//
// The order is the one language-server extensions follow (rust-analyzer,
// gopls): an explicit recall.serverPath wins and is never second-guessed;
// otherwise the binary bundled in the platform .vsix (server/recall), and
// last `recall` on the extension host's PATH. Under code-server or a
// Remote window the extension host's PATH is the one its server was
// started with, often not the user's login shell's: that is why the bundled
// binary comes before PATH.

import * as fs from 'fs';
import * as path from 'path';

/** Where a server binary came from. */
export type ServerSource = 'setting' | 'bundled' | 'path';

/** One place looked at, and why it was not used (problem empty when it was). */
export interface Tried {
  source: ServerSource;
  /** The file, or for PATH the directories searched, joined by the platform's delimiter. */
  where: string;
  problem: string;
}

export type ServerResolution =
  | { ok: true; command: string; source: ServerSource; tried: Tried[] }
  | { ok: false; tried: Tried[] };

export interface ResolveInput {
  /** recall.serverPath after ~ and ${…} expansion; undefined or empty when unset. */
  serverPath?: string;
  /** The extension's install directory (context.extensionUri.fsPath). */
  extensionPath: string;
  platform: NodeJS.Platform;
  /** The extension host's PATH. */
  pathEnv?: string;
}

/** What resolveServer asks of the file system (the tests pass a fake). */
export interface FileProbe {
  /** 'file' for a regular file (or a link to one), 'other' for a directory or such, undefined when absent. */
  kind(p: string): Promise<'file' | 'other' | undefined>;
  executable(p: string): Promise<boolean>;
  makeExecutable(p: string): Promise<void>;
}

/**
 * node's fs, synchronously: a few stat calls cost microseconds, while each
 * async one waits its turn in an extension host busy starting other
 * extensions (325 ms for the lookup in a fresh code-server window).
 */
export const realProbe: FileProbe = {
  async kind(p) {
    try {
      return fs.statSync(p).isFile() ? 'file' : 'other';
    } catch {
      return undefined;
    }
  },
  async executable(p) {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
  async makeExecutable(p) {
    fs.chmodSync(p, 0o755);
  },
};

/** The binary's file name on a platform. */
export function serverFileName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'recall.exe' : 'recall';
}

/** Where a platform .vsix carries its server: <extension>/server/recall[.exe] (build.sh puts it there). */
export function bundledServerPath(extensionPath: string, platform: NodeJS.Platform): string {
  return joinFor(platform, extensionPath, 'server', serverFileName(platform));
}

/**
 * The vsce target of this machine (linux-x64, darwin-arm64, win32-x64, …):
 * the platform .vsix to install here is recall-<target>-<version>.vsix.
 */
export function vsixTarget(platform: NodeJS.Platform, arch: string): string {
  return `${platform}-${arch}`;
}

/** Finds the server: recall.serverPath if set, else the bundled binary, else `recall` on PATH. */
export async function resolveServer(input: ResolveInput, probe: FileProbe = realProbe): Promise<ServerResolution> {
  const tried: Tried[] = [];
  const setting = (input.serverPath ?? '').trim();
  if (setting) {
    const problem = await unusable(setting, input.platform, probe, false);
    tried.push({ source: 'setting', where: setting, problem });
    // An explicit setting is the user's choice: a wrong one is reported,
    // not silently replaced by another binary.
    return problem ? { ok: false, tried } : { ok: true, command: setting, source: 'setting', tried };
  }

  const bundled = bundledServerPath(input.extensionPath, input.platform);
  const bundledProblem = await unusable(bundled, input.platform, probe, true);
  tried.push({ source: 'bundled', where: bundled, problem: bundledProblem });
  if (!bundledProblem) return { ok: true, command: bundled, source: 'bundled', tried };

  const delimiter = input.platform === 'win32' ? ';' : ':';
  const dirs = (input.pathEnv ?? '').split(delimiter).filter((d) => d.trim() !== '');
  // Only recall.exe on Windows, not PATHEXT's .cmd/.bat: those need a
  // shell to start, and the server is started without one.
  const name = serverFileName(input.platform);
  for (const dir of dirs) {
    const candidate = joinFor(input.platform, dir, name);
    if (!(await unusable(candidate, input.platform, probe, false))) {
      tried.push({ source: 'path', where: candidate, problem: '' });
      return { ok: true, command: candidate, source: 'path', tried };
    }
  }
  tried.push({
    source: 'path',
    where: dirs.join(delimiter),
    problem: dirs.length ? `not in any of the ${dirs.length} PATH directories of the extension host` : 'the extension host has no PATH',
  });
  return { ok: false, tried };
}

/** Why p cannot be started ('' when it can). A bundled binary that lost its mode bits (some unzip tools drop them) is ours to fix. */
async function unusable(p: string, platform: NodeJS.Platform, probe: FileProbe, repair: boolean): Promise<string> {
  const kind = await probe.kind(p);
  if (kind === undefined) return 'does not exist';
  if (kind !== 'file') return 'is not a file';
  if (platform === 'win32' || (await probe.executable(p))) return '';
  if (!repair) return 'is not executable (chmod +x it)';
  try {
    await probe.makeExecutable(p);
  } catch (err) {
    return `is not executable, and chmod failed: ${err instanceof Error ? err.message : String(err)}`;
  }
  return (await probe.executable(p)) ? '' : 'is not executable, even after chmod';
}

function joinFor(platform: NodeJS.Platform, ...parts: string[]): string {
  return (platform === 'win32' ? path.win32 : path.posix).join(...parts);
}

/** What the notification says when no server was found: what was tried, and what to do. */
export function notFoundMessage(tried: ReadonlyArray<Tried>, target: string, version: string): string {
  const setting = tried.find((t) => t.source === 'setting');
  if (setting) {
    return (
      `Recall: the server set in "recall.serverPath" (${setting.where}) ${setting.problem}. ` +
      'Point the setting at a recall binary, or clear it to use the one bundled with the extension.'
    );
  }
  const parts: string[] = [];
  for (const t of tried) {
    if (t.source === 'bundled') {
      parts.push(
        t.problem === 'does not exist'
          ? `the bundled server (this package has none: install the ${target} package, recall-${target}-${version}.vsix)`
          : `the bundled server ${t.where} (it ${t.problem})`,
      );
    } else if (t.source === 'path') {
      parts.push(`\`recall\` on PATH (${t.problem})`);
    }
  }
  return `Recall: found no server to start. Tried ${parts.join(', then ')}. Set "recall.serverPath" to a recall binary.`;
}

/** A one-line description of the server in use, for the log and the status bar's tooltip. */
export function describeServer(r: { command: string; source: ServerSource }): string {
  switch (r.source) {
    case 'setting':
      return `${r.command} (recall.serverPath)`;
    case 'bundled':
      return `${r.command} (bundled)`;
    case 'path':
      return `${r.command} (from PATH)`;
  }
}
