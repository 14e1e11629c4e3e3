// What the canvas shows live is what a reload of the same run shows
// (issue 43, point 1): a review loop that runs out of rounds — its draft
// ran three times, its tokens counted for all three both ways, the run
// failed on the unwired Out of rounds; and Escape closes the docked panels.
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
