// Sharing by URL, through the UI only (PRODUCT §5): the Share dialog's
// links; a view link in another browser is read-only and forks into an
// editable copy, and runs only a fork of its own ("Fork and run"); a run
// link shows the finished run to anyone; export and import round-trip, and
// a broken file is refused with a clear message; a self-contained link
// opens a graph the server does not have. No page breaks its own
// Content-Security-Policy.
import fs from 'node:fs';
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, runPanel, graphId } = find;
const { newGraph } = act;
const { saved, watchErrors } = check;

async function shareLinks(page) {
  await page.getByRole('button', { name: 'Share', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Share' });
  await expect(dialog).toBeVisible();
  const links = {};
  for (const name of ['view-link', 'edit-link', 'run-link', 'self-contained-link']) {
    const field = dialog.locator(`input[name="${name}"]`);
    links[name] = (await field.count()) ? await field.inputValue() : null;
  }
  return { dialog, links };
}

test('a view link is read-only in another browser, and Fork to edit gives it an editable copy', async ({ page, browser, baseURL }) => {
  const id = await newGraph(page);
  const { dialog, links } = await shareLinks(page);
  expect(links['view-link']).toBe(`${baseURL}/g/${id}`);
  expect(links['edit-link']).toMatch(new RegExp(`^${baseURL}/g/${id}#edit=.+`));
  await expect(dialog).toContainText('Anyone with the edit link can change this graph');
  await dialog.getByRole('button', { name: 'Close' }).click();

  const visitorContext = await browser.newContext();
  const visitor = await visitorContext.newPage();
  await visitor.goto(links['view-link']);
  await expect(visitor.locator('.access-badge')).toHaveText('View only');
  // Said once, by the badge: not again by the save status beside it.
  await expect(visitor.getByText('View only', { exact: true })).toHaveCount(1);
  await expect(visitor.locator('.save-status')).toHaveCount(0);
  await expect(visitor.locator('.palette')).toHaveCount(0);
  await expect(visitor.getByLabel('Graph name')).toBeDisabled();
  // No edits: deleting a module does nothing, and nothing is saved.
  await node(visitor, 'm2').locator('.module-header').click();
  await visitor.keyboard.press('Delete');
  await expect(visitor.locator('.toast')).toContainText('view only');
  await expect(node(visitor, 'm2')).toBeVisible();
  // A cable reached from the module's list opens read-only: Remove cable
  // is off, and Delete removes nothing.
  await node(visitor, 'm2').locator('.module-header').click();
  await visitor
    .getByRole('complementary', { name: 'Module details' })
    .getByRole('group', { name: 'Cables' })
    .getByRole('button', { name: '“Topic” · Input → Data' })
    .click();
  const cablePanel = visitor.getByRole('complementary', { name: 'Cable details' });
  await expect(cablePanel.getByRole('button', { name: 'Remove cable' })).toBeDisabled();
  await expect(cablePanel.getByLabel('Condition')).toBeDisabled();
  await visitor.keyboard.press('Delete');
  await expect(visitor.locator('.toast')).toContainText('view only');
  await expect(visitor.locator('[data-edge-id="c1"]')).toHaveCount(1);
  await cablePanel.getByRole('button', { name: 'Close details' }).click();
  // The edit link is not offered to someone without the capability.
  const visitorShare = await shareLinks(visitor);
  expect(visitorShare.links['edit-link']).toBeNull();
  expect(visitorShare.links['view-link']).toBe(links['view-link']);
  await visitorShare.dialog.getByRole('button', { name: 'Close' }).click();

  await visitor.getByRole('button', { name: 'Fork to edit' }).click();
  await expect(visitor.locator('.access-badge')).toHaveText('Editing');
  const forkId = graphId(visitor);
  expect(forkId).not.toBe(id);
  // Its name says it is a fork, so the two can be told apart in a list.
  await expect(visitor.getByLabel('Graph name')).toHaveValue('Draft, review, finalize (fork)');
  await visitor.getByLabel('Graph name').fill('My fork');
  await saved(visitor);
  await visitor.reload();
  await expect(visitor.getByLabel('Graph name')).toHaveValue('My fork');
  await expect(visitor.locator('.access-badge')).toHaveText('Editing');
  // The original is untouched.
  const original = await (await page.request.get(`/api/graphs/${id}`)).json();
  expect(original.name).toBe('Draft, review, finalize');
  await visitorContext.close();
});

test('a view link on a phone-sized screen keeps every toolbar action within reach, and forks', async ({ page, browser }) => {
  await newGraph(page);
  const address = page.url().split('#')[0];
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
  const errors = watchErrors(phone);
  await phone.goto(address);
  await expect(phone.locator('.access-badge')).toHaveText('View only');
  // Someone else is here too, so who is here takes its place in the toolbar.
  await expect(phone.getByRole('list', { name: 'People here' }).getByRole('listitem')).toHaveCount(2);
  const outOfReach = await phone.locator('.toolbar button:not(.people-here button), .toolbar .access-badge').evaluateAll((elements) => elements
    .filter((element) => {
      const box = element.getBoundingClientRect();
      const toolbar = element.closest('.toolbar').getBoundingClientRect();
      return box.width === 0 || box.left < 0 || box.right > window.innerWidth || box.bottom > toolbar.bottom;
    })
    .map((element) => element.textContent.trim()));
  expect(outOfReach).toEqual([]);
  // The canvas keeps the rest of the screen.
  const pane = await phone.locator('.pane').boundingBox();
  expect(pane.height).toBeGreaterThan(500);
  await phone.getByRole('button', { name: 'Fork to edit' }).click();
  await expect(phone.locator('.access-badge')).toHaveText('Editing');
  expect(errors).toEqual([]);
  await phone.close();
});

test('a view link runs a fork of its own: Fork and run, with no way to run, stop or list the original', async ({ page, browser }) => {
  const id = await newGraph(page);
  const visitorContext = await browser.newContext();
  const visitor = await visitorContext.newPage();
  const violations = watchErrors(visitor, { uncaught: false, consoleErrors: false, csp: true });
  await visitor.goto(`/g/${id}`);
  await expect(visitor.locator('.access-badge')).toHaveText('View only');
  // Only the editor's run controls are missing; the visitor's run is a copy.
  await expect(visitor.getByRole('button', { name: 'Runs', exact: true })).toHaveCount(0);
  const forkAndRun = visitor.locator('.run-button');
  await expect(forkAndRun).toHaveText('▶ Fork and run');
  await forkAndRun.click();
  const dialog = visitor.getByRole('dialog', { name: 'Run the graph' });
  await expect(dialog).toBeVisible();
  await expect(visitor.locator('.access-badge')).toHaveText('Editing');
  const forkId = graphId(visitor);
  expect(forkId).not.toBe(id);
  expect(visitor.url()).not.toContain('#');
  await dialog.getByLabel('Run input').fill('the tides');
  await dialog.getByRole('button', { name: /Start run/ }).click();
  await expect(runPanel(visitor).getByRole('button', { name: 'Cancel run' })).toBeVisible();
  await expect(runPanel(visitor).locator('.run-status')).toHaveText('Completed', { timeout: 30_000 });
  // The run belongs to the fork: the original's editor sees no run, and
  // its run list is for its editors only.
  expect((await page.request.get(`/api/graphs/${id}/runs`)).status()).toBe(403);
  const originalRuns = await page.evaluate(async (graphId) => {
    const token = localStorage.getItem(`patchbay.edit.${graphId}`);
    const reply = await fetch(`/api/graphs/${graphId}/runs`, { headers: { Authorization: `Bearer ${token}` } });
    return (await reply.json()).runs;
  }, id);
  expect(originalRuns).toEqual([]);
  expect(violations).toEqual([]);
  await visitorContext.close();
});

test('a run link shows the finished run read-only in a fresh browser', async ({ page, browser }) => {
  await newGraph(page);
  await page.locator('.run-button').click();
  await page.getByRole('dialog', { name: 'Run the graph' }).getByRole('button', { name: /Start run/ }).click();
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 20_000 });
  // The merged output is the run's record, read as the run ends.
  await expect(runPanel(page).locator('.run-output')).toContainText('───── Re-prompt 2 ─────');
  const merged = await runPanel(page).locator('.run-output').textContent();
  const { links } = await shareLinks(page);
  expect(links['run-link']).toMatch(/\/g\/g_[^/]+\/runs\/r_/);

  const fresh = await browser.newContext();
  const visitor = await fresh.newPage();
  const errors = watchErrors(visitor, { consoleErrors: false, csp: true });
  await visitor.goto(links['run-link']);
  await expect(visitor.locator('.access-badge')).toHaveText('Recorded run');
  await expect(runPanel(visitor).locator('.run-status')).toHaveText('Completed');
  for (const id of ['m1', 'm2', 'm3']) {
    await expect(node(visitor, id)).toHaveClass(/run-done/);
    await expect(node(visitor, id).locator('.run-badge')).toContainText('✓');
  }
  await expect(node(visitor, 'm2').locator('.run-badge')).toContainText('tok');
  await expect(runPanel(visitor).locator('.run-output')).toHaveText(merged);
  await runPanel(visitor).locator('.run-module-entry[data-module-id="m2"]').click();
  await expect(runPanel(visitor).getByRole('tab', { name: 'Re-prompt 2' })).toBeVisible();
  // Read-only: no palette, no run, no edits.
  await expect(visitor.locator('.palette')).toHaveCount(0);
  await expect(visitor.locator('.run-button')).toHaveCount(0);
  await expect(visitor.getByLabel('Graph name')).toBeDisabled();
  await expect(visitor.getByRole('link', { name: 'Open the graph' })).toHaveAttribute('href', /^\/g\/g_/);
  expect(errors).toEqual([]);
  await fresh.close();
});

