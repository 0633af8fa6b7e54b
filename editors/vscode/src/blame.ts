// Session blame in the editor: pure, no vscode import.
//
// The server attributes each line of a file as it is now to the past
// session, message and part that wrote it (recall/blame {path}); this
// turns its ranges into what the editor shows: one label per range (the
// session title and age) and a link that opens the transcript at that
// message.

import { ageString, oneLine, plural } from './format';
import type { BlameRange, BlameResult } from './protocol.gen';

/** A decoration to draw: 0-based, inclusive lines, the label after the range's first line, the hover's text. */
export interface BlameMark {
  startLine: number;
  endLine: number;
  label: string;
  hover: string;
  /** The transcript at the message that wrote the range (a recall: URI), when the server gave one. */
  uri?: string;
  range: BlameRange;
}

/** The ranges of a blame result, whatever spelling of the list the server used; malformed entries are dropped. */
export function blameRanges(res: unknown): BlameRange[] {
  if (typeof res !== 'object' || res === null) return [];
  const r = res as { ranges?: unknown; lines?: unknown };
  const list = Array.isArray(r.ranges) ? r.ranges : Array.isArray(r.lines) ? r.lines : [];
  return list.filter((x): x is BlameRange => {
    if (typeof x !== 'object' || x === null) return false;
    const b = x as Partial<BlameRange>;
    return Number.isInteger(b.startLine) && Number.isInteger(b.endLine) && typeof b.sessionId === 'string' && b.endLine! >= b.startLine!;
  });
}

/** "attributed of lines lines from N past sessions", as the server counted them. */
export function blameSummary(res: Pick<BlameResult, 'attributed' | 'lines'>, ranges: ReadonlyArray<BlameRange>): string {
  const sessions = new Set(ranges.map((b) => b.sessionId)).size;
  return `${res.attributed} of ${plural(res.lines, 'line')} from ${plural(sessions, 'past session')}`;
}

/** The marks for ranges, clipped to a document of lineCount lines. */
export function blameMarks(ranges: ReadonlyArray<BlameRange>, lineCount: number, now: number = Date.now()): BlameMark[] {
  const out: BlameMark[] = [];
  for (const b of ranges) {
    const start = Math.max(0, b.startLine - 1);
    const end = Math.min(lineCount - 1, b.endLine - 1);
    if (end < start) continue;
    const title = oneLine(b.title || b.sessionId, 60);
    const age = b.time ? ageString(b.time, now) : '';
    const lines = b.endLine - b.startLine + 1;
    out.push({
      startLine: start,
      endLine: end,
      label: `${title}${age ? ' · ' + age : ''}`,
      hover: `Written in **${title}**${b.tool ? ` (${b.tool})` : ''}${age ? `, ${age}` : ''}: line${lines === 1 ? ` ${b.startLine}` : `s ${b.startLine}–${b.endLine}`}`,
      ...(b.uri ? { uri: b.uri } : {}),
      range: b,
    });
  }
  return out;
}

/** The mark holding a 0-based line, if any. */
export function markAt(marks: ReadonlyArray<BlameMark>, line: number): BlameMark | undefined {
  return marks.find((m) => m.startLine <= line && line <= m.endLine);
}

/** A pitfall the server found for a file: a session that hit an error in it, and the error's line. */
export interface FilePitfall {
  sessionId: string;
  error: string;
  time?: string;
}

/** The pitfalls of a files result (its `pitfalls` list, when the server sends one), by session id. */
export function pitfallsBySession(res: unknown): Map<string, FilePitfall[]> {
  const out = new Map<string, FilePitfall[]>();
  const list = typeof res === 'object' && res !== null ? (res as { pitfalls?: unknown }).pitfalls : undefined;
  if (!Array.isArray(list)) return out;
  for (const x of list) {
    if (typeof x !== 'object' || x === null) continue;
    const p = x as { sessionId?: unknown; session?: unknown; error?: unknown; line?: unknown; time?: unknown };
    const id = typeof p.sessionId === 'string' ? p.sessionId : typeof p.session === 'string' ? p.session : undefined;
    const error = typeof p.error === 'string' ? p.error : typeof p.line === 'string' ? p.line : undefined;
    if (!id || !error) continue;
    const entry: FilePitfall = { sessionId: id, error: oneLine(error, 160), ...(typeof p.time === 'string' ? { time: p.time } : {}) };
    out.set(id, [...(out.get(id) ?? []), entry]);
  }
  return out;
}
