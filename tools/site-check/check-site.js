#!/usr/bin/env node
// Open every HTML page of a built pkgdown site in headless Chromium and fail
// on JavaScript errors, images that do not load, and broken internal links.
//
//   node tools/site-check/check-site.js [docs]
//
// The site is served from a local HTTP server (so pages load as they would
// on a web host). Nothing is fetched from other hosts: the libraries that
// pkgdown's template loads from CDNs are served from the same versions
// installed by npm in tools/site-check (Chromium checks them against the
// pages' integrity hashes), and every other request to another host is
// blocked and listed. So the check runs offline and gives the same answer
// every time. One CDN library is not on npm (bootstrap-toc 1.0.1, loaded
// from jsDelivr's GitHub mirror): while it is blocked, the error it causes
// ("Toc is not defined", which also stops the rest of pkgdown.js's start-up
// code on that page) is listed as not checked instead of failing the check.
// Uses Debian's /usr/bin/chromium (CHROMIUM=... to override) through
// playwright-core; no browser is downloaded. Exit status 1 if any problem.
'use strict';

const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');

let chromium;
try {
  ({ chromium } = require('playwright-core'));
} catch (e) {
  console.error('site-check: playwright-core is missing; run `npm install --prefix tools/site-check` ' +
                '(tools/install-deps.sh --site does it).');
  process.exit(2);
}

const root = path.resolve(process.argv[2] || 'docs');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(path.join(root, 'index.html'))) {
  console.error(`site-check: ${root}/index.html not found; run \`make site\` first.`);
  process.exit(2);
}
if (!fs.existsSync(executablePath)) {
  console.error(`site-check: ${executablePath} not found; install Debian's chromium ` +
                '(tools/install-deps.sh --site).');
  process.exit(2);
}

// CDN prefix -> local directory (under node_modules) with the same files.
const NM = path.join(__dirname, 'node_modules');
const CDN = [
  ['https://cdnjs.cloudflare.com/ajax/libs/font-awesome/5.12.1/', '@fortawesome/fontawesome-free'],
  ['https://cdnjs.cloudflare.com/ajax/libs/headroom/0.11.0/', 'headroom.js/dist'],
  ['https://cdnjs.cloudflare.com/ajax/libs/clipboard.js/2.0.6/', 'clipboard/dist'],
  ['https://cdnjs.cloudflare.com/ajax/libs/fuse.js/6.4.6/', 'fuse.js/dist'],
  ['https://cdnjs.cloudflare.com/ajax/libs/autocomplete.js/0.38.0/', 'autocomplete.js/dist'],
  ['https://cdnjs.cloudflare.com/ajax/libs/mark.js/8.11.1/', 'mark.js/dist'],
  ['https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.5/', 'mathjax'],
];
// Libraries with no local copy: the JavaScript error their absence causes.
const UNAVAILABLE = [
  { name: 'bootstrap-toc 1.0.1', url: /bootstrap-toc@v1\.0\.1/, error: /\bToc is not defined\b/ },
];

function cdnFile(u) {
  for (const [prefix, dir] of CDN) {
    if (!u.startsWith(prefix)) continue;
    const rel = decodeURIComponent(u.slice(prefix.length).split('?')[0].split('#')[0]);
    const f = path.join(NM, dir, rel);
    if (f.startsWith(path.join(NM, dir)) && fs.existsSync(f) && fs.statSync(f).isFile()) return f;
    return null;
  }
  return null;
}

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.css': 'text/css', '.js': 'text/javascript',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.ico': 'image/x-icon',
  '.woff': 'font/woff', '.woff2': 'font/woff2', '.ttf': 'font/ttf', '.txt': 'text/plain',
  '.xml': 'application/xml', '.md': 'text/markdown',
};

// The file a site path maps to (directories -> index.html), or null.
function fileFor(urlPath) {
  let p = decodeURIComponent(urlPath.split('?')[0].split('#')[0]);
  let f = path.join(root, p);
  if (!f.startsWith(root)) return null;
  if (fs.existsSync(f) && fs.statSync(f).isDirectory()) f = path.join(f, 'index.html');
  return fs.existsSync(f) && fs.statSync(f).isFile() ? f : null;
}

function listPages(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const f = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name === 'deps') continue;  // bundled libraries' own docs, if any
      out.push(...listPages(f));
    } else if (e.name.endsWith('.html')) {
      out.push(f);
    }
  }
  return out.sort();
}

