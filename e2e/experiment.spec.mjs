// Experiments (DOC23 §7.2–7.3) through the UI only: the "Which prompt is
// better?" example from the home page, its variants in the panel, their
// progress on the badge, the comparison side by side with the judge's
// scores, the winner and a diff, and the same comparison on the run's own
// page for whoever has its link.
import { test, expect } from '@playwright/test';
import { find, check, act } from './support.mjs';

const { node, panel, port, runPanel } = find;
const { watchErrors, saved } = check;
const { startRun } = act;

test('variants run side by side, a judge names the winner, and the run page shows the comparison', async ({ page, browser }) => {
  test.setTimeout(120_000);
  const errors = watchErrors(page, { consoleErrors: false });
  await page.goto('/');
  const example = page.locator('.home-example').filter({ hasText: 'Which prompt is better?' });
  await example.getByRole('link', { name: 'Start from this example' }).click();
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await expect(port(page, 'draft', 'comparison_out')).toHaveAttribute('data-label', '⚖ Variants');

  // The variants are in the module's panel; a fourth can be added.
  await node(page, 'draft').locator('.module-header').click();
  const variants = panel(page).locator('fieldset.variants-section');
  await expect(variants.locator('.variant-card')).toHaveCount(3);
  await expect(variants.getByLabel('Name of variant 2')).toHaveValue('Concrete');
  await variants.getByRole('button', { name: '+ Add variant' }).click();
  await expect(variants.locator('.variant-card')).toHaveCount(4);
  await variants.getByLabel('Name of variant 4').fill('Terse');
  await variants.getByLabel('Instruction of variant 4').fill('Write the essay above in five sentences.');
  await saved(page);

  // The run: the badge counts the variants as they end.
  await startRun(page);
  await expect(node(page, 'draft').locator('.run-badge')).toContainText(/Variants \d\/4 done/);
  const run = runPanel(page);
  // The run panel follows each variant.
  await expect(run.locator('.run-module-entry[data-module-id="draft"] .entry-variant').filter({ hasText: /^Terse: / })).toBeVisible();
  await expect(run.locator('.run-status')).toHaveText('Completed', { timeout: 90_000 });
  const lines = run.locator('.run-module-entry[data-module-id="draft"] .entry-variant');
  await expect(lines).toHaveCount(4);
  for (const name of ['As written', 'Concrete', "Devil's advocate", 'Terse']) {
    await expect(lines.filter({ hasText: `${name}: ✓ done` })).toHaveCount(1);
  }

  // Side by side: every variant with its tokens, cost and duration, the
  // judge's scores, one winner; a diff of two.
  await run.locator('.run-module-entry[data-module-id="draft"]').click();
  await expect(run.getByRole('tab', { name: 'Variants' })).toHaveAttribute('aria-selected', 'true');
  const columns = run.locator('.comparison .variant');
  await expect(columns).toHaveCount(4);
  await expect(columns.filter({ hasText: 'Terse' })).toContainText('its own instruction');
  await expect(columns.first()).toContainText('free (simulated)');
  await expect(columns.first().locator('.variant-score')).toContainText('/ 10');
  await expect(run.locator('.comparison .variant.winner')).toHaveCount(1);
  await run.getByLabel('Second variant of the diff').selectOption({ label: 'Terse' });
  await expect(run.locator('.comparison .diff .diff-added').first()).toBeVisible();
  // Its lines come from the second variant's output.
  const terse = await columns.filter({ hasText: 'Terse' }).locator('.variant-text').textContent();
  await expect(run.locator('.comparison .diff .diff-added').first()).toHaveText(`+ ${terse.split('\n')[0]}\n`);
  const winner = (await run.locator('.comparison .variant.winner strong').textContent()).trim();

  // The run page, opened by someone else, is the same report.
  const href = await run.locator('.run-link').getAttribute('href');
  const visitor = await (await browser.newContext()).newPage();
  await visitor.goto(href);
  await expect(visitor.locator('.access-badge')).toHaveText('Recorded run');
  await runPanel(visitor).locator('.run-module-entry[data-module-id="draft"]').click();
  await expect(runPanel(visitor).locator('.comparison .variant')).toHaveCount(4);
  await expect(runPanel(visitor).locator('.comparison .variant.winner strong')).toHaveText(winner);
  expect(errors).toEqual([]);
});

/** The starter graph with its agent task turned into a coding module
 * configured as `config`, opened in the editor with its edit link. */
async function openCodingGraph(page, config) {
  const id = await act.newGraph(page);
  const document = await (await page.request.get(`/api/graphs/${id}`)).json();
  const module = document.modules.find((candidate) => candidate.id === 'm2');
  Object.assign(module, { kind: 'step.coding', label: 'Build', config });
  const created = await (await page.request.post('/api/graphs', { data: document })).json();
  await page.goto(created.edit_url);
  await expect(page.locator('.access-badge')).toHaveText('Editing');
}

test('a coding module\'s variants each show what they changed in the comparison', async ({ page }) => {
  test.setTimeout(90_000);
  const errors = watchErrors(page, { consoleErrors: false });
  await openCodingGraph(page, {
    instruction: 'write hello.txt: Hello from A',
    agents: [{ role: 'builder', re_prompts: [] }],
    variants: [
      { name: 'A' },
      { name: 'B', instruction_override: 'write hello.txt: Hello from B' },
    ],
  });
  await startRun(page, 'a greeting');
  const run = runPanel(page);
  await expect(run.locator('.run-status')).toHaveText('Completed', { timeout: 60_000 });
  await run.locator('.run-module-entry[data-module-id="m2"]').click();
  await expect(run.getByRole('tab', { name: 'Variants' })).toHaveAttribute('aria-selected', 'true');
  for (const name of ['A', 'B']) {
    const column = run.getByRole('listitem', { name: `Variant ${name}` });
    const changes = column.locator('details.variant-changes');
    await expect(changes.locator('summary')).toHaveText('Its changes (1 file)');
    await changes.locator('summary').click();
    await expect(changes.locator('.diff-added').filter({ hasText: `Hello from ${name}` })).toBeVisible();
    await expect(changes).not.toContainText(`Hello from ${name === 'A' ? 'B' : 'A'}`);
  }
  expect(errors).toEqual([]);
});

test('a coding variant\'s streaming turn is labelled with the variant\'s name', async ({ page }) => {
  test.setTimeout(60_000);
  await openCodingGraph(page, {
    instruction: 'sim: slow',
    agents: [{ role: 'builder', re_prompts: [] }],
    variants: [{ name: 'Careful' }, { name: 'Quick' }],
  });
  await startRun(page);
  const run = runPanel(page);
  await run.locator('.run-module-entry[data-module-id="m2"]').click();
  // Named as the module's variants are, not "Variant 1".
  await expect(run.getByRole('tab', { name: /^Careful · / }).first()).toBeVisible({ timeout: 20_000 });
  await expect(run.getByRole('tab', { name: /^Variant \d/ })).toHaveCount(0);
  await run.getByRole('button', { name: 'Cancel run' }).click();
  await expect(run.locator('.run-status')).toHaveText('Cancelled', { timeout: 20_000 });
});
