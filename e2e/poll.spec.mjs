// A poll module through the UI: added from the palette, its command,
// interval and results set in the panel (each result a port), and a run
// whose badge counts down to the next poll until the script decides.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, port, panel, runPanel } = find;
const { newGraph, wire, drag, startRun } = act;
const { watchErrors, saved } = check;

test('a poll waits, counting down, until its script reports a decision', async ({ page }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  await newGraph(page);
  await page.locator('.palette-item[data-kind="step.poll"]').click();
  await expect(node(page, 'm4')).toBeVisible();
  await drag(page, 'm4', 0, 260);
  await panel(page).getByLabel('Label').fill('Wait for approval');
  await panel(page).getByLabel('Command').fill('echo "poll $PATCHBAY_POLL"; [ "$PATCHBAY_POLL" -ge 2 ] && echo PATCHBAY_RESULT:approved; exit 0');
  await panel(page).getByLabel('Every (seconds)').fill('3');
  await panel(page).getByLabel('Results, one per line').fill('approved\nrejected');
  await expect(port(page, 'm4', 'result:approved')).toContainText('→ approved');
  await expect(port(page, 'm4', 'result:rejected')).toContainText('→ rejected');
  await expect(port(page, 'm4', 'timeout_out')).toContainText('Timed out');
  // Its timeout reads in hours, and always has its port.
  const attempts = panel(page).locator('fieldset.attempts');
  await attempts.getByLabel('Timeout (seconds)').fill('');
  await expect(attempts.getByLabel('Timeout (seconds)')).toHaveAttribute('placeholder', 'default: 72 h');
  await expect(attempts.locator('.timeout-hint')).toContainText('72 h (the default). A timed-out attempt is cancelled, and it ends on its own port');
  await expect(port(page, 'm4', 'timeout_out')).toContainText('Timed out');
  await panel(page).getByRole('button', { name: 'Close details' }).click();
  await wire(page, ['m1', 'data_out'], ['m4', 'data_in']);
  await wire(page, ['m4', 'result:approved'], ['m3', 'data_in']);
  await expect(page.locator('[data-edge-id]')).toHaveCount(4);
  await saved(page);

  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await startRun(page, 'release 1.2');
  await expect(node(page, 'm4').locator('.run-badge')).toContainText('◌ Polling · next in');
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 30_000 });
  await expect(node(page, 'm4').locator('.run-badge')).toContainText('✓');
  await runPanel(page).locator('.run-module-entry[data-module-id="m4"]').click();
  await runPanel(page).getByRole('tab', { name: 'Transcript' }).click();
  await expect(runPanel(page).locator('.run-output')).toContainText('(poll 2)');
  expect(errors).toEqual([]);
});
