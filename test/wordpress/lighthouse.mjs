// Runs Lighthouse's SEO category on each URL given, in one Chromium (the
// machine's: CHROME_PATH), and writes NAME.json per URL into OUTDIR.
// Usage: node lighthouse.mjs OUTDIR NAME=URL...
// Prints one line per URL: NAME SCORE FAILING-AUDITS (comma-separated or -).
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import lighthouse from 'lighthouse';
import * as chromeLauncher from 'chrome-launcher';

const [outdir, ...pages] = process.argv.slice(2);
if (!outdir || pages.length === 0) {
  console.error('usage: node lighthouse.mjs OUTDIR NAME=URL...');
  process.exit(2);
}
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'headgate-lighthouse-'));
const chrome = await chromeLauncher.launch({
  chromePath: process.env.CHROME_PATH || '/usr/bin/chromium',
  userDataDir: profile,
  chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
let code = 0;
try {
  for (const page of pages) {
    const eq = page.indexOf('=');
    const name = page.slice(0, eq), url = page.slice(eq + 1);
    const result = await lighthouse(url, {
      port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: ['seo'],
      formFactor: 'desktop', screenEmulation: {disabled: true},
      maxWaitForLoad: 60000, disableFullPageScreenshot: true,
    }, {
      extends: 'lighthouse:default',
      // The SEO audits read the loaded DOM, robots.txt and the headers;
      // none of them needs the performance run's waits for quiet.
      settings: {pauseAfterFcpMs: 0, pauseAfterLoadMs: 0, networkQuietThresholdMs: 0, cpuQuietThresholdMs: 0},
    });
    fs.writeFileSync(path.join(outdir, name + '.json'), result.report);
    const lhr = result.lhr;
    if (lhr.runtimeError) {
      console.log(`${name} error ${lhr.runtimeError.code}: ${lhr.runtimeError.message}`);
      code = 1;
      continue;
    }
    const failed = lhr.categories.seo.auditRefs
      .filter(r => r.weight > 0 && lhr.audits[r.id].score !== null && lhr.audits[r.id].score < 1)
      .map(r => r.id);
    console.log(`${name} ${lhr.categories.seo.score} ${failed.join(',') || '-'}`);
  }
} finally {
  await chrome.kill();
  fs.rmSync(profile, {recursive: true, force: true});
}
process.exit(code);
