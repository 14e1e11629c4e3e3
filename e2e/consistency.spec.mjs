// What the canvas shows live is what a reload of the same run shows
// (issue 43, point 1): a review loop that runs out of rounds — its draft
// ran three times, its tokens counted for all three both ways, the run
// failed on the unwired Out of rounds; a module stopped by its sibling's
// failure; a poll between polls, on the run's own page as the server draws
// it; and Escape closes the docked panels.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, runPanel } = find;
const { watchErrors } = check;
const { ownServer, startRun } = act;

const module = (id, kind, label, x, y, config = {}) => ({ id, kind, label, position: { x, y }, config });
const cable = (id, from, to) => ({
  id, from: { module: from[0], port: from[1] }, to: { module: to[0], port: to[1] },
});

/** Makes `document` on the server and opens it with its edit link. */
async function openGraph(page, document) {
  const created = await (await page.request.post('/api/graphs', { data: document })).json();
  await page.goto(created.edit_url);
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  return created.id;
}

/** Every module's state and badge, with the times taken out (a live
 * duration is read from event times, a reloaded one from the record's). */
async function badges(page) {
  return page.locator('[data-node-id]').evaluateAll((nodes) =>
    nodes.map((node) => ({
      id: node.dataset.nodeId,
      state: [...node.classList].filter((name) => name.startsWith('run-')).sort().join(' '),
      badge: (node.querySelector('.run-badge')?.textContent ?? '').replace(/\d+(\.\d+)? s\b/, '…'),
    })),
  );
}

test('a review loop shows the same states and tokens live and after a reload', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  await page.goto('/new?example=revise-until-approved');
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  // The simulated reviewer asks for revision every round it sees this.
  await startRun(page, '[sim:revise] How tides work');
  await expect(runPanel(page).locator('.run-status')).toHaveText(/Completed|Failed/, { timeout: 60000 });
  // The loop brought Draft back: it has more than one activation.
  await runPanel(page).locator('.run-module-entry[data-module-id="draft"]').click();
  await expect(runPanel(page).getByRole('group', { name: 'Activations' })).toBeVisible();
  await page.waitForTimeout(500);
  const live = await badges(page);
  expect(live.find((module) => module.id === 'draft').badge).toMatch(/\d+ tok/);
  await page.reload();
  await expect(page.locator('[data-node-id="draft"] .run-badge')).toContainText('tok');
  const reloaded = await badges(page);
  expect(reloaded).toEqual(live);

  // Escape: the run panel closes, once nothing else is open or selected.
  await page.locator('.pane').click({ position: { x: 5, y: 5 } });
  await expect(runPanel(page)).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(runPanel(page)).toBeHidden();
  // The validation panel too.
  await page.locator('.validation-badge').click();
  const validation = page.getByRole('region', { name: 'Validation' });
  await expect(validation).toBeVisible();
  await page.locator('.pane').focus();
  await page.keyboard.press('Escape');
  await expect(validation).toBeHidden();
  expect(errors).toEqual([]);
});

test('a module stopped by its sibling\'s failure shows cancelled live, as its record does', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  await openGraph(page, {
    name: 'Two at once, one fails',
    modules: [
      module('m1', 'step.input', 'Topic', 40, 160),
      module('m2', 'step.agent_task', 'Fails', 300, 60, {
        instruction: 'Write about it. [sim:fail]', agent_config: { provider: 'sim' },
      }),
      module('m3', 'step.agent_task', 'Slow', 300, 260, {
        instruction: 'Take your time. [sim:sleep 20]', agent_config: { provider: 'sim' },
      }),
    ],
    cables: [
      cable('c1', ['m1', 'data_out'], ['m2', 'data_in']),
      cable('c2', ['m1', 'data_out'], ['m3', 'data_in']),
    ],
  });
  await startRun(page, 'tides');
  await expect(runPanel(page).locator('.run-status')).toHaveText('Failed', { timeout: 30000 });
  await expect(node(page, 'm3').locator('.run-badge')).toHaveText(/^■ cancelled/);
  await expect(node(page, 'm2').locator('.run-badge')).toHaveText(/^✕ failed/);
  const live = await badges(page);
  await page.reload();
  await expect(node(page, 'm2').locator('.run-badge')).toHaveText(/^✕ failed/);
  expect(await badges(page)).toEqual(live);
  expect(errors).toEqual([]);
});

test('a poll between polls counts down on the run\'s page the server draws, as it does live', async ({ page, browser }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  const id = await openGraph(page, {
    name: 'Wait for the release',
    modules: [
      module('m1', 'step.input', 'Release', 40, 160),
      module('m2', 'step.poll', 'Wait for approval', 300, 160, {
        command: '[ "$PATCHBAY_POLL" -ge 3 ] && echo PATCHBAY_RESULT:approved; exit 0',
        interval_seconds: 4,
        results: ['approved'],
      }),
    ],
    cables: [cable('c1', ['m1', 'data_out'], ['m2', 'data_in'])],
  });
  await startRun(page, 'release 1.2');
  await expect(node(page, 'm2').locator('.run-badge')).toContainText('◌ Polling · next in');
  const runId = new URL(page.url()).searchParams.get('run');
  expect(runId).toBeTruthy();
  // The run's page as the server renders it from the record, before any
  // script runs: the same countdown, not "Running".
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const stranger = await context.newPage();
    await stranger.goto(`/g/${id}/runs/${runId}`);
    // Counting down from the poll's interval of 4 s, as the live badge does.
    await expect(stranger.locator('[data-node-id="m2"] .run-badge')).toHaveText(/^◌ Polling · next in [0-4]\.\d s$/);
    // What it is and which graph, without a script either.
    await expect(stranger.locator('.access-badge')).toHaveText('Live run');
    await expect(stranger.getByLabel('Graph name')).toHaveValue('Wait for the release');
  } finally {
    await context.close();
  }
  // And a reload while it waits.
  await page.reload();
  await expect(node(page, 'm2').locator('.run-badge')).toHaveText(/^◌ Polling · next in [0-4]\.\d s$/);
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 30000 });
  expect(errors).toEqual([]);
});

test('what a server will not run is a finding before the run, and the run dialog says so by Start', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  // A server of its own, started without --enable-commands (the default).
  const server = await ownServer();
  try {
    await page.goto(`${server.base}/new?example=build-until-the-checks-pass`);
    await expect(page.locator('.access-badge')).toHaveText('Editing');
    const badge = page.locator('.validation-badge');
    await expect(badge).toHaveText('✕ 1');
    await expect(badge).toHaveClass(/has-errors/);
    await badge.click();
    const said = '“Build” runs shell commands (its 2 validators), and this server does not run commands: start it with --enable-commands, or remove them';
    await expect(page.getByRole('region', { name: 'Validation' })).toContainText(said);
    await page.locator('.pane').focus();
    await page.keyboard.press('Control+Enter');
    const dialog = page.getByRole('dialog', { name: 'Run the graph' });
    await expect(dialog.locator('.cannot-run')).toHaveText(said);
    await expect(dialog.getByRole('button', { name: /Start run/ })).toBeDisabled();
  } finally {
    server.stop();
  }
  expect(errors).toEqual([]);
});
