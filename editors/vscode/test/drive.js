// Drives code-server in headless Chromium: runs "Recall: Search History"
// from the command palette, searches the fixture for a planted fact, opens
// the hit and checks the transcript editor; then checks the server's hover
// on a session id. Everything is read off the UI as a person would see it
// (the editor tab, the status bar's language and caret line, the visible
// text): the extension ships no test hook. Usage: node drive.js URL RUN_DIR
// SCREENSHOT.png (NODE_PATH must reach playwright-core.) Steps print their
// elapsed time.
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [url, runDir, screenshot] = process.argv.slice(2);
const QUERY = 'ERR_QUOTA_7731';
const TITLE = 'Investigate nightly worker failure';
const SESSION = 'ses_dd7571907ffe5vPpW7vxTE77tW';

const t0 = Date.now();
let tStep = t0;
const step = (name) => {
  const now = Date.now();
  console.log(`[drive] ${name}: ${((now - tStep) / 1000).toFixed(1)}s (at ${((now - t0) / 1000).toFixed(1)}s)`);
  tStep = now;
};

async function runCommand(page, title) {
  // A remote extension's commands reach the palette only once the remote
  // extension host has registered it, and an open palette does not pick up
  // late arrivals: reopen it until the row shows.
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await page.waitForSelector('.quick-input-widget input', { timeout: 15000 });
    await page.keyboard.type(title, { delay: 15 });
    try {
      // Gotcha 10: never press Enter before the matching row is shown.
      await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 5000 });
      break;
    } catch (e) {
      if (attempt >= 12) throw new Error(`command "${title}" never appeared in the palette`);
      await page.keyboard.press('Escape');
      await page.waitForTimeout(1000);
    }
  }
  await page.keyboard.press('Enter');
}

/**
 * What the active editor shows: its tab label (a transcript's is the
 * session id, the last segment of its recall: URI), the status bar's
 * language mode and caret line (1-based), and the visible text (Monaco
 * renders spaces as NBSP; they come back as spaces). Saved as
 * editor-<name>.json in the run dir for a failed run's post-mortem.
 */
async function readEditor(page, name) {
  const tab = (await page.locator('.tabs-container .tab.active').first().innerText()).trim();
  const language = (await page.locator('[id="status.editor.mode"]').first().innerText()).trim();
  const caret = (await page.locator('[id="status.editor.selection"]').first().innerText()).trim(); // "Ln 12, Col 1"
  const text = (await page.locator('.editor-instance .monaco-editor .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
  const m = /Ln (\d+)/.exec(caret);
  const r = { tab, language, line: m ? Number(m[1]) : 0, text };
  fs.writeFileSync(path.join(runDir, `editor-${name}.json`), JSON.stringify(r, null, 2));
  return r;
}

/** Runs body, then waits until a transcript of session is the active editor with want in view, and reads it. */
async function expectTranscript(page, name, session, want, body) {
  await body();
  await page.locator('.tabs-container .tab.active', { hasText: session }).first().waitFor({ timeout: 30000 });
  await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: want }).first().waitFor({ timeout: 30000 });
  await page.waitForTimeout(300); // the status bar follows the editor
  const r = await readEditor(page, name);
  check(/markdown/i.test(r.language), `${name}: the transcript is in ${r.language}, want Markdown`);
  return r;
}

/** Closes every editor, so the next transcript opens fresh (its caret where the extension puts it). */
async function closeEditors(page) {
  await runCommand(page, 'View: Close All Editors');
  await page.locator('.tabs-container .tab').first().waitFor({ state: 'detached', timeout: 10000 }).catch(() => {});
}

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

