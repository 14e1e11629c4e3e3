// Editing together, measured (PRODUCT §3.16): two editors in one Chromium
// (two contexts, one clock) on one graph of a running server.
//   - latency: Ana renames the graph EDITS times, one edit at a time, 60 ms
//     after the last arrived (a fast typist's pace: an edit at most every
//     50 ms goes at once); the time from her edit to Ben's page showing it
//     (p50, p99, max);
//   - a drag: Ana drags a module for FRAMES pointer moves (Ben sees it
//     move, through her presence); the bytes her browser sent (presence
//     and change bodies) and the changes the server took;
//   - dragging for SECONDS, a drop a second: the changes a minute and the
//     revisions the history kept a minute.
//   node scripts/bench-together.mjs BASE_URL
import { chromium } from 'playwright-core';

const [base] = process.argv.slice(2);
const EDITS = Number(process.env.PATCHBAY_TOGETHER_EDITS || 200);
const FRAMES = Number(process.env.PATCHBAY_TOGETHER_FRAMES || 60);
const SECONDS = Number(process.env.PATCHBAY_TOGETHER_SECONDS || 20);
const executablePath = process.env.PATCHBAY_CHROMIUM || '/usr/bin/chromium';

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function graphState(page, id) {
  return page.evaluate(async (graphId) => {
    const token = localStorage.getItem(`patchbay.edit.${graphId}`);
    const graph = await (await fetch(`/api/graphs/${graphId}`)).json();
    const history = await (await fetch(`/api/graphs/${graphId}/revisions?limit=200`, { headers: { Authorization: `Bearer ${token}` } })).json();
    return { revision: graph.revision, kept: history.kept };
  }, id);
}

async function dragFor(page, frames, pace) {
  // The input module, at the left: the selected module's panel opens on
  // the right, over where the output module is.
  const header = page.locator('[data-node-id="m1"] .module-header');
  const box = await header.boundingBox();
  const start = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  for (let frame = 1; frame <= frames; frame++) {
    // Back and forth over 200 px, one move a frame.
    const offset = 100 * Math.sin(frame / 10);
    await page.mouse.move(start.x + offset, start.y + offset / 2);
    await page.waitForTimeout(pace);
  }
  await page.mouse.up();
}

const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
try {
  const ana = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await ana.goto(`${base}/new`);
  await ana.waitForSelector('.access-badge.editable');
  const id = ana.url().split('/g/')[1].split(/[?#]/)[0];
  const token = await ana.evaluate((graphId) => localStorage.getItem(`patchbay.edit.${graphId}`), id);
  const ben = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await ben.goto(`${base}/g/${id}#edit=${token}`);
  await ben.waitForSelector('.access-badge.editable');
  await ana.waitForFunction(() => document.querySelectorAll('.people-here .person').length === 2);
  // Ben's page notes when each name first shows, on every frame.
  await ben.evaluate(() => {
    window.seen = {};
    const field = document.querySelector('input.graph-name');
    const look = () => {
      if (!(field.value in window.seen)) window.seen[field.value] = Date.now();
      requestAnimationFrame(look);
    };
    look();
  });

  const latencies = [];
  for (let edit = 1; edit <= EDITS; edit++) {
    const name = `Edit ${edit}`;
    const sentAt = await ana.evaluate((value) => {
      const field = document.querySelector('input.graph-name');
      const at = Date.now();
      field.value = value;
      field.dispatchEvent(new Event('input', { bubbles: true }));
      return at;
    }, name);
    await ben.waitForFunction((value) => value in window.seen, name, { polling: 5 });
    latencies.push((await ben.evaluate((value) => window.seen[value], name)) - sentAt);
    await ana.waitForTimeout(60);
  }
  latencies.sort((left, right) => left - right);
  console.log(`edit to the other's screen, ${EDITS} edits: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies[latencies.length - 1]} ms`);

  const sent = { changes: [0, 0], presence: [0, 0] };
  ana.on('request', (request) => {
    const kind = request.url().endsWith('/changes') ? 'changes' : request.url().endsWith('/presence') ? 'presence' : null;
    if (kind) {
      sent[kind][0] += Buffer.byteLength(request.postData() || '');
      sent[kind][1] += 1;
    }
  });
  await ana.waitForTimeout(1000);
  sent.changes = [0, 0];
  sent.presence = [0, 0];
  const before = await graphState(ana, id);
  await dragFor(ana, FRAMES, 16);
  await ana.waitForTimeout(1000);
  const after = await graphState(ana, id);
  console.log(`a drag of ${FRAMES} pointer moves: ${sent.presence[0]} bytes in ${sent.presence[1]} presence updates (the module moving for Ben), ${sent.changes[0]} bytes in ${sent.changes[1]} change (the drop); ${after.revision - before.revision} revision, ${after.kept - before.kept} kept in the history`);

  const start = await graphState(ana, id);
  const began = Date.now();
  while (Date.now() - began < SECONDS * 1000) await dragFor(ana, 30, 16);
  const minutes = (Date.now() - began) / 60000;
  await ana.waitForTimeout(1000);
  const end = await graphState(ana, id);
  console.log(`dragging for ${Math.round(minutes * 60)} s, a drop a second: ${Math.round((end.revision - start.revision) / minutes)} changes a minute, ${Math.round((end.kept - start.kept) / minutes)} revisions kept in the history a minute`);
} finally {
  await browser.close();
}
