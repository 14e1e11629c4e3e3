// Validators through the UI: the "Build until the checks pass" example
// started from the home page, its validators and failure patterns in the
// coding module's panel (a broken one flagged at once), and a run in which
// a failed check sends the agent a fix turn before the checks pass.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, panel, runPanel } = find;
const { watchErrors } = check;
const { startRun } = act;

test('the checks example runs from the home page: a failed check brings a fix turn, then they pass', async ({ page }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  await page.goto('/');
  const example = page.getByRole('region', { name: 'Examples' }).locator('.home-example').filter({ hasText: 'Build until the checks pass' });
  await expect(example).toContainText('--enable-commands');
  await example.getByRole('link', { name: 'Start from this example' }).click();
  await expect(page.locator('.access-badge')).toHaveText('Editing');

  // The coding module's panel lists its validators and failure patterns.
  await node(page, 'build').locator('.module-header').click();
  const validators = panel(page).locator('fieldset.validators');
  await expect(validators.getByRole('group', { name: /^Validator / })).toHaveCount(2);
  await expect(validators.getByRole('group', { name: 'Validator 2' }).getByLabel('Command')).toHaveValue(/USAGE\.md/);
  await expect(validators.getByRole('group', { name: /^Failure pattern / })).toHaveCount(2);
  // A rule that does not read is flagged where it is typed, and mended.
  const rule = validators.getByRole('group', { name: 'Validator 1' }).getByLabel('Passes when');
  await rule.fill('zero');
  await expect(validators.locator('.field-problems')).toContainText('neither `empty` nor `exit_code:N`');
  await rule.fill('empty');
  await expect(validators.locator('.field-problems')).toHaveCount(0);
  await panel(page).getByRole('button', { name: 'Close details' }).click();

  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await startRun(page);
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 40_000 });
  await expect(node(page, 'build').locator('.run-badge')).toContainText('✓');

  // The builder's fix turn, and the gates in the run state.
  await runPanel(page).locator('.run-module-entry[data-module-id="build"]').click();
  await expect(runPanel(page).getByRole('tab', { name: 'builder · Fix 1' })).toBeVisible();
  await runPanel(page).getByRole('button', { name: /Run state/ }).click();
  const state = runPanel(page).getByRole('table', { name: 'Run state' });
  await expect(state.getByRole('row', { name: /^Build\.gate\.documented/ })).toContainText('true');
  await expect(state.getByRole('row', { name: /^Build\.gate\.runs/ })).toContainText('true');
  expect(errors).toEqual([]);
});
