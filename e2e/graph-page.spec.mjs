// The foundation, end to end in a real browser: `/new` makes a starter graph,
// its page renders on the server and hydrates, and it survives a reload.
import { test, expect } from '@playwright/test';
import { act, check, find } from './support.mjs';

const { newGraph } = act;
const { watchErrors, saved } = check;
const { node, panel } = find;

test('/new opens a new starter graph that persists across a reload', async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto('/new');
  await expect(page).toHaveURL(/\/g\/g_[A-Za-z0-9_-]{24}$/);

  const nodes = page.locator('[data-node-id]');
  const cables = page.locator('[data-edge-id]');
  await expect(nodes).toHaveCount(3);
  await expect(cables).toHaveCount(2);
  for (const id of ['m1', 'm2', 'm3']) {
    await expect(page.locator(`[data-node-id="${id}"]`)).toBeVisible();
  }
  await expect(page.locator('[data-node-id="m2"]')).toContainText('Draft');
  await expect(page.locator('[data-node-id="m2"] [data-port-id="data_in"]')).toBeVisible();

  // Hydrated: the app took the edit token out of the address bar into storage.
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  expect(page.url()).not.toContain('#edit=');
  const graphId = page.url().split('/g/')[1];
  const token = await page.evaluate((id) => localStorage.getItem(`patchbay.edit.${id}`), graphId);
  expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

  // A cable ends where its port is drawn.
  const dot = await page.locator('[data-node-id="m2"] [data-port-id="data_in"] .port-dot').boundingBox();
  const end = await page.locator('[data-edge-id="c1"] .cable-line').evaluate((path) => {
    const point = path.getPointAtLength(path.getTotalLength()).matrixTransform(path.getScreenCTM());
    return { x: point.x, y: point.y };
  });
  expect(Math.abs(end.x - (dot.x + dot.width / 2))).toBeLessThan(1);
  expect(Math.abs(end.y - (dot.y + dot.height / 2))).toBeLessThan(1);

  await page.reload();
  await expect(page).toHaveURL(new RegExp(`/g/${graphId}$`));
  await expect(nodes).toHaveCount(3);
  await expect(cables).toHaveCount(2);
  await expect(page.locator('[data-node-id="m3"]')).toContainText('Final essay');
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  expect(errors).toEqual([]);
});

test('another browser sees the graph read-only', async ({ page, browser }) => {
  await newGraph(page);
  const url = page.url();

  const stranger = await browser.newContext();
  const strangerPage = await stranger.newPage();
  const errors = watchErrors(strangerPage);
  await strangerPage.goto(url);
  await expect(strangerPage.locator('[data-node-id]')).toHaveCount(3);
  await expect(strangerPage.locator('.access-badge')).toHaveText('View only');
  expect(errors).toEqual([]);
  await stranger.close();
});

test('an unknown graph gets a proper 404 page', async ({ page }) => {
  const response = await page.goto('/g/g_AAAAAAAAAAAAAAAAAAAAAAAA');
  expect(response.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Start a new graph' })).toHaveAttribute('href', '/new');
  await expect(page.getByRole('link', { name: 'Your graphs' })).toHaveAttribute('href', '/');
});

test('what a graph says is drawn as text, in the editor and by a view link, never as markup', async ({ page, browser }) => {
  // A module's header and ports are written as markup (canvas/module_box.rs):
  // a label that is markup must stay text, for its author and for a stranger.
  const errors = watchErrors(page);
  await newGraph(page);
  const hostile = '<img src=x onerror="window.owned=1">';
  await node(page, 'm2').locator('.module-header').click();
  await panel(page).getByLabel('Label').fill(hostile);
  const header = node(page, 'm2').locator('.module-header');
  await expect(header).toHaveAttribute('title', `${hostile} (Agent task)`);
  await expect(header.locator('.module-label')).toContainText('<img');
  await expect(node(page, 'm2').locator('img')).toHaveCount(0);
  await saved(page);

  const stranger = await browser.newContext();
  const strangerPage = await stranger.newPage();
  const strangerErrors = watchErrors(strangerPage);
  await strangerPage.goto(page.url().split('#')[0]);
  await expect(strangerPage.locator('.access-badge')).toHaveText('View only');
  const seen = strangerPage.locator('[data-node-id="m2"] .module-header');
  await expect(seen).toHaveAttribute('title', `${hostile} (Agent task)`);
  await expect(seen.locator('.module-label')).toContainText('<img');
  await expect(strangerPage.locator('.module img')).toHaveCount(0);
  expect(await strangerPage.evaluate(() => window.owned)).toBeUndefined();
  expect(await page.evaluate(() => window.owned)).toBeUndefined();
  expect(strangerErrors).toEqual([]);
  expect(errors).toEqual([]);
  await stranger.close();
});