async function main() {
  const server = http.createServer((req, res) => {
    const f = fileFor(new URL(req.url, 'http://x').pathname);
    if (!f) {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(f).toLowerCase()] || 'application/octet-stream' });
    fs.createReadStream(f).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;

  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'site-check-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });

  const external = new Set();   // blocked
  const served = new Set();     // CDN files served from node_modules
  const blockedOnPage = new Set();
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(origin) || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
    const f = cdnFile(u);
    if (f) {
      served.add(u.split('?')[0]);
      return route.fulfill({
        status: 200, body: fs.readFileSync(f),
        headers: { 'Content-Type': TYPES[path.extname(f).toLowerCase()] || 'application/octet-stream',
                   'Access-Control-Allow-Origin': '*' },
      });
    }
    external.add(u);
    blockedOnPage.add(u);
    return route.abort('blockedbyclient');
  });

  const pages = listPages(root);
  const problems = [];
  const unchecked = [];  // errors caused by a library we could not serve
  const links = [];      // { from, href } of internal links, checked after all pages loaded
  const ids = new Map(); // page path -> Set of element ids / anchor names
  const page = await context.newPage();
  let current = '';
  page.on('pageerror', (err) => {
    const lib = UNAVAILABLE.find((l) => l.error.test(err.message) &&
                                        [...blockedOnPage].some((u) => l.url.test(u)));
    if (lib) unchecked.push(`${current}: "${err.message}" (needs ${lib.name}, not available offline)`);
    else problems.push(`${current}: JavaScript error: ${err.message}`);
  });
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const where = (msg.location() && msg.location().url) || '';
    // Requests we blocked on purpose (other hosts) are reported separately.
    if (/ERR_BLOCKED_BY_CLIENT/.test(text)) return;
    if (where === `${origin}/favicon.ico`) return;  // see the response handler
    // MathJax 2 declares a placeholder font at url('about:blank'), which
    // Chromium refuses and logs on every page with math; not a site error.
    if (where === 'about:blank' || /Access to font at 'about:blank'/.test(text)) return;
    problems.push(`${current}: console error: ${text}${where ? ` (${where.replace(origin, '')})` : ''}`);
  });
  page.on('response', (resp) => {
    // Chromium asks for /favicon.ico by itself; pkgdown makes none unless
    // asked (build_favicons()), and no page links to it.
    if (resp.url() === `${origin}/favicon.ico`) return;
    if (resp.url().startsWith(origin) && resp.status() >= 400) {
      problems.push(`${current}: ${resp.status()} for ${resp.url().slice(origin.length)}`);
    }
  });

  for (const file of pages) {
    const rel = '/' + path.relative(root, file).split(path.sep).join('/');
    current = rel;
    blockedOnPage.clear();
    try {
      await page.goto(origin + rel, { waitUntil: 'load', timeout: 30000 });
      await page.waitForLoadState('networkidle', { timeout: 5000 }).catch(() => {});
    } catch (e) {
      problems.push(`${rel}: did not load: ${e.message.split('\n')[0]}`);
      continue;
    }
    const info = await page.evaluate(() => ({
      images: Array.from(document.images).map((img) => ({
        src: img.currentSrc || img.src, ok: img.complete && img.naturalWidth > 0 })),
      links: Array.from(document.querySelectorAll('a[href]')).map((a) => a.href),
      ids: Array.from(document.querySelectorAll('[id], a[name]')).map((e) => e.id || e.getAttribute('name')),
    }));
    for (const img of info.images) {
      if (img.src.startsWith(origin) || img.src.startsWith('data:')) {
        if (!img.ok) problems.push(`${rel}: image did not load: ${img.src.replace(origin, '')}`);
      } else {
        external.add(img.src);
      }
    }
    ids.set(rel, new Set(info.ids));
    for (const href of info.links) links.push({ from: rel, href });
  }

  let checked = 0;
  for (const { from, href } of links) {
    if (!href.startsWith(origin)) continue;  // other hosts, mailto: ...: not ours
    checked++;
    const u = new URL(href);
    const f = fileFor(u.pathname);
    if (!f) {
      problems.push(`${from}: broken link to ${u.pathname}`);
      continue;
    }
    const frag = decodeURIComponent(u.hash.slice(1));
    if (frag && f.endsWith('.html')) {
      const target = '/' + path.relative(root, f).split(path.sep).join('/');
      const known = ids.get(target);
      if (known && !known.has(frag)) problems.push(`${from}: link to missing anchor ${target}#${frag}`);
    }
  }

  await context.close();
  server.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });

  const uniq = [...new Set(problems)];
  console.log(`site-check: ${pages.length} pages, ${links.length} links (${checked} internal), ` +
              `${served.size} CDN files served from local copies, ` +
              `${external.size} requests to other hosts blocked`);
  for (const u of [...external].sort()) console.log(`  blocked: ${u}`);
  if (unchecked.length) {
    const byMsg = new Map();
    for (const u of unchecked) { const k = u.slice(u.indexOf(': ') + 2); byMsg.set(k, (byMsg.get(k) || 0) + 1); }
    for (const [k, n] of byMsg) console.log(`  not checked on ${n} page(s): ${k}`);
  }
  if (uniq.length) {
    console.log(`site-check: ${uniq.length} problem(s)`);
    for (const p of uniq) console.log(`  ${p}`);
    process.exit(1);
  }
  console.log('site-check: OK (no JavaScript errors, missing images or broken internal links)');
}

main().catch((e) => {
  console.error(`site-check: ${e.stack || e}`);
  process.exit(2);
});