test('a run link opened while the run is still going follows it live to the end', async ({ page, browser }) => {
  await newGraph(page);
  await page.locator('.run-button').click();
  await page.getByRole('dialog', { name: 'Run the graph' }).getByRole('button', { name: /Start run/ }).click();
  await expect(runPanel(page).locator('.run-status')).toHaveText('Running');
  const link = await runPanel(page).getByRole('link', { name: 'Run link' }).getAttribute('href');

  const fresh = await browser.newContext();
  const visitor = await fresh.newPage();
  const errors = watchErrors(visitor, { consoleErrors: false, csp: true });
  await visitor.goto(link);
  // Still going when it opened (the simulated run takes seconds): the page
  // says so and follows its events (a hung tab answers no assertion at all).
  await expect(visitor.locator('.access-badge')).toHaveText('Live run');
  await expect(runPanel(visitor).locator('.run-status')).toHaveText('Running');
  await expect(runPanel(visitor).locator('.run-status')).toHaveText('Completed', { timeout: 30_000 });
  await expect(visitor.locator('.access-badge')).toHaveText('Recorded run');
  for (const id of ['m1', 'm2', 'm3']) {
    await expect(node(visitor, id)).toHaveClass(/run-done/);
  }
  expect(errors).toEqual([]);
  await fresh.close();
});

