// Hover links: pure, no vscode import.
//
// VS Code's markdown renderer drops links whose scheme is not on its allow
// list (http, https, file, command, ...), so the server's
// "[open transcript](recall:/session/…)" would render as plain text. The
// client rewrites them into command links that open the same URI.

/** The command that opens a recall: URI given as its string form. */
export const OPEN_URI_COMMAND = 'recall.openUri';

const LINK_RE = /\]\((recall:[^)\s]+)\)/g;

/** Rewrites markdown links to recall: URIs into command: links; returns the text and whether anything changed. */
export function rewriteRecallLinks(markdown: string, command: string = OPEN_URI_COMMAND): { text: string; changed: boolean } {
  let changed = false;
  const text = markdown.replace(LINK_RE, (_m, uri: string) => {
    changed = true;
    return `](command:${command}?${encodeURIComponent(JSON.stringify([uri]))})`;
  });
  return { text, changed };
}
