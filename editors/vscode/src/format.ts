// Pure formatting for quick picks: no vscode import, so node --test can run it.

import type { Hit, SessionInfo } from './protocol.gen';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * A short relative age: "just now", "5m ago", "3h ago", "2d ago", "5w ago",
 * and the date itself (YYYY-MM-DD) past roughly a year. Unparseable input
 * is returned unchanged, so an odd server value is shown rather than lost.
 */
export function ageString(iso: string, now: number = Date.now()): string {
  const t = Date.parse(iso);
  if (!iso || Number.isNaN(t)) {
    return iso ?? '';
  }
  const d = now - t;
  if (d < 0) {
    return d > -MINUTE ? 'just now' : iso.slice(0, 10); // clock skew vs. a real future date
  }
  if (d < MINUTE) return 'just now';
  if (d < HOUR) return `${Math.floor(d / MINUTE)}m ago`;
  if (d < DAY) return `${Math.floor(d / HOUR)}h ago`;
  if (d < 14 * DAY) return `${Math.floor(d / DAY)}d ago`;
  if (d < 365 * DAY) return `${Math.floor(d / (7 * DAY))}w ago`;
  return iso.slice(0, 10);
}

/** Replaces a leading home directory with "~". */
export function shortenDirectory(dir: string, home?: string): string {
  if (!dir) return '';
  const h = (home ?? '').replace(/\/+$/, '');
  if (h && (dir === h || dir.startsWith(h + '/'))) return '~' + dir.slice(h.length);
  return dir;
}

/** Keeps long directories readable in a one-line description: "…/projects/ledger". */
export function compactDirectory(dir: string, max = 40): string {
  if (dir.length <= max) return dir;
  const parts = dir.split('/').filter(Boolean);
  let out = parts.pop() ?? dir;
  while (parts.length > 0 && out.length + parts[parts.length - 1]!.length + 1 <= max - 2) out = parts.pop() + '/' + out;
  return '…/' + out;
}

/**
 * Moves the main highlighted match near the start of the snippet, so it
 * survives the quick pick's truncation (about 70 characters show). The main
 * match is the longest highlight (an exact code token such as
 * ERR_QUOTA_7731 beats a stemmed "ERROR"), the earliest on a tie.
 * Highlights are byte offsets into the UTF-8 snippet (the server is Go);
 * they are mapped to string indexes here.
 */
export function focusSnippet(snippet: string, highlights: ReadonlyArray<readonly [number, number]> | null | undefined, lead = 25): string {
  const s = snippet ?? '';
  let best: readonly [number, number] | undefined;
  for (const h of highlights ?? []) {
    if (!best || h[1] - h[0] > best[1] - best[0] || (h[1] - h[0] === best[1] - best[0] && h[0] < best[0])) best = h;
  }
  if (!best || best[0] <= 0) return s;
  const idx = byteToIndex(s, best[0]);
  if (idx <= lead) return s;
  let from = idx - lead;
  const space = s.indexOf(' ', from);
  if (space >= 0 && space < idx) from = space + 1;
  return '…' + s.slice(from);
}

function byteToIndex(s: string, byteOffset: number): number {
  let bytes = 0;
  let i = 0;
  for (const ch of s) {
    if (bytes >= byteOffset) return i;
    bytes += Buffer.byteLength(ch, 'utf8');
    i += ch.length;
  }
  return s.length;
}

/** One line, whitespace collapsed, at most max characters (ellipsis included). */
export function oneLine(text: string, max = 200): string {
  const s = (text ?? '').replace(/\s+/g, ' ').trim();
  if (s.length <= max) return s;
  return s.slice(0, Math.max(0, max - 1)).trimEnd() + '…';
}

/**
 * Quick-pick labels treat "$(name)" as an icon; history text must never
 * turn into icons, so the "$(" sequence is broken up.
 */
