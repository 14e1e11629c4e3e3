// What a stranger waits for when they open a view link (issue 41): the time
// from navigation until the page is hydrated — a click on "Zoom in", tried
// every 10 ms, changes the zoom — in fresh browsers, on loopback and with
// the network throttled as a phone's, and the bytes fetched by then. With a
// second server (another build of the app), the two alternate in one
// sitting, so that they are compared as a ratio rather than against figures
// from another day: loads of one page on this 2-core machine vary by ±20%.
//   node scripts/bench-load.mjs BASE_URL [OTHER_BASE_URL]
import { chromium } from 'playwright-core';

const bases = process.argv.slice(2);
const RUNS = Number(process.env.PATCHBAY_LOAD_RUNS || 5);
const executablePath = process.env.PATCHBAY_CHROMIUM || '/usr/bin/chromium';
const launch = () => chromium.launch({ executablePath, args: ['--no-sandbox'] });

/** Network conditions, as Chromium's DevTools emulate them. */
const NETWORKS = [
  { name: 'loopback', conditions: null },
  { name: '9 Mbit/s, 40 ms', conditions: { latency: 40, downloadThroughput: 9e6 / 8, uploadThroughput: 1.5e6 / 8 } },
  { name: '1.6 Mbit/s, 150 ms', conditions: { latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 750e3 / 8 } },
];

/** A new graph on the server; its view link (the address without the edit token). */
async function viewLink(base) {
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.goto(`${base}/new`);
    await page.locator('.access-badge').filter({ hasText: 'Editing' }).waitFor();
    await page.waitForLoadState('networkidle');
    return page.url().split('#')[0];
  } finally {
    await browser.close();
  }
}

async function once(link, conditions) {
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1360, height: 820 } });
    const devtools = await page.context().newCDPSession(page);
    await devtools.send('Network.enable');
    let bytes = 0;
    devtools.on('Network.loadingFinished', (event) => { bytes += event.encodedDataLength; });
    if (conditions) await devtools.send('Network.emulateNetworkConditions', { offline: false, ...conditions });
    await page.addInitScript(() => {
      window.__hydrated = null;
      const poke = setInterval(() => {
        const button = document.querySelector('button[aria-label="Zoom in"]');
        const level = document.querySelector('.zoom-level');
        if (!button || !level) return;
        if (level.textContent !== '100%') {
          window.__hydrated = performance.now();
          clearInterval(poke);
          return;
        }
        button.click();
      }, 10);
    });
    await page.goto(link);
    await page.waitForFunction(() => window.__hydrated !== null, null, { timeout: 60000, polling: 20 });
    const hydrated = await page.evaluate(() => window.__hydrated);
    return { hydrated, bytes };
  } finally {
    await browser.close();
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const links = [];
for (const base of bases) links.push(await viewLink(base));
console.log(`a view link until hydrated, ${RUNS} fresh browsers each${bases.length > 1 ? ', the servers alternating' : ''}: median ms (min–max), and KB fetched by then (median, as sent)`);
for (const network of NETWORKS) {
  const results = bases.map(() => []);
  for (let run = 0; run < RUNS; run++) {
    for (const [index, link] of links.entries()) results[index].push(await once(link, network.conditions));
  }
  for (const [index, base] of bases.entries()) {
    const times = results[index].map((result) => result.hydrated);
    const kilobytes = median(results[index].map((result) => result.bytes)) / 1000;
    console.log(`  ${network.name.padEnd(20)} ${base.padEnd(24)} ${median(times).toFixed(0).padStart(5)} (${Math.min(...times).toFixed(0)}–${Math.max(...times).toFixed(0)}) ms  ${kilobytes.toFixed(0)} KB`);
  }
}
