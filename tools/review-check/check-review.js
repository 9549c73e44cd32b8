#!/usr/bin/env node
// Open the review reports written by make-reports.R in headless Chromium
// and check what a reviewer does with them:
//   - the page loads from a file:// URL with no JavaScript error and no
//     request to any other host (the report is self-contained);
//   - clicking the score header sorts ascending then descending;
//   - the given_label column filter and the decision column filter narrow
//     the table to the expected rows;
//   - marking rows drop / relabel / keep and editing one new_label, then
//     "Download decisions", gives the expected CSV (saved next to the report
//     as <report>-decisions.csv for the R side to apply);
//   - the 10^4-row report opens and sorts in under 2 s each.
//
//   node tools/review-check/check-review.js OUTDIR   (OUTDIR/expected.json)
//
// Uses Debian's /usr/bin/chromium (CHROMIUM=... to override) through
// playwright-core; no browser is downloaded. Exit status 1 on any failure,
// 2 when the set-up is missing.
'use strict';

const fs = require('fs');
const path = require('path');

let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch (e) {
  console.error('review-check: playwright-core is missing; run tools/install-deps.sh --site');
  process.exit(2);
}
const outDir = path.resolve(process.argv[2] || 'review-check-out');
const expected = JSON.parse(fs.readFileSync(path.join(outDir, 'expected.json'), 'utf8'));
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(executablePath)) {
  console.error(`review-check: ${executablePath} not found (tools/install-deps.sh --site installs it)`);
  process.exit(2);
}
const LIMIT_MS = 2000;
let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}

// CPU seconds used by the page's renderer process, all threads (Chrome's
// ProcessTime metric).
async function busySeconds(cdp) {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return metrics.find((m) => m.name === 'ProcessTime').value;
}
// The time limit is checked on the renderer's CPU time, which is what the
// wall-clock time is on an idle machine: on a shared, loaded one the
// wall-clock time also counts waiting for a CPU. Both are printed;
// REVIEW_CHECK_WALL=1 checks the wall-clock time instead.
function timing(what, wallMs, cpuMs) {
  const wall = process.env.REVIEW_CHECK_WALL === '1';
  const ms = wall ? wallMs : cpuMs;
  check(ms < LIMIT_MS, `${what} in ${wallMs.toFixed(0)} ms wall-clock, ${cpuMs.toFixed(0)} ms ` +
        `renderer CPU (limit ${LIMIT_MS} ms on ${wall ? 'wall-clock' : 'CPU'} time)`);
}

// Rows shown, and the text of column `col` in the first shown row.
async function info(page) {
  return page.evaluate(() => {
    const t = $('#nl-review-table table.dataTable').DataTable();
    return t.page.info().recordsDisplay;
  });
}
async function firstCell(page, col) {
  return page.$eval(`#nl-review-table tbody tr:first-child td:nth-child(${col + 1})`,
                    (td) => td.textContent.trim());
}
async function header(page, col) {
  return page.locator('#nl-review-table thead tr:first-child th').nth(col);
}
async function columnFilter(page, col) {
  return page.locator(`#nl-review-table thead tr.nl-filters input[data-col="${col}"]`);
}
async function waitDraw(page, before) {
  await page.waitForFunction((b) => {
    const td = document.querySelector('#nl-review-table tbody tr:first-child');
    return td && td.textContent !== b;
  }, before, { timeout: 10000 });
}