test('export then import round-trips the graph as a new one; a broken file is refused with a clear message', async ({ page }) => {
  const id = await newGraph(page);
  await page.getByLabel('Graph name').fill('Tide tables');
  await saved(page);
  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export' }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe('Tide tables.patchbay.json');
  const file = await download.path();
  const exported = JSON.parse(fs.readFileSync(file, 'utf8'));
  expect(exported.name).toBe('Tide tables');
  expect(exported.modules.map((module) => module.id)).toEqual(['m1', 'm2', 'm3']);

  await page.locator('input.import-file').setInputFiles(file);
  await expect(page).not.toHaveURL(new RegExp(id));
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  const importedId = graphId(page);
  await expect(page.getByLabel('Graph name')).toHaveValue('Tide tables');
  const original = await (await page.request.get(`/api/graphs/${id}`)).json();
  const imported = await (await page.request.get(`/api/graphs/${importedId}`)).json();
  expect(imported.id).toBe(importedId);
  expect(imported.modules).toEqual(original.modules);
  expect(imported.cables).toEqual(original.cables);

  // A file cut short: refused whole, with what is wrong; the page stays.
  const here = page.url();
  await page.locator('input.import-file').setInputFiles({
    name: 'broken.json',
    mimeType: 'application/json',
    buffer: Buffer.from('{"format": "patchbay.graph/v1", "name": "Half", "modules": [{"id": "m1"'),
  });
  const problem = page.getByRole('alertdialog', { name: '“broken.json” was not imported' });
  await expect(problem).toBeVisible();
  await expect(problem).toContainText('not valid JSON');
  await expect(problem).toContainText('Nothing was created');
  await problem.getByRole('button', { name: 'Close' }).click();
  // A file with a wrong field says where.
  const wrong = structuredClone(exported);
  wrong.modules[1].position.x = 'left';
  await page.locator('input.import-file').setInputFiles({
    name: 'wrong.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(wrong)),
  });
  const second = page.getByRole('alertdialog', { name: '“wrong.json” was not imported' });
  await expect(second).toContainText('modules[1].position.x');
  expect(page.url()).toBe(here);
});

test('a self-contained link opens a graph the server does not have, and Save to server keeps it', async ({ page, browser }) => {
  await newGraph(page);
  await page.getByLabel('Graph name').fill('Carried in a link');
  await saved(page);
  const { links } = await shareLinks(page);
  expect(links['self-contained-link']).toMatch(/\/#graph=[A-Za-z0-9_-]+$/);

  const fresh = await browser.newContext();
  const visitor = await fresh.newPage();
  await visitor.goto(links['self-contained-link']);
  await expect(visitor).toHaveURL(/\/open#graph=/);
  await expect(visitor.locator('.access-badge')).toHaveText('From a link');
  await expect(visitor.getByLabel('Graph name')).toHaveValue('Carried in a link');
  for (const id of ['m1', 'm2', 'm3']) await expect(node(visitor, id)).toBeVisible();
  // Edits stay in the page until it is saved to the server.
  await visitor.getByLabel('Graph name').fill('Kept from a link');
  await expect(visitor.locator('.save-status')).toContainText('in this page only');
  await visitor.getByRole('button', { name: 'Save to server' }).click();
  await expect(visitor.locator('.access-badge')).toHaveText('Editing');
  await expect(visitor).toHaveURL(/\/g\/g_/);
  await expect(visitor.getByLabel('Graph name')).toHaveValue('Kept from a link');

  // A damaged link says so.
  await visitor.goto('/#graph=AAAA');
  await expect(visitor.getByRole('heading', { name: 'This link cannot be opened' })).toBeVisible();
  await expect(visitor.locator('main')).toContainText('cut short');
  await fresh.close();
});
