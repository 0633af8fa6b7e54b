// Drives code-server in headless Chromium: runs "Recall: Search History"
// from the command palette, searches the fixture for a planted fact, opens
// the hit and checks the transcript editor; then checks the server's hover
// on a session id. Usage: node drive.js URL RUN_DIR SCREENSHOT.png
// (NODE_PATH must reach playwright-core.) Steps print their elapsed time.
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

/** Runs body, then waits for the extension's next transcript report and returns it (saved as transcript-<name>.json). */
async function expectTranscript(page, name, body) {
  const report = path.join(runDir, 'transcript.json');
  const keep = path.join(runDir, 'transcript-main.json');
  if (fs.existsSync(report)) fs.renameSync(report, keep);
  await body();
  const until = Date.now() + 30000;
  while (!fs.existsSync(report) && Date.now() < until) await page.waitForTimeout(200);
  if (!fs.existsSync(report)) throw new Error(`${name}: no transcript was opened`);
  await page.waitForTimeout(100); // the report is written in one call; let it land
  const r = JSON.parse(fs.readFileSync(report, 'utf8'));
  fs.renameSync(report, path.join(runDir, `transcript-${name}.json`));
  if (fs.existsSync(keep)) fs.renameSync(keep, report);
  return r;
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

    await row.click();
    // The transcript editor: its tab names the session, its text shows the
    // hit's message (revealed at the top). Monaco renders spaces as NBSP,
    // so match space-free tokens.
    await page.locator('.tabs-container .tab', { hasText: SESSION }).first().waitFor({ timeout: 30000 });
    await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: QUERY }).first().waitFor({ timeout: 30000 });
    const deadline = Date.now() + 15000;
    while (!fs.existsSync(path.join(runDir, 'transcript.json')) && Date.now() < deadline) await page.waitForTimeout(200);
    if (!fs.existsSync(path.join(runDir, 'transcript.json'))) throw new Error('the extension did not report the opened transcript');
    await page.waitForTimeout(500);
    await page.screenshot({ path: screenshot });
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
    let r = await expectTranscript(page, 'hover', () => hover.locator('a', { hasText: /open transcript/i }).first().click());
    check(r.uri === `recall:/session/${SESSION}` && r.text.includes('code=ERR_QUOTA_7731'), `hover link opened ${r.uri}`);
    step('hover link -> transcript');

    // Browse Sessions: filter by title, open the whole session.
    r = await expectTranscript(page, 'browse', async () => {
      await runCommand(page, 'Recall: Browse Sessions');
      await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Recall: Browse Sessions' }).waitFor({ timeout: 30000 });
      await page.keyboard.type('nightly worker', { delay: 20 });
      await page.locator('.quick-input-list .monaco-list-row', { hasText: TITLE }).filter({ hasText: 'tool calls' }).first().click();
    });
    check(r.uri === `recall:/session/${SESSION}` && r.revealedLine === -1, `browse opened ${r.uri} at line ${r.revealedLine}`);
    step('Browse Sessions -> transcript');

    // Open Transcript by session id (another session of the fixture).
    const other = 'ses_dd7570c2effev5t0rsWhX9lxh7';
    r = await expectTranscript(page, 'open', async () => {
      await runCommand(page, 'Recall: Open Transcript');
      await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Recall: Open Transcript' }).waitFor({ timeout: 30000 });
      await page.keyboard.press('Control+A');
      await page.keyboard.type(other, { delay: 10 });
      await page.keyboard.press('Enter');
    });
    check(r.uri === `recall:/session/${other}` && r.text.includes('# Onboarding notes for the ledger package'), `open transcript opened ${r.uri}`);
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