async function checkReport(browser, name, exp, timed) {
  console.log(`\n${name}: ${path.basename(exp.file)}, ${exp.n} rows, ${(exp.size / 1024).toFixed(0)} kB`);
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const errors = [];
  const outside = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith('file:') || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
    outside.push(u);
    return route.abort();
  });

  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const t0 = Date.now();
  const busy0 = await busySeconds(cdp);
  await page.goto('file://' + exp.file);
  await page.waitForSelector('#nl-review-table .dataTables_info', { timeout: 15000 });
  const openMs = Date.now() - t0;
  const openBusyMs = 1000 * ((await busySeconds(cdp)) - busy0);
  check(errors.length === 0, `no JavaScript errors${errors.length ? ': ' + errors.join(' | ') : ''}`);
  check(outside.length === 0, `no requests outside the file${outside.length ? ': ' + outside.join(' ') : ''}`);
  check((await info(page)) === exp.n, `all ${exp.n} rows in the table`);
  const imgs = await page.$$eval('.nl-plots img', (els) => els.map((e) => e.naturalWidth > 0));
  check(imgs.length > 0 && imgs.every(Boolean), `${imgs.length} plot(s) shown`);
  const flaggedFirst = await page.$$eval('#nl-review-table tbody tr td:nth-child(2)',
                                         (tds) => tds.map((td) => td.textContent.trim()));
  check(exp.flagged === 0 || flaggedFirst[0] === 'true', 'flagged rows first');
  if (timed) timing('opens', openMs, openBusyMs);

  // Sorting by score: ascending, then descending.
  let before = await page.$eval('#nl-review-table tbody tr:first-child', (tr) => tr.textContent);
  const t1 = Date.now();
  const busy1 = await busySeconds(cdp);
  await (await header(page, exp.score_col)).click();
  await waitDraw(page, before);
  const sortMs = Date.now() - t1;
  const sortBusyMs = 1000 * ((await busySeconds(cdp)) - busy1);
  const lo = parseFloat(await firstCell(page, exp.score_col));
  check(Math.abs(lo - exp.score_min) <= 1e-9 + 1e-3 * Math.abs(exp.score_min), `sort ascending: first score ${lo}`);
  before = await page.$eval('#nl-review-table tbody tr:first-child', (tr) => tr.textContent);
  await (await header(page, exp.score_col)).click();
  await waitDraw(page, before);
  const hi = parseFloat(await firstCell(page, exp.score_col));
  check(Math.abs(hi - exp.score_max) <= 1e-3 * Math.abs(exp.score_max), `sort descending: first score ${hi}`);
  if (timed) timing('sorts', sortMs, sortBusyMs);

  // Filter by the given label (text, or "= value" for numbers).
  {
    const f = await columnFilter(page, exp.filter_col);
    await f.fill(exp.numeric_filter ? '= ' + exp.filter_value : exp.filter_value);
    await page.waitForFunction((n) => $('#nl-review-table table.dataTable').DataTable().page.info().recordsDisplay === n,
                               exp.filter_count, { timeout: 10000 }).catch(() => {});
    const shown = await info(page);
    check(shown === exp.filter_count, `filter given_label "${exp.filter_value}": ${shown} rows (expected ${exp.filter_count})`);
    await f.fill('');
    const s = await columnFilter(page, exp.score_col);
    await s.fill('> 0.5');
    await page.waitForFunction((n) => $('#nl-review-table table.dataTable').DataTable().page.info().recordsDisplay === n,
                               exp.score_above_half, { timeout: 10000 }).catch(() => {});
    const above = await info(page);
    check(above === exp.score_above_half, `filter score "> 0.5": ${above} rows (expected ${exp.score_above_half})`);
    await s.fill('');
    await page.waitForFunction((n) => $('#nl-review-table table.dataTable').DataTable().page.info().recordsDisplay === n,
                               exp.n, { timeout: 10000 }).catch(() => {});
  }

  // Back to the report's own order (flagged first), then mark four rows.
  await page.evaluate(() => $('#nl-review-table table.dataTable').DataTable().order([]).draw());
  await page.reload();
  await page.waitForSelector('#nl-review-table .dataTables_info');
  const rows = exp.first_rows;
  await page.selectOption(`select.nl-decision[data-row="${rows[0]}"]`, 'drop');
  await page.selectOption(`select.nl-decision[data-row="${rows[1]}"]`, 'relabel');
  await page.selectOption(`select.nl-decision[data-row="${rows[2]}"]`, 'keep');
  const valueSel = `.nl-value[data-row="${rows[3]}"]`;
  if ((await page.$eval(valueSel, (e) => e.tagName)) === 'SELECT') {
    const opts = await page.$$eval(`${valueSel} option`, (os) => os.map((o) => o.value));
    check(JSON.stringify(opts) === JSON.stringify(['cat', 'dog', 'fox']),
          `the relabel choice lists the classes: ${opts.join(', ')}`);
    await page.selectOption(valueSel, exp.custom_value);
  } else {
    check((await page.$eval(valueSel, (e) => e.type)) === 'number', 'numeric labels: new_label is a number input');
    await page.fill(valueSel, exp.custom_value);
    await page.press(valueSel, 'Tab');
  }
  const count = await page.textContent('#nl-count');
  check(count.trim() === '4 rows marked', `counter says "${count.trim()}"`);
  // The decisions survive sorting, and the decision column filters.
  await (await header(page, exp.score_col)).click();
  const dcol = await page.evaluate(() => {
    const t = $('#nl-review-table table.dataTable').DataTable();
    return t.columns().header().toArray().findIndex((h) => h.textContent.trim() === 'decision');
  });
  const df = await columnFilter(page, dcol);
  await df.fill('drop');
  await page.waitForFunction(() => $('#nl-review-table table.dataTable').DataTable().page.info().recordsDisplay === 1,
                             null, { timeout: 10000 }).catch(() => {});
  check((await info(page)) === 1, 'filter decision "drop": 1 row');
  await df.fill('');

  // Every column header has a tooltip.
  const titles = await page.$$eval('#nl-review-table thead tr:first-child th', (ths) => ths.map((t) => t.title || ''));
  check(titles.every((t) => t.length > 0), `every column has a tooltip (${titles.filter((t) => t).length} of ${titles.length})`);
  // The marks survive a reload (localStorage).
  await page.reload();
  await page.waitForSelector('#nl-review-table .dataTables_info');
  const count2 = (await page.textContent('#nl-count')).trim();
  check(count2 === '4 rows marked', `after a reload the counter says "${count2}"`);
  if (name === 'classification') {
    await page.setViewportSize({ width: 1400, height: 1000 });
    const fits = await page.evaluate(() => {
      const w = document.querySelector('.dataTables_wrapper');
      const overlap = [];
      document.querySelectorAll('#nl-review-table tbody tr:first-child td').forEach((td) => {
        if (td.scrollWidth > td.clientWidth + 1) overlap.push(td.textContent);
      });
      return { page: document.documentElement.scrollWidth, wrapper: w.getBoundingClientRect().right, overlap };
    });
    check(fits.page <= 1400 && fits.wrapper <= 1400, `fits 1,400 px (page ${fits.page} px, table box ends at ${fits.wrapper.toFixed(0)} px)`);
    check(fits.overlap.length === 0, `no cell runs into the next${fits.overlap.length ? ': ' + fits.overlap.join(' | ') : ''}`);
    const shot = path.join(__dirname, 'review-1400px.png');
    await page.evaluate(() => document.querySelector('.nl-plots').scrollIntoView());
    await page.screenshot({ path: shot, fullPage: false });
    console.log(`     screenshot: ${shot}`);
  }

  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#nl-download')]);
  const saved = exp.file.replace(/\.html$/, '-decisions.csv');
  await download.saveAs(saved);
  const got = fs.readFileSync(saved, 'utf8');
  check(got === exp.expected_csv, `downloaded CSV as expected${got === exp.expected_csv ? '' : ':\n' + got + '--- expected:\n' + exp.expected_csv}`);
  check(errors.length === 0, `still no JavaScript errors${errors.length ? ': ' + errors.join(' | ') : ''}`);
  await context.close();
}

