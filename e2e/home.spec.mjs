// The home page at `/`, through the UI only: the graphs whose edit tokens
// this browser holds (name, last edit, last run, newest edit first), open,
// rename, duplicate, remove from this browser; the logo leads there; a
// newcomer sees what to do and the examples, and can start from one; a
// graph this browser can no longer reach says so; and a self-contained link
// made for `/` still opens.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { runPanel, graphId } = find;
const { newGraph } = act;
const { saved, watchErrors } = check;

async function rename(page, name) {
  await page.getByLabel('Graph name').fill(name);
  await saved(page);
}

const yourGraphs = (page) => page.getByRole('region', { name: 'Your graphs' });
const lines = (page) => yourGraphs(page).locator('.home-graph');
const line = (page, id) => yourGraphs(page).locator(`.home-graph[data-graph-id="${id}"]`);

async function runToCompletion(page) {
  await page.locator('.run-button').click();
  await page.getByRole('dialog', { name: 'Run the graph' }).getByRole('button', { name: /Start run/ }).click();
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 30_000 });
}

test('the home page lists the graphs this browser made, with name, last edit and last run, newest edit first, and opens them', async ({ page }) => {
  const errors = watchErrors(page, { csp: true });
  const started = Date.now();
  const tides = await newGraph(page);
  await rename(page, 'Tide tables');
  await runToCompletion(page);
  const moon = await newGraph(page);
  await rename(page, 'Moon phases');

  await page.goto('/');
  // `/` is a page of its own now: no graph is made by visiting it.
  expect(new URL(page.url()).pathname).toBe('/');
  await expect(page.getByRole('heading', { name: 'Your graphs' })).toBeVisible();
  await expect(lines(page)).toHaveCount(2);
  // Newest edit first.
  await expect(lines(page).nth(0)).toHaveAttribute('data-graph-id', moon);
  await expect(lines(page).nth(1)).toHaveAttribute('data-graph-id', tides);

  const tidesLine = line(page, tides);
  await expect(tidesLine.getByRole('link', { name: 'Tide tables' })).toHaveAttribute('href', `/g/${tides}`);
  await expect(tidesLine.getByRole('link', { name: 'Last run completed' })).toHaveAttribute('href', new RegExp(`^/g/${tides}/runs/r_`));
  await expect(line(page, moon).getByRole('link', { name: 'Moon phases' })).toBeVisible();
  await expect(line(page, moon)).toContainText('No runs yet');
  // The last edit as a local date and time, of the edit just made.
  const edited = tidesLine.locator('time').first();
  await expect(edited).not.toHaveText('');
  const when = Date.parse(await edited.getAttribute('datetime'));
  expect(when).toBeGreaterThanOrEqual(started - 1000);
  expect(when).toBeLessThanOrEqual(Date.now() + 1000);
  expect(await edited.textContent()).not.toMatch(/^\d+$/);

  await tidesLine.getByRole('link', { name: 'Tide tables' }).click();
  await expect(page).toHaveURL(new RegExp(`/g/${tides}$`));
  await expect(page.getByLabel('Graph name')).toHaveValue('Tide tables');
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  expect(errors).toEqual([]);
});

