// The frames after a wheel zoom settles: what the canvas-bench harness does
// not capture. Ten wheel notches out (to 25 %), one per frame, over an empty
// point of /bench?bench=N, then 2 s of animation frames; prints the longest
// frame after the last notch and how many took over 50 ms, per run.
//   node scripts/bench-zoom-settle.mjs BASE_URL N [N ...]
import { chromium } from 'playwright-core';

const [base, ...sizes] = process.argv.slice(2);
const RUNS = Number(process.env.PATCHBAY_ZOOM_RUNS || 5);
const executablePath = process.env.PATCHBAY_CHROMIUM || '/usr/bin/chromium';

const nextFrame = (page) => page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done())));

async function once(n) {
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(`${base}/bench?bench=${n}`);
    await page.waitForSelector('[data-node-id]');
    // Settled: the count of modules in the page stops changing for 1 s.
    let last = -1;
    for (let still = 0; still < 10; ) {
      await page.waitForTimeout(100);
      const count = await page.locator('[data-node-id]').count();
      still = count === last ? still + 1 : 0;
      last = count;
    }
    const point = await page.evaluate(() => {
      const pane = document.querySelector('[data-bench-pane]') || document.documentElement;
      const box = pane.getBoundingClientRect();
      const empty = (x, y) => {
        const element = document.elementFromPoint(x, y);
        return !!element && pane.contains(element) && !element.closest('[data-node-id],[data-edge-id]');
      };
      for (let y = box.top + box.height / 2; y < box.bottom - 20; y += 6) {
        for (let x = box.left + box.width / 2; x < box.right - 20; x += 6) {
          if (empty(x, y) && empty(x - 8, y) && empty(x + 8, y)) return { x, y };
        }
      }
      return null;
    });
    if (!point) throw new Error('no empty point to zoom over');
    await page.evaluate(() => {
      window.__frames = [];
      const tick = (at) => {
        window.__frames.push(at);
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    const cdp = await page.context().newCDPSession(page);
    for (let notch = 0; notch < 10; notch++) {
      await cdp.send('Input.dispatchMouseEvent', { type: 'mouseWheel', x: point.x, y: point.y, deltaX: 0, deltaY: 100 });
      await nextFrame(page);
    }
    const lastNotch = await page.evaluate(() => performance.now());
    await page.waitForTimeout(2000);
    const frames = await page.evaluate((after) => window.__frames.filter((at) => at >= after), lastNotch);
    const lengths = frames.slice(1).map((at, index) => at - frames[index]);
    const modules = await page.locator('[data-node-id]').count();
    return { longest: Math.max(0, ...lengths), over50: lengths.filter((length) => length > 50).length, modules };
  } finally {
    await browser.close();
  }
}

console.log(`zoom settle: 10 notches out to 25 %, then 2 s of frames (${RUNS} runs each)`);
for (const n of sizes) {
  const runs = [];
  for (let run = 0; run < RUNS; run++) runs.push(await once(Number(n)));
  const longest = runs.map((run) => run.longest.toFixed(1)).join(', ');
  const over = runs.map((run) => run.over50).join(', ');
  console.log(`  N=${n}: longest frame after the zoom ${longest} ms; frames over 50 ms ${over}; modules in the page after it ${runs[0].modules}`);
}
