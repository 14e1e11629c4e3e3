// Aligning, spreading and snapping modules (PRODUCT §4), through the UI:
// the selection's bar appears with a selection, aligns the selected
// modules' edges or spreads them evenly as one undoable edit that is
// saved, the same from the keyboard; the grid switch makes a drag land on
// the grid and is remembered by the browser; a view link has no bar.
import { test, expect } from '@playwright/test';
import { act, check, find } from './support.mjs';

const { newGraph, drag } = act;
const { watchErrors, saved } = check;
const { node } = find;

async function storedPositions(page, graphId) {
  const response = await page.request.get(`/api/graphs/${graphId}`);
  const graph = await response.json();
  return Object.fromEntries(graph.modules.map((module) => [module.id, module.position]));
}

async function boxes(page) {
  const result = {};
  for (const id of ['m1', 'm2', 'm3']) result[id] = await node(page, id).boundingBox();
  return result;
}

test('the selection is aligned and spread from its bar and the keyboard, each one undoable edit', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  const graphId = await newGraph(page);
  const bar = page.getByRole('toolbar', { name: 'Arrange the selected modules' });
  await expect(bar).toHaveCount(0);

  // Shuffle the starter's modules up and down (the rightmost first: a
  // selected module's panel covers the right of the canvas).
  await drag(page, 'm3', 0, -40);
  await drag(page, 'm2', 0, 90);
  await saved(page);

  // One module: the bar is there, aligning needs two.
  await expect(bar).toBeVisible();
  await expect(bar.getByRole('button', { name: 'Align top edges' })).toBeDisabled();

  // Then all of them.
  await page.locator('.pane').focus();
  await page.keyboard.press('Control+a');
  await expect(bar.getByRole('button', { name: 'Align top edges' })).toBeEnabled();
  const before = await storedPositions(page, graphId);
  expect(new Set(Object.values(before).map((position) => position.y)).size).toBe(3);

  await bar.getByRole('button', { name: 'Align top edges' }).click();
  await saved(page);
  const topped = await storedPositions(page, graphId);
  const top = Math.min(...Object.values(before).map((position) => position.y));
  for (const id of ['m1', 'm2', 'm3']) {
    expect(topped[id].y).toBe(top);
    expect(topped[id].x).toBe(before[id].x);
  }
  const drawn = await boxes(page);
  expect(Math.abs(drawn.m1.y - drawn.m2.y)).toBeLessThan(1);
  expect(Math.abs(drawn.m1.y - drawn.m3.y)).toBeLessThan(1);

  // Undone in one step.
  await page.keyboard.press('Control+z');
  await saved(page);
  expect(await storedPositions(page, graphId)).toEqual(before);

  // From the keyboard: Alt+Shift+← lines up the left edges.
  await page.keyboard.press('Alt+Shift+ArrowLeft');
  await saved(page);
  const left = Math.min(...Object.values(before).map((position) => position.x));
  const lefted = await storedPositions(page, graphId);
  for (const id of ['m1', 'm2', 'm3']) expect(lefted[id].x).toBe(left);
  await page.keyboard.press('Control+z');
  await saved(page);

  // Spread evenly across: equal gaps, the outermost two where they were.
  await bar.getByRole('button', { name: 'Spread evenly across' }).click();
  await saved(page);
  const spread = await boxes(page);
  const ordered = Object.values(spread).sort((a, b) => a.x - b.x);
  const gaps = [ordered[1].x - (ordered[0].x + ordered[0].width), ordered[2].x - (ordered[1].x + ordered[1].width)];
  expect(Math.abs(gaps[0] - gaps[1])).toBeLessThan(1.5);

  // Nothing selected, no bar.
  await page.locator('.pane').focus();
  await page.keyboard.press('Escape');
  await expect(bar).toHaveCount(0);
  expect(errors).toEqual([]);
});

