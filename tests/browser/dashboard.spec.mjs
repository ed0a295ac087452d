// tests/browser/dashboard.spec.mjs - the dashboard page in a real browser (Debian's
// chromium, headless, driven by playwright-core). Run by tests/sh/test_dashboard_browser.sh,
// which starts `secho dashboard` and passes:
//   DASH_URL      page address (http://127.0.0.1:PORT/)
//   DASH_SHOT     where to save the full-page screenshot (under build/)
//   DASH_PROFILE  a fresh, empty --user-data-dir
//   DASH_COUNT    packets per path (default 500; the page must then say "1000 of 1000")
// Prints PASS/FAIL lines like tests/unit/harness.h; exits 1 when a case failed.
import { chromium } from 'playwright-core';

const url = process.env.DASH_URL || 'http://127.0.0.1:8765/';
const shot = process.env.DASH_SHOT || 'build/dashboard.png';
const profile = process.env.DASH_PROFILE;
const count = parseInt(process.env.DASH_COUNT || '500', 10);
const runTimeoutMs = parseInt(process.env.DASH_RUN_TIMEOUT_MS || '120000', 10);

let failed = 0;
let checks = 0;
let caseFails = 0;
let caseName = '';
function begin(name) { caseName = name; checks = 0; caseFails = 0; }
function check(ok, msg) {
  checks++;
  if (!ok) { caseFails++; if (caseFails <= 10) console.log('  check failed: ' + msg); }
}
function end() {
  if (caseFails) { failed++; console.log(`FAIL ${caseName} (${caseFails} of ${checks} checks failed)`); }
  else console.log(`PASS ${caseName} (${checks} checks)`);
}

if (!profile) {
  console.log('FAIL dashboard browser: DASH_PROFILE (a fresh user-data-dir) not set');
  process.exit(1);
}

const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1320, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const consoleErrors = [];
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));

  begin('dashboard browser page-loads');
  const resp = await page.goto(url, { waitUntil: 'load', timeout: 15000 });
  check(resp && resp.status() === 200, 'GET / status ' + (resp && resp.status()));
  check((await page.textContent('header h1')).trim() === 'secho', 'title is not "secho"');
  check(await page.isVisible('#run-btn'), 'no Run button');
  check((await page.textContent('#run-btn')).trim() === 'Run', 'button text is not Run');
  check(await page.isVisible('#path-streaming') && await page.isVisible('#path-offload'),
    'both path cards visible');
  const a = await page.locator('#path-streaming').boundingBox();
  const b = await page.locator('#path-offload').boundingBox();
  check(a && b && Math.abs(a.y - b.y) < 2 && b.x > a.x + a.width - 1,
    'the two paths are side by side');
  end();

  begin('dashboard browser run');
  await page.fill('#p-count', String(count));
  await page.click('#run-btn');
  let sawProgress = false;
  const t0 = Date.now();
  let text = '';
  while (Date.now() - t0 < runTimeoutMs) {
    const p = await page.textContent('#progress-text');
    if (/paired|load|counters|endpoint/.test(p)) sawProgress = true;
    text = (await page.textContent('#verified-total')).trim();
    if (/run \d+ (done|failed)/.test(p)) break;
    await page.waitForTimeout(200);
  }
  const err = (await page.textContent('#run-error')).trim();
  if (err) console.log('  page error line: ' + err);
  check(sawProgress, 'progress was never shown while running');
  const want = `${2 * count} of ${2 * count} verified`;
  check(text === want, `headline is "${text}", want "${want}"`);
  for (const p of ['streaming', 'offload']) {
    const t = (await page.textContent(`#path-${p} .path-verified`)).trim();
    check(t === `${count} / ${count} verified`, `${p}: "${t}"`);
  }
  check((await page.textContent('#verdict')).startsWith('PASS'), 'verdict is not PASS');
  end();

  begin('dashboard browser charts');
  const n = async (sel) => page.locator(sel).count();
  check(await n('svg#rtt-chart rect.bar') > 0, 'rtt-chart has no bars');
  check(await n('svg#rtt-chart rect.bar-streaming') > 0 && await n('svg#rtt-chart rect.bar-offload') > 0,
    'rtt-chart lacks one path');
  check(await n('svg#latency-chart rect.bar') >= 4, 'latency-chart has too few bars');
  check(await n('svg#load-chart path.line') === 2, 'load-chart does not have two lines');
  check(await n('svg#load-chart circle.pt') >= 2, 'load-chart has no points');
  check(await n('#cost-table tbody tr') >= 4, 'cost table rows');
  const cyc = (await page.textContent('#cost-table tbody tr:first-child td:nth-child(2)')).trim();
  check(/^[\d,]+$/.test(cyc), `data-path cycles cell is "${cyc}"`);
  check(consoleErrors.length === 0, 'console errors: ' + consoleErrors.join(' | '));
  await page.screenshot({ path: shot, fullPage: true });
  console.log('  screenshot: ' + shot);
  end();
} catch (e) {
  failed++;
  console.log(`FAIL ${caseName || 'dashboard browser'} (exception: ${String(e).split('\n')[0]})`);
} finally {
  await ctx.close();
}
process.exit(failed ? 1 : 0);
