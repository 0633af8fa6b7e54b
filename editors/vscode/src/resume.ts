// Resume and cite a past session: pure, no vscode import.
//
// The server says how to resume a session (a `resume` {cwd, argv} field)
// and how to cite it (a `citation` string) on hits and sessions; a server
// that predates them is served from the fields it does send (id,
// directory, title, time), the same shapes: `opencode --session <id>` in
// the session's directory (opencode-ai 1.18's flag: `-s, --session
// session id to continue`), and "<title> (ses_…, msg_…, <date>)".

/** How to resume a session: the program and its arguments, run in cwd. */
export interface ResumeCommand {
  cwd: string;
  argv: string[];
}

/** What a hit or session says about itself; resume and citation only from servers that send them. */
export interface CiteSource {
  sessionId: string;
  title?: string;
  messageId?: string;
  /** When the message (or the session) was written: ISO 8601. */
  time?: string;
  directory?: string;
  /** The source that holds it (several histories). */
  source?: string;
  /** What the server's recall/cite takes for it: a hit's cursor, a message or session id. */
  target?: string;
  resume?: unknown;
  citation?: unknown;
}

function isResumeCommand(v: unknown): v is ResumeCommand {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as { cwd?: unknown; argv?: unknown };
  return typeof r.cwd === 'string' && Array.isArray(r.argv) && r.argv.length > 0 && r.argv.every((a) => typeof a === 'string');
}

/** The server's resume when it sent one, else `opencode --session <id>` in the session's directory. */
export function resumeOf(s: CiteSource): ResumeCommand {
  if (isResumeCommand(s.resume)) return { cwd: s.resume.cwd, argv: [...s.resume.argv] };
  return { cwd: s.directory ?? '', argv: ['opencode', '--session', s.sessionId] };
}

/** The server's citation when it sent one, else "<title> (ses_…, msg_…, <YYYY-MM-DD>)". */
export function citationOf(s: CiteSource): string {
  if (typeof s.citation === 'string' && s.citation.trim()) return s.citation.trim();
  const title = (s.title ?? '').replace(/\s+/g, ' ').trim() || '(untitled session)';
  const ids = [s.sessionId, s.messageId].filter((x): x is string => !!x);
  const date = s.time && !Number.isNaN(Date.parse(s.time)) ? new Date(Date.parse(s.time)).toISOString().slice(0, 10) : '';
  return `${title} (${[...ids, ...(date ? [date] : [])].join(', ')})`;
}

/**
 * One argument as a shell reads it literally. POSIX shells and PowerShell
 * both take '…' as literal text (a ' inside is closed, escaped and
 * reopened for POSIX, doubled for PowerShell); plain words stay bare, so
 * the command line reads as a person would type it.
 */
export function shellQuote(arg: string, powershell = false): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return powershell ? `'${arg.replace(/'/g, "''")}'` : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The command line a terminal runs for argv. */
export function commandLine(argv: ReadonlyArray<string>, powershell = false): string {
  return argv.map((a) => shellQuote(a, powershell)).join(' ');
}