test('with snap to grid on, a drag lands on the grid, the switch is remembered, and a view link has no bar', async ({ page, browser }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  const graphId = await newGraph(page);
  await node(page, 'm2').click();
  const bar = page.getByRole('toolbar', { name: 'Arrange the selected modules' });
  const snap = bar.getByRole('checkbox', { name: 'Snap to grid' });
  await expect(snap).not.toBeChecked();
  await snap.check();

  await drag(page, 'm2', 37, 23);
  await saved(page);
  const position = (await storedPositions(page, graphId)).m2;
  expect(position.x % 20).toBe(0);
  expect(position.y % 20).toBe(0);

  // The arrow keys move it a grid step, onto the grid.
  await page.keyboard.press('ArrowRight');
  await saved(page);
  const moved = (await storedPositions(page, graphId)).m2;
  expect(moved).toEqual({ x: position.x + 20, y: position.y });

  // The switch is this browser's: still on after a reload.
  await page.reload();
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await node(page, 'm1').click();
  await expect(page.getByRole('checkbox', { name: 'Snap to grid' })).toBeChecked();

  // A view link selects but has nothing to arrange.
  const viewer = await (await browser.newContext()).newPage();
  await viewer.goto(`/g/${graphId}`);
  await expect(viewer.locator('.access-badge')).toHaveText('View only');
  const revision = async () => (await (await page.request.get(`/api/graphs/${graphId}`)).json()).revision;
  const seen = await revision();
  await node(viewer, 'm1').click({ modifiers: ['Shift'] });
  await node(viewer, 'm2').click({ modifiers: ['Shift'] });
  await viewer.keyboard.press('Alt+Shift+ArrowUp');
  await expect(viewer.getByText('This graph is view only: fork it to edit.')).toBeVisible();
  await expect(viewer.getByRole('toolbar', { name: 'Arrange the selected modules' })).toHaveCount(0);
  expect(await revision()).toBe(seen);
  expect(errors).toEqual([]);
});

test('Tidy up lays out the "Revise until approved" example left to right with no overlap, undone in one step', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  await page.goto('/new?example=revise-until-approved');
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  const graphId = page.url().match(/\/g\/([^/#?]+)/)[1];
  const ids = await page.locator('[data-node-id]').evaluateAll((nodes) => nodes.map((item) => item.dataset.nodeId));
  expect(ids.length).toBeGreaterThan(3);
  // Pile them up first: every module dragged onto the first one's spot.
  const first = await node(page, ids[0]).boundingBox();
  for (const id of ids.slice(1)) {
    const box = await node(page, id).boundingBox();
    await drag(page, id, first.x - box.x + 15, first.y - box.y + 10);
  }
  await saved(page);
  const piled = await storedPositions(page, graphId);

  // Nothing selected: Alt+Shift+T tidies the whole graph.
  await page.locator('.pane').focus();
  await page.keyboard.press('Escape');
  await page.keyboard.press('Alt+Shift+T');
  await saved(page);
  const tidied = await storedPositions(page, graphId);
  expect(tidied).not.toEqual(piled);
  const drawn = {};
  for (const id of ids) drawn[id] = await node(page, id).boundingBox();
  for (const [index, a] of ids.entries()) {
    for (const b of ids.slice(index + 1)) {
      const [p, q] = [drawn[a], drawn[b]];
      const overlaps = p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height;
      expect(overlaps, `${a} and ${b} overlap`).toBe(false);
    }
  }
  // Every cable but the one back to the writer runs left to right.
  const graph = await (await page.request.get(`/api/graphs/${graphId}`)).json();
  let backwards = 0;
  for (const cable of graph.modules.length ? graph.cables : []) {
    const [from, to] = [drawn[cable.from.module], drawn[cable.to.module]];
    if (from.x + from.width < to.x) continue;
    backwards += 1;
  }
  expect(backwards).toBeLessThanOrEqual(1);

  // Tidy again changes nothing; undo brings the pile back in one step.
  await page.keyboard.press('Alt+Shift+T');
  await saved(page);
  expect(await storedPositions(page, graphId)).toEqual(tidied);
  await page.keyboard.press('Control+z');
  await saved(page);
  expect(await storedPositions(page, graphId)).toEqual(piled);
  expect(errors).toEqual([]);
});
