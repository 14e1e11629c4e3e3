// How long the canvas of a big graph takes to draw in a fresh browser
// (issue 41): `/bench?bench=N` is loaded, and the time is from navigation
// until the modules and cables in the page last changed in number (watched
// every frame), with the main thread's long tasks summed over that load.
// The harness (`scripts/bench canvas`) measures one build against React
// Flow; this compares two builds of Patchbay: with a second server, the two
// alternate in one sitting, so that they are compared as a ratio rather
// than against figures from another day.
//   node scripts/bench-canvas-load.mjs N BASE_URL [OTHER_BASE_URL]
import { chromium } from 'playwright-core';

const [size, ...bases] = process.argv.slice(2);
const RUNS = Number(process.env.PATCHBAY_CANVAS_LOAD_RUNS || 7);
const executablePath = process.env.PATCHBAY_CHROMIUM || '/usr/bin/chromium';
// Long enough for every size the bench page draws to settle.
const SETTLE_MS = 1500;

async function once(base) {
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.addInitScript(() => {
      window.__canvas = { drawn: 0, busy: 0 };
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) window.__canvas.busy += entry.duration;
      }).observe({ type: 'longtask', buffered: true });
      let last = -1;
      const watch = () => {
        const count = document.querySelectorAll('[data-node-id]').length
          + 100000 * document.querySelectorAll('[data-edge-id]').length;
        if (count !== last) {
          last = count;
          window.__canvas.drawn = performance.now();
        }
        requestAnimationFrame(watch);
      };
      requestAnimationFrame(watch);
    });
    await page.goto(`${base}/bench?bench=${size}`);
    await page.waitForTimeout(SETTLE_MS);
    const measured = await page.evaluate(() => window.__canvas);
    if (!measured.drawn) throw new Error(`${base}: nothing was drawn at N=${size}`);
    return measured;
  } finally {
    await browser.close();
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const spread = (values) => `${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))}`;

if (!size || !/^\d+$/.test(size) || bases.length === 0) {
  console.error('usage: node scripts/bench-canvas-load.mjs N BASE_URL [OTHER_BASE_URL]');
  process.exit(2);
}
const results = bases.map(() => ({ drawn: [], busy: [] }));
for (let run = 0; run < RUNS; run += 1) {
  for (const [index, base] of bases.entries()) {
    const { drawn, busy } = await once(base);
    results[index].drawn.push(drawn);
    results[index].busy.push(busy);
  }
}
console.log(`the canvas of /bench?bench=${size}, ${RUNS} fresh browsers each${bases.length > 1 ? ', the servers alternating' : ''}: median ms (min–max)`);
for (const [index, base] of bases.entries()) {
  const { drawn, busy } = results[index];
  console.log(`  ${base.padEnd(28)} drawn ${Math.round(median(drawn))} (${spread(drawn)}) ms   long tasks ${Math.round(median(busy))} (${spread(busy)}) ms`);
}
