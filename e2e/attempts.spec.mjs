// Attempts, give-up and timeouts through the UI: the panel's Attempts and
// timeout section (ports that come and go with it, the retry instruction
// and its variables, refused elsewhere), and runs whose badge says
// `Retry 2/3 in 2 s…`, then ✓ — or, with the attempts used, `✕ gave up`.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, port, panel, runPanel } = find;
const { newGraph } = act;
const { watchErrors, findingCodes, saved } = check;

const badge = (page, id) => node(page, id).locator('.run-badge');

async function select(page, id) {
  await node(page, id).locator('.module-header').click();
  await expect(panel(page)).toBeVisible();
}

/** Starts a run from the keyboard with `input`; does not wait for its end. */
async function startRun(page, input) {
  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await page.locator('.pane').focus();
  await page.keyboard.press('Control+Enter');
  const dialog = page.getByRole('dialog', { name: 'Run the graph' });
  await dialog.getByLabel('Run input').fill(input);
  await dialog.getByLabel('Run input').press('Control+Enter');
}

test('attempts and a timeout add their ports, and retry variables are only for the retry instruction', async ({ page }) => {
  const errors = watchErrors(page);
  await newGraph(page);
  await select(page, 'm2');
  const section = panel(page).locator('fieldset.attempts');
  await expect(section).toContainText('1: no retries');
  await expect(port(page, 'm2', 'give_up_out')).toHaveCount(0);
  await expect(section.getByLabel('Retry instruction')).toHaveCount(0);

  await section.getByLabel('Attempts', { exact: true }).fill('3');
  await expect(port(page, 'm2', 'give_up_out')).toBeVisible();
  await expect(port(page, 'm2', 'give_up_out')).toContainText('Gave up');
  await expect(section).toContainText('gives up on “Gave up”');
  const retry = section.getByLabel('Retry instruction');
  await expect(retry).toBeVisible();
  await expect(section.locator('.retry-variables')).toContainText('{{ error }}');
  await retry.fill('Attempt {{ attempt }} failed with {{ error }}. Fix it.');
  await saved(page);
  expect(await findingCodes(page)).not.toContain('validation.template_unresolved');

  // The same variable in the instruction has no value there.
  const instruction = panel(page).getByLabel('Instruction', { exact: true });
  const before = await instruction.inputValue();
  await instruction.fill(`${before} {{ error }}`);
  await expect.poll(() => findingCodes(page)).toContain('validation.template_unresolved');
  const found = page.getByRole('region', { name: 'Validation' }).locator('.finding[data-code="validation.template_unresolved"]');
  await expect(found).toContainText('retry variable');
  await instruction.fill(before);
  await expect.poll(() => findingCodes(page)).not.toContain('validation.template_unresolved');

  // A timeout of its own gives the module a port; clearing it takes the port away.
  const timeout = section.getByLabel('Timeout (seconds)');
  await expect(timeout).toHaveAttribute('placeholder', 'default: 30 min');
  await expect(section.locator('.timeout-hint')).toContainText('30 min (the default). A timed-out attempt is cancelled, and it is an error');
  await timeout.fill('90');
  await expect(port(page, 'm2', 'timeout_out')).toContainText('Timed out');
  await expect(section.locator('.timeout-hint')).toContainText('1 min 30 s. A timed-out attempt is cancelled, and it ends on its own port');
  await timeout.fill('');
  await expect(port(page, 'm2', 'timeout_out')).toHaveCount(0);

  // Back to one attempt: the port and the retry fields go.
  await section.getByLabel('Attempts', { exact: true }).fill('1');
  await expect(port(page, 'm2', 'give_up_out')).toHaveCount(0);
  await expect(section.getByLabel('Retry instruction')).toHaveCount(0);
  await saved(page);
  expect(errors).toEqual([]);
});

test('a failing attempt is retried with its badge saying so, and used attempts give up', async ({ page }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  await newGraph(page);
  await select(page, 'm2');
  const instruction = panel(page).getByLabel('Instruction', { exact: true });
  await instruction.fill('Write a short note. [sim:fail before attempt 2]');
  const section = panel(page).locator('fieldset.attempts');
  await section.getByLabel('Attempts', { exact: true }).fill('3');
  await section.getByLabel('Wait before a retry (seconds, doubling)').fill('2');
  await saved(page);

  await startRun(page, 'tides');
  await expect(badge(page, 'm2')).toContainText('Retry 2/3 in 2 s…');
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 30_000 });
  await expect(badge(page, 'm2')).toContainText('✓');
  await expect(badge(page, 'm3')).toContainText('✓');
  // The run panel shows each attempt; the first says why another followed.
  await runPanel(page).locator('.run-module-entry[data-module-id="m2"]').click();
  const picker = runPanel(page).getByRole('group', { name: 'Activations' });
  await expect(picker.getByRole('button')).toHaveText(['Attempt 1', 'Attempt 2']);
  await expect(picker.getByRole('button', { name: 'Attempt 2' })).toHaveAttribute('aria-pressed', 'true');
  await picker.getByRole('button', { name: 'Attempt 1' }).click();
  await expect(runPanel(page).locator('.run-routes')).toContainText('Attempt 1 of 3 failed, so attempt 2 followed after 2 s');
  // The run state: each module's keys, the failed attempt's under prev.
  await runPanel(page).getByRole('button', { name: /Run state/ }).click();
  const state = runPanel(page).getByRole('table', { name: 'Run state' });
  await expect(state.getByRole('row', { name: /^Draft\.attempt/ })).toContainText('2');
  await expect(state.getByRole('row', { name: /^prev\.Draft\.status/ })).toContainText('retrying');
  await expect(state.getByRole('row', { name: /^input/ })).toContainText('tides');

  // Always failing, with two attempts: it gives up, and nothing takes
  // "Gave up", so the run fails naming it.
  await select(page, 'm2');
  await instruction.fill('Write a short note. [sim:fail]');
  await section.getByLabel('Attempts', { exact: true }).fill('2');
  await section.getByLabel('Wait before a retry (seconds, doubling)').fill('0');
  await saved(page);
  await startRun(page, 'tides');
  await expect(runPanel(page).locator('.run-status')).toHaveText('Failed', { timeout: 30_000 });
  await expect(badge(page, 'm2')).toHaveText('✕ gave up');
  await expect(runPanel(page)).toContainText('gave up after 2 attempts');
  expect(errors).toEqual([]);
});
