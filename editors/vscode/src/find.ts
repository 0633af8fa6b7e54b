// Find in transcript: the current query's hits inside an open transcript.
// Pure, no vscode import, so node --test can run it.
//
// The server matches stemmed FTS5 tokens; a transcript is plain markdown,
// so this looks for the query's words (and "phrases") as written, case
// folded, which finds what a person would call the hit in the text.
// -exclusions and the OR/AND/NOT operators are not text to find.

/** What to look for in a transcript for a search query: its phrases and words, longest first, lower case. */
export function queryTerms(query: string): string[] {
  const terms: string[] = [];
  const q = (query ?? '').trim();
  const re = /(-?)"([^"]*)"|(\S+)/g;
  for (let m = re.exec(q); m; m = re.exec(q)) {
    if (m[2] !== undefined) {
      if (m[1] !== '-' && m[2].trim()) terms.push(m[2].trim().replace(/\s+/g, ' '));
      continue;
    }
    const word = (m[3] ?? '').replace(/^[("']+|[)"',.;:!?]+$/g, '');
    if (!word || word.startsWith('-') || /^(OR|AND|NOT)$/.test(word)) continue;
    terms.push(word.replace(/\*$/, ''));
  }
  const seen = new Set<string>();
  return terms
    .map((t) => t.toLowerCase())
    .filter((t) => t.length > 0 && !seen.has(t) && (seen.add(t), true))
    .sort((a, b) => b.length - a.length);
}

/** A match: [start, end) string offsets into the text. */
export type TextSpan = readonly [number, number];

/** Where the terms occur in text, in order, none overlapping (a longer term wins where two start at once). */
export function findMatches(text: string, terms: ReadonlyArray<string>): TextSpan[] {
  if (terms.length === 0 || !text) return [];
  const lower = text.toLowerCase();
  const found: TextSpan[] = [];
  for (const t of terms) {
    if (!t) continue;
    for (let i = lower.indexOf(t); i >= 0; i = lower.indexOf(t, i + 1)) found.push([i, i + t.length]);
  }
  found.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const out: TextSpan[] = [];
  for (const m of found) {
    const last = out[out.length - 1];
    if (last && m[0] < last[1]) continue;
    out.push(m);
  }
  return out;
}

/**
 * The match to go to from offset: the first one starting after it
 * (forward) or the last one starting before it (backward), wrapping
 * around the document's end. -1 when there are none.
 */
export function nextMatch(matches: ReadonlyArray<TextSpan>, offset: number, forward: boolean): number {
  if (matches.length === 0) return -1;
  if (forward) {
    const i = matches.findIndex((m) => m[0] > offset);
    return i >= 0 ? i : 0;
  }
  for (let i = matches.length - 1; i >= 0; i--) if (matches[i]![0] < offset) return i;
  return matches.length - 1;
}