// The audit page: blind until the verdict, marked by keyboard only (down
// arrow, k / d / a class number), marks survive a reload, and the download
// goes through estimate_errors() and apply_review() in R (audit-check.R).
async function checkAudit(browser, exp) {
  console.log(`\naudit: ${path.basename(exp.file)}, ${exp.n} sampled rows`);
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto('file://' + exp.file);
  await page.waitForSelector('#nl-review-table .dataTables_info');
  const first = await page.$eval('#nl-review-table tbody tr:first-child', (tr) => tr.textContent);
  check(first.includes('\u00b7'), 'blind: the model columns are hidden before a verdict');
  const cols = await page.evaluate(() => $('#nl-review-table table.dataTable').DataTable().columns().header().toArray()
    .map((h) => h.textContent.trim()));
  const shown = await page.evaluate(() => $('#nl-review-table table.dataTable').DataTable().page.info().length);
  await page.evaluate(() => $('#nl-review-table table.dataTable').DataTable().page.len(-1).draw());
  // Mark every row by keyboard: drop every fifth, relabel every seventh to class 2, keep the rest.
  let wrong = 0;
  let dropped = 0;
  await page.click('#nl-review-table tbody tr:first-child td:first-child');
  for (let i = 0; i < exp.n; i++) {
    const key = i % 5 === 0 ? 'd' : i % 7 === 0 ? '2' : 'k';
    if (key !== 'k') wrong++;
    if (key === 'd') dropped++;
    await page.keyboard.press(key);
    await page.keyboard.press('ArrowDown');
  }
  const count = (await page.textContent('#nl-count')).trim();
  check(count === `${exp.n} rows marked of ${exp.n}`, `keyboard marking: "${count}"`);
  const after = await page.$eval('#nl-review-table tbody tr:first-child', (tr) => tr.textContent);
  check(!after.includes('\u00b7'), 'the model columns show once the row has a verdict');
  const opts = await page.$$eval('#nl-review-table tbody tr select.nl-value', (ss) => ss.length ? Array.from(ss[0].options).map((o) => o.value) : []);
  check(JSON.stringify(opts) === JSON.stringify(exp.classes), `the relabel choice lists the classes: ${opts.join(', ')}`);
  await page.reload();
  await page.waitForSelector('#nl-review-table .dataTables_info');
  const count2 = (await page.textContent('#nl-count')).trim();
  check(count2 === count, `marks survive a reload: "${count2}"`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#nl-download')]);
  const saved = exp.file.replace(/\.html$/, '-decisions.csv');
  await download.saveAs(saved);
  const lines = fs.readFileSync(saved, 'utf8').trim().split('\n');
  check(lines.length === exp.n + 1 && lines[0].includes('wrong,fingerprint,design'), `audit CSV: ${lines.length - 1} rows with verdicts`);
  const { execFileSync } = require('child_process');
  try {
    const outR = execFileSync(process.env.RSCRIPT || 'Rscript',
                              [path.join(__dirname, 'audit-check.R'), exp.rds, saved, String(wrong), String(dropped)],
                              { encoding: 'utf8' });
    check(true, 'the audit export goes through estimate_errors() and apply_review(): ' + outR.trim());
  } catch (e) {
    check(false, 'the audit export goes through estimate_errors(): ' + (e.stderr || e.message));
  }
  check(errors.length === 0, `no JavaScript errors${errors.length ? ': ' + errors.join(' | ') : ''}`);
  void cols; void shown;
  await context.close();
}

(async () => {
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  try {
    await checkAudit(browser, expected.audit);
    await checkReport(browser, 'classification', expected.classes, false);
    await checkReport(browser, 'regression', expected.regression, false);
    await checkReport(browser, 'large', expected.large, true);
  } finally {
    await browser.close();
  }
  console.log(`\nreview-check: ${failures === 0 ? 'all checks passed' : failures + ' check(s) failed'}`);
  process.exit(failures === 0 ? 0 : 1);
})().catch((e) => { console.error(e); process.exit(1); });
