// Running from a module (PRODUCT §3.15), through the UI only: after a run,
// "Run from here" (in the run panel, and in a module's menu) opens the run
// dialog saying what the recorded run lends and what that saves; the run
// that follows draws the reused modules as reused; a change upstream is
// said before anything is sent; the run history says where a run came from;
// comparing two runs compares every input and output of each module.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, runPanel, panel } = find;
const { newGraph, runToEnd, wire } = act;
const { watchErrors, saved } = check;

const badge = (page, id) => node(page, id).locator('.run-badge');

const firstRun = (page) => runToEnd(page, 'Why tide tables matter');

test('Run from here reuses what is upstream, says what that saves, and draws it as reused', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  // Topic → Draft → Final essay.
  await newGraph(page);
  await firstRun(page);
  const runs = runPanel(page);
  const firstRunId = await runs.locator('.run-id').textContent();
  await runs.locator('.run-module-entry[data-module-id="m3"]').click();
  const recorded = await runs.locator('.run-output').textContent();

  await runs.getByRole('button', { name: 'Run from here' }).click();
  const dialog = page.getByRole('dialog', { name: 'Run from “Final essay”' });
  await expect(dialog).toBeVisible();
  const reused = dialog.getByLabel('What is reused');
  // Every model call the draft made (its instruction and two re-prompts),
  // with their tokens, as the recorded run has them.
  const record = await (await page.request.get(`/api/runs/${firstRunId}`)).json();
  const recordedDraft = record.modules.m2.activations[0];
  expect(recordedDraft.responses).toHaveLength(3);
  const tokens = recordedDraft.receipt.tokens_in + recordedDraft.receipt.tokens_out;
  await expect(reused).toContainText(`Reused from run ${firstRunId}, not run again: Topic, Draft — saves 3 model calls, ${tokens} tokens (simulated, so no money).`);
  await expect(reused).toContainText('Runs: Final essay.');
  // The input is the recorded run's, since Topic is reused.
  await expect(dialog.getByLabel('Run input')).toHaveValue('Why tide tables matter');
  await expect(dialog.getByLabel('Run input')).toHaveAttribute('readonly', '');
  await dialog.getByRole('button', { name: /Start run/ }).click();
  await expect(dialog).toBeHidden();

  await expect(runs.locator('.run-id')).not.toHaveText(firstRunId);
  await expect(runs.locator('.run-status')).toHaveText('Completed', { timeout: 30000 });
  for (const id of ['m1', 'm2']) {
    await expect(badge(page, id)).toHaveText('↺ reused');
    await expect(node(page, id)).toHaveClass(/run-reused/);
  }
  await expect(badge(page, 'm3')).toContainText('✓');
  await runs.locator('.run-module-entry[data-module-id="m3"]').click();
  await expect(runs.locator('.run-output')).toHaveText(recorded);
  // Nothing was spent: the reused call was the first run's.
  await expect(runs.locator('.run-cost')).toContainText('saved by reuse');

  // After a reload, the record draws them reused too.
  await page.reload();
  await expect(badge(page, 'm2')).toHaveText('↺ reused');

  // The history says where the run came from.
  await runPanel(page).getByRole('button', { name: 'History' }).click();
  await expect(runPanel(page).locator('.history-run').first()).toContainText(`from run ${firstRunId} at Final essay`);

  // The two runs side by side: reused or run again, nothing differs.
  const history = runPanel(page);
  await expect(history.getByRole('button', { name: 'Compare the two runs' })).toBeDisabled();
  await expect(history.getByRole('checkbox')).toHaveCount(2);
  for (const box of await history.getByRole('checkbox').all()) await box.check();
  await history.getByRole('button', { name: 'Compare the two runs' }).click();
  const compared = page.getByRole('dialog', { name: 'Compare runs' });
  await expect(compared).toContainText('0 of 3 modules differ.');
  const draft = compared.locator('.compared-module[data-module-id="m2"]');
  await expect(draft.locator('.compared-sides .hint').first()).toContainText('completed');
  await expect(draft.locator('.compared-sides .hint').nth(1)).toContainText('reused');
  await expect(draft.locator('.compared-mark')).toHaveText('same');
  expect(errors).toEqual([]);
});

test('a module menu runs from that module, and a change upstream is said before anything is sent', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  await newGraph(page);
  await firstRun(page);
  // Draft's instruction changes after the run.
  await node(page, 'm2').dblclick();
  await panel(page).getByLabel('Instruction', { exact: true }).fill('Write a short essay, in plain words, on the topic above.');
  await saved(page);

  // From Final essay, the changed Draft would be reused: refused, saying so.
  await node(page, 'm3').click({ button: 'right' });
  const menu = page.getByRole('menu');
  await expect(menu).toBeVisible();
  await menu.getByRole('menuitem', { name: 'Run from here' }).click();
  let dialog = page.getByRole('dialog', { name: 'Run from “Final essay”' });
  await expect(dialog.getByLabel('What is reused')).toContainText('"Draft" had its settings changed since run r_');
  await expect(dialog.getByRole('button', { name: /Start run/ })).toBeDisabled();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  // From Draft, from the keyboard: the changed module runs, Topic is reused.
  await node(page, 'm2').click();
  await page.keyboard.press('Shift+F10');
  await expect(menu).toBeVisible();
  await expect(menu.getByRole('menuitem', { name: 'Run from here' })).toBeFocused();
  await page.keyboard.press('Enter');
  dialog = page.getByRole('dialog', { name: 'Run from “Draft”' });
  await expect(dialog.getByLabel('What is reused')).toContainText('not run again: Topic.');
  await expect(dialog.getByLabel('What is reused')).toContainText('Runs: Draft, Final essay.');
  await dialog.getByRole('button', { name: /Start run/ }).click();
  await expect(badge(page, 'm1')).toHaveText('↺ reused');
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 30000 });
  await expect(badge(page, 'm2')).toContainText('✓');
  expect(errors).toEqual([]);
});

test('comparing two runs compares every input and output: an output module whose second input changed differs', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  await newGraph(page);
  // The topic goes to Final essay as well as through the draft: its first
  // result is the topic, the same in both runs, its second the draft.
  await wire(page, ['m1', 'data_out'], ['m3', 'data_in']);
  await expect(page.locator('[data-edge-id]')).toHaveCount(3);
  await saved(page);
  await firstRun(page);
  await node(page, 'm2').dblclick();
  await panel(page).getByLabel('Instruction', { exact: true }).fill('Write a short essay, in plain words, on the topic above.');
  await saved(page);
  await firstRun(page);

  const history = runPanel(page);
  await history.getByRole('button', { name: 'History' }).click();
  for (const box of await history.getByRole('checkbox').all()) await box.check();
  await history.getByRole('button', { name: 'Compare the two runs' }).click();
  const compared = page.getByRole('dialog', { name: 'Compare runs' });
  const mark = (id) => compared.locator(`.compared-module[data-module-id="${id}"] .compared-mark`);
  await expect(mark('m1')).toHaveText('same');
  await expect(mark('m2')).toHaveText('differs');
  await expect(mark('m3')).toHaveText('differs');
  await expect(compared).toContainText('2 of 3 modules differ.');
  // What the output module was given, from both, is there to read.
  const final = compared.locator('.compared-module[data-module-id="m3"]');
  await expect(final.locator('pre').first()).toContainText('From “Topic”');
  await expect(final.locator('pre').first()).toContainText('From “Draft”');
  expect(errors).toEqual([]);
});