(async () => {
  // launchServer() rather than launchPersistentContext(): it exposes the
  // browser process. Playwright starts Chromium in its own process group, so
  // the harness is told its pid to kill that group too (the profile goes to
  // TMPDIR, inside the run dir).
  const server = await chromium.launchServer({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  fs.writeFileSync(path.join(runDir, 'chromium.pid'), String(server.process().pid));
  const browser = await chromium.connect(server.wsEndpoint());
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await ctx.newPage();
  const consoleLog = fs.createWriteStream(path.join(runDir, 'browser-console.log'));
  page.on('console', (m) => consoleLog.write(`${m.type()}: ${m.text()}\n`));
  try {
    await page.goto(url, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('.monaco-workbench .statusbar', { timeout: 90000 });
    await page.waitForTimeout(1500);
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } }).catch(() => {});
    step('workbench');

    // The command palette entry exists once the extension is installed;
    // running it activates the extension and starts the server.
    await runCommand(page, 'Recall: Search History');
    await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Recall: Search History' }).waitFor({ timeout: 60000 });
    step('palette -> Search History');

    await page.keyboard.type(QUERY, { delay: 25 });
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: TITLE }).filter({ hasText: QUERY }).first();
    await row.waitFor({ timeout: 60000 });
    await page.screenshot({ path: path.join(runDir, 'search.png') });
    step(`search "${QUERY}" -> "${TITLE}"`);

    // The transcript editor: its tab names the session, its text shows the
    // hit's message, revealed at the top with the caret on its heading.
    let r = await expectTranscript(page, 'hit', SESSION, QUERY, () => row.click());
    check(r.line > 1, `the hit's message was not revealed (caret on line ${r.line})`);
    check(r.text.includes(`code=${QUERY}`), `the revealed window lacks code=${QUERY}`);
    await page.waitForTimeout(300);
    await page.screenshot({ path: screenshot });
    // The top of the same document is the session's title: the whole session, not a window.
    await page.keyboard.press('Control+Home');
    await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: `# ${TITLE}` }).first().waitFor({ timeout: 10000 });
    step('open hit -> transcript');

    // Hover from the server on a session id in a workspace file.
    await page.keyboard.press('Control+P');
    await page.waitForSelector('.quick-input-widget input', { timeout: 15000 });
    await page.keyboard.type('notes.md', { delay: 20 });
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'notes.md' }).first().waitFor({ timeout: 20000 });
    await page.keyboard.press('Enter');
    await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: SESSION }).first().waitFor({ timeout: 20000 });
    // Put the cursor inside the id (line 3, column 50) and ask for the hover
    // from the keyboard: steadier than aiming the mouse at a token.
    await page.keyboard.press('Control+G');
    await page.waitForSelector('.quick-input-widget input', { timeout: 15000 });
    await page.keyboard.type('3:50', { delay: 20 });
    await page.keyboard.press('Enter');
    const hover = page.locator('.monaco-hover', { hasText: TITLE }).first();
    for (let i = 1; ; i++) {
      await runCommand(page, 'Show or Focus Hover');
      try {
        await hover.waitFor({ state: 'visible', timeout: 5000 });
        break;
      } catch (e) {
        // The server may not have the document yet: ask again.
        if (i >= 6) throw new Error('no hover with the session title on ' + SESSION);
        await page.keyboard.press('Escape');
      }
    }
    await page.screenshot({ path: path.join(runDir, 'hover.png') });
    step('hover on session id');

    // The hover's "open transcript" link is a recall: URI the client turns
    // into a command link; following it re-opens (and re-reports) the transcript.
    r = await expectTranscript(page, 'hover', SESSION, TITLE, () => hover.locator('a', { hasText: /open transcript/i }).first().click());
    check(r.tab.includes(SESSION), `hover link opened ${r.tab}`);
    step('hover link -> transcript');

    // Browse Sessions: filter by title, open the whole session at its top.
    await closeEditors(page);
    r = await expectTranscript(page, 'browse', SESSION, `# ${TITLE}`, async () => {
      await runCommand(page, 'Recall: Browse Sessions');
      await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Recall: Browse Sessions' }).waitFor({ timeout: 30000 });
      await page.keyboard.type('nightly worker', { delay: 20 });
      await page.locator('.quick-input-list .monaco-list-row', { hasText: TITLE }).filter({ hasText: 'tool calls' }).first().click();
    });
    check(r.line === 1, `browse opened ${r.tab} with the caret on line ${r.line}, want 1`);
    step('Browse Sessions -> transcript');

    // Open Transcript by session id (another session of the fixture).
    const other = 'ses_dd7570c2effev5t0rsWhX9lxh7';
    r = await expectTranscript(page, 'open', other, '# Onboarding notes for the ledger package', async () => {
      await runCommand(page, 'Recall: Open Transcript');
      await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Recall: Open Transcript' }).waitFor({ timeout: 30000 });
      await page.keyboard.press('Control+A');
      await page.keyboard.type(other, { delay: 10 });
      await page.keyboard.press('Enter');
    });
    check(r.tab.includes(other), `open transcript opened ${r.tab}`);
    step('Open Transcript ses_… -> transcript');

    // Reindex: a forced sync behind a progress notification, then a summary.
    await runCommand(page, 'Recall: Reindex');
    await page.locator('.notifications-toasts', { hasText: 'Recall: reindexed' }).first().waitFor({ timeout: 60000 });
    await page.screenshot({ path: path.join(runDir, 'reindex.png') });
    step('Reindex -> notification');
  } catch (err) {
    await page.screenshot({ path: path.join(runDir, 'failure.png') }).catch(() => {});
    throw err;
  } finally {
    await browser.close().catch(() => {});
    await server.close().catch(() => {});
    consoleLog.end();
  }
})().catch((e) => {
  console.error('[drive] FAIL', e && e.message ? e.message : e);
  process.exit(1);
});