export function escapeIcons(text: string): string {
  return text.replace(/\$\(/g, '$\u200b(');
}

/** The fields of a vscode.QuickPickItem this extension fills. */
export interface PickItem {
  label: string;
  description: string;
  detail: string;
  alwaysShow: boolean;
}

/** Who wrote a hit: "user", "assistant", "assistant · bash". */
export function hitSource(hit: Pick<Hit, 'role' | 'kind' | 'tool'>): string {
  const who = hit.role || hit.kind || '';
  return hit.tool ? `${who} · ${hit.tool}` : who;
}

/**
 * A search hit as a quick-pick row: the title, then directory · age ·
 * source, then the snippet. alwaysShow is set because the server already
 * ranked the rows; the quick pick's own fuzzy filter must not hide them.
 * A title hit's snippet is the title, which the label already shows.
 */
export function hitItem(hit: Hit, now: number = Date.now(), home?: string): PickItem {
  const parts = [compactDirectory(shortenDirectory(hit.directory, home)), ageString(hit.time, now), hitSource(hit)].filter(Boolean);
  const snippet = oneLine(focusSnippet(hit.snippet, hit.highlights));
  const titleOnly = hit.kind === 'title' && snippet === oneLine(hit.title);
  return {
    label: escapeIcons(hit.title || hit.sessionId || '(untitled session)'),
    description: escapeIcons(parts.join(' · ')),
    detail: titleOnly ? 'the session title matches' : escapeIcons(snippet),
    alwaysShow: true,
  };
}

/**
 * The hits worth a row each, in the server's order. Dropped: a repeat of
 * a cursor or of a part (a tool call and its output come back as two hits
 * of one part), a repeat of a snippet already shown for the same session,
 * and a title hit of a session that also has a content hit here, since
 * every row of that session already shows its title as the label. The
 * server ranks a title hit above the content of its own session (a title
 * matches whole), and a row that only repeats its label must not take row 1.
 */
export function distinctHits(hits: ReadonlyArray<Hit> | null | undefined): Hit[] {
  const list = hits ?? [];
  const withContent = new Set(list.filter((h) => h.kind !== 'title').map((h) => h.sessionId));
  const seen = new Set<string>();
  const out: Hit[] = [];
  for (const h of list) {
    if (h.kind === 'title' && withContent.has(h.sessionId)) continue;
    const keys = [`c:${h.cursor}`, `s:${h.sessionId}\u0000${oneLine(h.snippet)}`];
    if (h.partId) keys.push(`p:${h.sessionId}\u0000${h.partId}`);
    if (keys.some((k) => seen.has(k))) continue;
    for (const k of keys) seen.add(k);
    out.push(h);
  }
  return out;
}

/** A session as a quick-pick row for "Browse Sessions". */
export function sessionItem(s: SessionInfo, now: number = Date.now(), home?: string): PickItem {
  const parts = [compactDirectory(shortenDirectory(s.directory, home)), ageString(s.updated, now)].filter(Boolean);
  const counts = [plural(s.messages, 'message'), plural(s.turns, 'turn'), plural(s.toolCalls, 'tool call')];
  const kids = s.children?.length ?? 0;
  if (kids > 0) counts.push(plural(kids, 'subagent'));
  if (s.archived) counts.push('archived');
  const first = s.firstPrompt ? ` — ${s.firstPrompt}` : '';
  return {
    label: escapeIcons(s.title || s.id),
    description: escapeIcons(parts.join(' · ')),
    detail: escapeIcons(oneLine(counts.join(', ') + first)),
    alwaysShow: true,
  };
}

/** The code lens pick's title: "Recall: 1 past session touched worker.py". */
export function fileSessionsTitle(total: number, path: string): string {
  return `Recall: ${plural(total, 'past session')} touched ${path.split(/[\\/]/).pop() ?? path}`;
}

/** "1 turn", "2 turns", "0 turns". */
export function plural(n: number, word: string): string {
  const k = n ?? 0;
  return `${k} ${word}${k === 1 ? '' : 's'}`;
}