test('rename (Enter saves, Esc cancels), duplicate, and remove from this browser', async ({ page, browser }) => {
  const errors = watchErrors(page, { csp: true });
  const id = await newGraph(page);
  await page.goto('/');
  const mine = line(page, id);
  await expect(mine.getByRole('link', { name: 'Draft, review, finalize' })).toBeVisible();

  // Esc cancels: nothing changes.
  await mine.getByRole('button', { name: 'Rename' }).click();
  const field = mine.getByRole('textbox', { name: /New name for/ });
  await expect(field).toBeFocused();
  await expect(field).toHaveValue('Draft, review, finalize');
  await page.keyboard.type('Not this');
  await page.keyboard.press('Escape');
  await expect(field).toHaveCount(0);
  await expect(mine.getByRole('button', { name: 'Rename' })).toBeFocused();
  await expect(mine.getByRole('link', { name: 'Draft, review, finalize' })).toBeVisible();

  // Enter saves; the graph page has the new name too.
  await mine.getByRole('button', { name: 'Rename' }).click();
  await expect(field).toBeFocused();
  // The old name is selected, so typing replaces it.
  await page.keyboard.type('Harbour log');
  await page.keyboard.press('Enter');
  await expect(mine.getByRole('link', { name: 'Harbour log' })).toBeVisible();
  await expect(mine.getByRole('link', { name: 'Harbour log' })).toBeFocused();
  await expect(page.getByRole('status')).toContainText('Renamed to “Harbour log”');
  await page.reload();
  await expect(line(page, id).getByRole('link', { name: 'Harbour log' })).toBeVisible();

  // Duplicate: a copy this browser can edit, named as a copy.
  await line(page, id).getByRole('button', { name: 'Duplicate' }).click();
  await expect(lines(page)).toHaveCount(2);
  const copyLink = yourGraphs(page).getByRole('link', { name: 'Harbour log (copy)' });
  await expect(copyLink).toBeVisible();
  await expect(copyLink).toBeFocused();
  const copyId = (await copyLink.getAttribute('href')).split('/g/')[1];
  expect(copyId).not.toBe(id);

  // Remove the copy from this browser: a confirmation that Esc declines
  // and Enter accepts.
  const copy = line(page, copyId);
  await copy.getByRole('button', { name: 'Remove from this browser' }).click();
  const question = copy.getByRole('group', { name: 'Remove “Harbour log (copy)” from this browser?' });
  await expect(question).toContainText('stays on the server');
  await expect(question.getByRole('button', { name: 'Remove' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(question).toHaveCount(0);
  await expect(copy.getByRole('button', { name: 'Remove from this browser' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(question.getByRole('button', { name: 'Remove' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(copy).toHaveCount(0);
  await expect(page.getByRole('status')).toContainText('still on the server');
  await page.reload();
  await expect(lines(page)).toHaveCount(1);
  await expect(line(page, id)).toBeVisible();

  // The copy is still on the server: its link opens it, read-only here now
  // and in a fresh browser.
  await page.goto(`/g/${copyId}`);
  await expect(page.getByLabel('Graph name')).toHaveValue('Harbour log (copy)');
  await expect(page.locator('.access-badge')).toHaveText('View only');
  const fresh = await browser.newContext();
  const stranger = await fresh.newPage();
  await stranger.goto(`/g/${copyId}`);
  await expect(stranger.locator('.access-badge')).toHaveText('View only');
  await fresh.close();
  // The original opens as this browser's to edit, with its new name.
  await page.goto(`/g/${id}`);
  await expect(page.getByLabel('Graph name')).toHaveValue('Harbour log');
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  expect(errors).toEqual([]);
});

test('the Patchbay logo leads home', async ({ page }) => {
  const id = await newGraph(page);
  const logo = page.getByRole('link', { name: 'Patchbay' });
  await expect(logo).toHaveAttribute('title', /graphs/);
  await logo.click();
  await expect(page.getByRole('heading', { name: 'Your graphs' })).toBeVisible();
  expect(new URL(page.url()).pathname).toBe('/');
  await expect(line(page, id)).toBeVisible();
});

test('with no graphs, the home page tells a newcomer what to do and offers the examples; starting from one works', async ({ page }) => {
  const errors = watchErrors(page, { csp: true });
  await page.goto('/');
  await expect(yourGraphs(page)).toContainText('No graphs in this browser yet');
  await expect(lines(page)).toHaveCount(0);
  await expect(page.getByRole('link', { name: 'New graph', exact: true })).toHaveAttribute('href', '/new');
  // The first stop of the keyboard is "New graph", and it shows its focus.
  await page.keyboard.press('Tab');
  const first = page.getByRole('link', { name: 'New graph', exact: true });
  await expect(first).toBeFocused();
  const outline = await first.evaluate((element) => getComputedStyle(element).outlineStyle);
  expect(outline).not.toBe('none');

  const examples = page.getByRole('region', { name: 'Examples' }).locator('.home-example');
  await expect(examples).toHaveCount(8);
  await expect(examples.filter({ hasText: 'An agent that looks things up' })).toHaveCount(1);
  await expect(examples.filter({ hasText: 'A person approves the change' })).toHaveCount(1);
  const loop = examples.filter({ hasText: 'Revise until approved' });
  await expect(loop).toContainText('review gate');
  const start = loop.getByRole('link', { name: 'Start from this example' });
  await expect(start).toHaveAttribute('href', '/new?example=revise-until-approved');
  await start.click();
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await expect(page.getByLabel('Graph name')).toHaveValue('Revise until approved');
  for (const module of ['topic', 'draft', 'review', 'final']) {
    await expect(page.locator(`[data-node-id="${module}"]`)).toBeVisible();
  }
  const id = graphId(page);
  await runToCompletion(page);

  await page.goto('/');
  await expect(lines(page)).toHaveCount(1);
  await expect(line(page, id).getByRole('link', { name: 'Revise until approved' })).toBeVisible();
  await expect(line(page, id).getByRole('link', { name: 'Last run completed' })).toBeVisible();
  // An example that does not exist is a 404 page, not a graph.
  const response = await page.goto('/new?example=no-such-example');
  expect(response.status()).toBe(404);
  await expect(page.getByRole('heading', { name: 'No such example' })).toBeVisible();
  expect(errors.filter((error) => !error.includes('404'))).toEqual([]);
});

test('a graph this browser can no longer reach says so, and can be removed', async ({ page }) => {
  const id = await newGraph(page);
  // A token for a graph the server does not have, and a wrong token for
  // one it has: neither shows anything but "no longer available".
  const other = await newGraph(page);
  await page.evaluate((otherId) => {
    localStorage.setItem('patchbay.edit.g_AAAAAAAAAAAAAAAAAAAAAAAA', 'A'.repeat(43));
    localStorage.setItem(`patchbay.edit.${otherId}`, 'B'.repeat(43));
  }, other);
  await page.goto('/');
  await expect(lines(page)).toHaveCount(3);
  await expect(line(page, id).getByRole('link', { name: 'Draft, review, finalize' })).toBeVisible();
  for (const gone of ['g_AAAAAAAAAAAAAAAAAAAAAAAA', other]) {
    const entry = line(page, gone);
    await expect(entry).toContainText('No longer available');
    await expect(entry.getByRole('link')).toHaveCount(0);
    await expect(entry.getByRole('button')).toHaveText(['Remove from this browser']);
  }
  await line(page, other).getByRole('button', { name: 'Remove from this browser' }).click();
  await expect(line(page, other)).toHaveCount(0);
  await page.reload();
  await expect(lines(page)).toHaveCount(2);
  expect(await page.evaluate((otherId) => localStorage.getItem(`patchbay.edit.${otherId}`), other)).toBeNull();
});

test('a self-contained link made for / still opens its graph', async ({ page, browser }) => {
  await newGraph(page);
  await rename(page, 'Carried in a link');
  await page.getByRole('button', { name: 'Share', exact: true }).click();
  const link = await page.getByRole('dialog', { name: 'Share' }).locator('input[name="self-contained-link"]').inputValue();
  expect(new URL(link).pathname).toBe('/');
  expect(new URL(link).hash).toMatch(/^#graph=/);

  const fresh = await browser.newContext();
  const visitor = await fresh.newPage();
  await visitor.goto(link);
  await expect(visitor).toHaveURL(/\/open#graph=/);
  await expect(visitor.locator('.access-badge')).toHaveText('From a link');
  await expect(visitor.getByLabel('Graph name')).toHaveValue('Carried in a link');
  await fresh.close();
});
