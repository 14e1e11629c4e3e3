// What the canvas shows live is what a reload of the same run shows
// (issue 43, point 1): a review loop that runs out of rounds — its draft
// ran three times, its tokens counted for all three both ways, the run
// failed on the unwired Out of rounds; and Escape closes the docked panels.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect } from '@playwright/test';
import { find, check } from './support.mjs';

const { runPanel } = find;
const { watchErrors } = check;

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
  await page.locator('.pane').focus();
  await page.keyboard.press('Control+Enter');
  // The simulated reviewer asks for revision every round it sees this.
  const input = page.getByRole('dialog', { name: 'Run the graph' }).getByLabel('Run input');
  await input.fill('[sim:revise] How tides work');
  await input.press('Control+Enter');
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

/** A server of its own, started without --enable-commands (the default). */
async function serverWithoutCommands() {
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address();
      probe.close(() => resolve(free));
    });
  });
  const folder = mkdtempSync(join(tmpdir(), 'patchbay-e2e-'));
  const child = spawn(process.env.PATCHBAY_BINARY, [
    'serve', '--addr', `127.0.0.1:${port}`, '--database-url', `sqlite://${folder}/x.db`,
    '--site-root', process.env.PATCHBAY_SITE_ROOT,
  ], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 100; tries++) {
    try {
      if ((await fetch(`${base}/api/health`)).ok) break;
    } catch { /* not up yet */ }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { base, stop: () => { child.kill(); rmSync(folder, { recursive: true, force: true }); } };
}

test('what a server will not run is a finding before the run, and the run dialog says so by Start', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  const server = await serverWithoutCommands();
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
