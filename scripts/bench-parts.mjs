// How long a lazily loaded part takes to show the first time (issue 41: a
// placeholder at once, the part within 100 ms on loopback). For each part,
// in a fresh browser on a fresh editor: the pointer arrives on what opens
// it and presses at once, so fetching ahead on the pointer's arrival has no
// head start; the time is from the press to the part's first element in the
// page, and to its placeholder ("Loading…"), if one showed.
//   node scripts/bench-parts.mjs BASE_URL
import { chromium } from 'playwright-core';

const [base] = process.argv.slice(2);
const RUNS = Number(process.env.PATCHBAY_PARTS_RUNS || 5);
const executablePath = process.env.PATCHBAY_CHROMIUM || '/usr/bin/chromium';

/** What opens each part, and what shows it has arrived. */
const PARTS = [
  { name: 'a module\'s detail panel', opener: '[data-node-id="m2"] .module-header', shown: '#module-label' },
  { name: 'the run dialog', opener: '.run-button', shown: '[aria-label="Run input"]' },
  { name: 'the run panel (Runs)', opener: 'header button[title="This graph\'s runs"]', shown: 'section.run-panel' },
  { name: 'the History dialog', opener: 'header button[title^="This graph\'s saved revisions"]', shown: '[role="dialog"]' },
  { name: 'the Share dialog', opener: 'header button[title="Links to this graph"]', shown: '[role="dialog"]' },
  { name: 'the shortcut list (a popup)', opener: 'header button.help-button', shown: '.modal.help' },
];

async function once(part) {
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    await page.addInitScript(() => {
      addEventListener('pointerdown', () => { window.__pressed = performance.now(); }, true);
    });
    await page.goto(`${base}/new`);
    await page.waitForSelector('[data-node-id="m2"]');
    // Interactive, and what comes after it (the check, the room) fetched.
    await page.waitForLoadState('networkidle');
    await page.evaluate((shown) => {
      window.__shown = null;
      window.__placeholder = null;
      const watch = new MutationObserver(() => {
        if (window.__placeholder === null && document.querySelector('.lazy-part')) window.__placeholder = performance.now();
        if (document.querySelector(shown)) {
          window.__shown = performance.now();
          watch.disconnect();
        }
      });
      watch.observe(document.body, { subtree: true, childList: true, attributes: true });
    }, part.shown);
    const box = await page.locator(part.opener).first().boundingBox();
    if (!box) throw new Error(`nothing on the page opens ${part.name} (${part.opener})`);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.up();
    await page.waitForFunction(() => window.__shown !== null, null, { timeout: 10000 });
    return await page.evaluate(() => ({
      shown: window.__shown - window.__pressed,
      placeholder: window.__placeholder === null ? null : window.__placeholder - window.__pressed,
    }));
  } finally {
    await browser.close();
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value) => `${Math.round(value)}`;

console.log(`the first time a part is shown, ${RUNS} fresh browsers each: ms from the press to the part (median, min–max), and to its placeholder`);
for (const part of PARTS) {
  const shown = [];
  const placeholders = [];
  for (let run = 0; run < RUNS; run += 1) {
    const figures = await once(part);
    shown.push(figures.shown);
    if (figures.placeholder !== null) placeholders.push(figures.placeholder);
  }
  const placeholder = placeholders.length
    ? `placeholder ${ms(median(placeholders))} (${ms(Math.min(...placeholders))}–${ms(Math.max(...placeholders))}) in ${placeholders.length} of ${RUNS}`
    : 'no placeholder seen (shown within the frame)';
  console.log(`  ${part.name.padEnd(26)} ${ms(median(shown)).padStart(4)} (${ms(Math.min(...shown))}–${ms(Math.max(...shown))}); ${placeholder}`);
}
