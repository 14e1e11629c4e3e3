// Runs on the canvas, through the UI only, against the real server with the
// simulated provider slowed (scripts/e2e: 40 ms a word) so every step shows:
// the Re-prompt i/N… badge, streamed text, the merged output with its
// separators and one tab per response, cancel, a reload in the middle of a
// run, the run history, and a coding module run by the simulated ACP agent.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, runPanel } = find;
const { newGraph } = act;
const { watchErrors } = check;

const badge = (page, id) => node(page, id).locator('.run-badge');

/** Opens the run dialog with the shortcut and starts a run. */
async function startRun(page, text) {
  await page.locator('.pane').focus();
  await page.keyboard.press('Control+Enter');
  const dialog = page.getByRole('dialog', { name: 'Run the graph' });
  await expect(dialog).toBeVisible();
  await dialog.getByLabel('Run input').fill(text);
  await dialog.getByLabel('Run input').press('Control+Enter');
  await expect(dialog).toBeHidden();
}

test('a run shows Re-prompt 1/2…, then 2/2…, then done, streaming, with the merged output and every response', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  await newGraph(page);
  await startRun(page, 'Why tide tables matter');

  // The address names the run (a reload follows it again).
  await expect(page).toHaveURL(/\?run=r_/);
  await expect(badge(page, 'm2')).toContainText('Re-prompt 1/2…');
  await expect(node(page, 'm2')).toHaveClass(/run-running/);
  await expect(badge(page, 'm3')).toHaveText('not reached');
  await expect(page.locator('.run-button')).toBeDisabled();

  // The panel follows the running module and streams its current response.
  const panel = runPanel(page);
  await expect(badge(page, 'm2')).toContainText('Re-prompt 2/2…');
  await expect(panel.getByRole('tab', { name: 'Re-prompt 2' })).toHaveAttribute('aria-selected', 'true');
  await expect(panel.locator('.run-output')).not.toBeEmpty();

  await expect(badge(page, 'm2')).toContainText('✓');
  await expect(badge(page, 'm2')).toContainText('tok');
  // The simulated provider is free, and says so.
  await expect(badge(page, 'm2')).toContainText('· free');
  await expect(badge(page, 'm3')).toContainText('✓');
  await expect(node(page, 'm2')).toHaveClass(/run-done/);
  await expect(panel.locator('.run-status')).toHaveText('Completed');
  await expect(page.locator('.run-button')).toBeEnabled();
  await expect(panel.locator('.run-cost')).toHaveText('free (simulated)');

  // The merged output, with its separators, then each response on its own.
  await panel.locator('.run-module-entry[data-module-id="m2"]').click();
  await panel.getByRole('tab', { name: 'Merged' }).click();
  const output = panel.locator('.run-output');
  await expect(output).toContainText('───── Re-prompt 1 ─────');
  await expect(output).toContainText('───── Re-prompt 2 ─────');
  const merged = await output.textContent();
  const responses = [];
  for (const name of ['Original', 'Re-prompt 1', 'Re-prompt 2']) {
    await panel.getByRole('tab', { name, exact: true }).click();
    await expect(panel.getByRole('tab', { name, exact: true })).toHaveAttribute('aria-selected', 'true');
    const text = await output.textContent();
    expect(text.length).toBeGreaterThan(20);
    expect(text).not.toContain('─────');
    responses.push(text);
  }
  expect(merged).toBe(`${responses[0]}\n───── Re-prompt 1 ─────\n${responses[1]}\n───── Re-prompt 2 ─────\n${responses[2]}`);
  await panel.getByRole('tab', { name: 'Receipt' }).click();
  await expect(output).toContainText('(simulated)');
  await expect(output).toContainText('Cost: free (simulated)');
  await expect(output).toContainText('Re-prompts: 2');
  await panel.getByRole('tab', { name: 'Transcript' }).click();
  await expect(output).toContainText('Review your work above. What did you miss?');

  // The output module holds the result.
  await panel.locator('.run-module-entry[data-module-id="m3"]').click();
  await expect(output).toHaveText(merged);

  // The history lists the run; the panel closes back to plain editing.
  await panel.getByRole('button', { name: 'History' }).click();
  await expect(panel.locator('.history-run')).toHaveCount(1);
  await expect(panel.locator('.history-run .history-status')).toHaveText('Completed');
  await panel.getByRole('button', { name: 'Close the run panel' }).click();
  await expect(panel).toBeHidden();
  await expect(page.locator('.run-badge')).toHaveCount(0);
  await expect(page).not.toHaveURL(/\?run=/);

  // Opening the past run from the history shows the canvas in its end state.
  await page.getByRole('button', { name: 'Runs', exact: true }).click();
  await runPanel(page).locator('.history-open').click();
  await expect(badge(page, 'm3')).toContainText('✓');
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed');
  await expect(runPanel(page).locator('.run-output')).toHaveText(merged);
  expect(errors).toEqual([]);
});

test('a file attached to the instruction (📎) is kept and goes with the first turn only', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  const details = find.panel(page);
  const clip = details.getByLabel('Attach files to the first prompt');
  await clip.setInputFiles({ name: 'brief.md', mimeType: 'text/markdown', buffer: Buffer.from('Audience: harbour pilots.') });
  const chips = details.locator('.attachments:has(input[aria-label="Attach files to the first prompt"]) .attachment-chip');
  await expect(chips).toContainText('brief.md');
  await expect(details.locator('.reprompt .attachment-chip')).toHaveCount(0);
  await check.saved(page);
  await page.reload();
  await node(page, 'm2').locator('.module-header').click();
  await expect(chips).toContainText('brief.md');

  await startRun(page, 'Why tide tables matter');
  await expect(badge(page, 'm2')).toContainText('✓', { timeout: 30_000 });
  const panel = runPanel(page);
  await panel.locator('.run-module-entry[data-module-id="m2"]').click();
  await panel.getByRole('tab', { name: 'Transcript' }).click();
  const turns = panel.locator('.run-output');
  await expect(turns).toContainText('Attached file `brief.md`');
  await expect(turns).toContainText('Audience: harbour pilots.');
  // Once: with the instruction, not again with each re-prompt.
  expect((await turns.textContent()).split('Audience: harbour pilots.').length - 1).toBe(1);
  expect(errors).toEqual([]);
});

test('cancel stops a run: the running module shows cancelled, what never started shows nothing', async ({ page }) => {
  await newGraph(page);
  await page.locator('.run-button').click();
  const dialog = page.getByRole('dialog', { name: 'Run the graph' });
  await dialog.getByRole('button', { name: /Start run/ }).click();
  await expect(badge(page, 'm2')).toContainText('Re-prompt 1/2…');
  await runPanel(page).getByRole('button', { name: 'Cancel run' }).click();
  await expect(runPanel(page).locator('.run-status')).toHaveText('Cancelled');
  // What it spent before it stopped still shows.
  await expect(badge(page, 'm2')).toHaveText(/^■ cancelled · \d+ tok · free$/);
  await expect(node(page, 'm2')).toHaveClass(/run-cancelled/);
  await expect(badge(page, 'm3')).toHaveCount(0);
  await expect(badge(page, 'm1')).toContainText('✓');
  await expect(runPanel(page).getByRole('button', { name: 'Cancel run' })).toBeHidden();
  await expect(page.locator('.run-button')).toBeEnabled();
});

/** A starter graph whose agent writes four times longer replies (`sim-long`),
 * so a run lasts long enough to reload in the middle of it. */
async function graphWithLongReplies(page) {
  const id = await newGraph(page);
  const document = await (await page.request.get(`/api/graphs/${id}`)).json();
  document.modules.find((module) => module.id === 'm2').config.agent_config.model = 'sim-long';
  const created = await (await page.request.post('/api/graphs', { data: document })).json();
  await page.goto(created.edit_url);
  await expect(page.locator('.access-badge')).toHaveText('Editing');
}

test('a reload in the middle of a run catches up and follows it to the end', async ({ page }) => {
  test.setTimeout(60_000);
  await graphWithLongReplies(page);
  await startRun(page, 'Reload me');
  await expect(badge(page, 'm2')).toContainText('Re-prompt 1/2…');
  const address = page.url();
  await page.reload();
  expect(page.url()).toBe(address);
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  // Caught up from the event log, then live to the end.
  await expect(runPanel(page).locator('.run-status')).toHaveText('Running');
  await expect(badge(page, 'm1')).toContainText('✓');
  await expect(badge(page, 'm2')).toContainText('Re-prompt 1/2…');
  await expect(badge(page, 'm2')).toContainText('Re-prompt 2/2…', { timeout: 15_000 });
  await expect(badge(page, 'm3')).toContainText('✓', { timeout: 30_000 });
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed');
  const output = runPanel(page).locator('.run-output');
  await expect(output).toContainText('───── Re-prompt 2 ─────');
});

test('a coding module runs on the canvas: its agent on the badge, every turn, the diff and the files', async ({ page }) => {
  // The starter graph with its agent task turned into a coding module run by
  // the built-in simulated ACP agent (paced like the simulated provider).
  const id = await newGraph(page);
  const document = await (await page.request.get(`/api/graphs/${id}`)).json();
  const module = document.modules.find((candidate) => candidate.id === 'm2');
  module.kind = 'step.coding';
  module.label = 'Build';
  module.config = {
    instruction: 'write hello.txt: Hello from the canvas',
    agents: [{ role: 'builder', re_prompts: ['Now look over your work.'] }],
  };
  const created = await (await page.request.post('/api/graphs', { data: document })).json();
  await page.goto(created.edit_url);
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await expect(node(page, 'm2')).toContainText('Build');

  await startRun(page, 'a greeting');
  await expect(badge(page, 'm2')).toContainText('builder · Re-prompt 1/1…');
  await expect(badge(page, 'm2')).toContainText('✓');
  await expect(badge(page, 'm3')).toContainText('✓');
  const panel = runPanel(page);
  await expect(panel.locator('.run-status')).toHaveText('Completed');

  await panel.locator('.run-module-entry[data-module-id="m2"]').click();
  const output = panel.locator('.run-output');
  await panel.getByRole('tab', { name: 'Merged' }).click();
  await expect(output).toContainText('═══ builder: Simulated agent ═══');
  await panel.getByRole('tab', { name: 'builder · Original' }).click();
  await expect(output).toContainText('I wrote hello.txt.');
  await panel.getByRole('tab', { name: 'builder · Re-prompt 1' }).click();
  await expect(output).toContainText('Simulated agent, turn 2.');
  await panel.getByRole('tab', { name: 'Diff' }).click();
  await expect(output).toContainText('+Hello from the canvas');
  await panel.getByRole('tab', { name: 'Files' }).click();
  await expect(output).toContainText(/added\s+hello\.txt/);
  await panel.getByRole('tab', { name: 'Receipt' }).click();
  await expect(output).toContainText('acp:sim-agent');
  await expect(output).toContainText('(simulated)');
});

test('the run dialog estimates from past runs and refuses a budget that is not an amount', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  await newGraph(page);
  const open = async () => {
    await page.locator('.pane').focus();
    await page.keyboard.press('Control+Enter');
    const dialog = page.getByRole('dialog', { name: 'Run the graph' });
    await expect(dialog).toBeVisible();
    return dialog;
  };
  let dialog = await open();
  await expect(dialog.locator('.estimate')).toHaveText('No estimate yet: this graph has no finished run to go by.');
  const budget = dialog.getByLabel('Budget in US dollars');
  await budget.fill('-1');
  await expect(dialog.getByRole('alert')).toHaveText('A budget is an amount of US dollars more than 0, like 0.50.');
  await dialog.getByLabel('Run input').press('Control+Enter');
  await expect(dialog).toBeVisible();
  // A budget the simulated provider never reaches: it is free.
  await budget.fill('0.01');
  await expect(dialog.getByRole('alert')).toHaveText('');
  await dialog.getByLabel('Run input').fill('tides');
  await dialog.getByLabel('Run input').press('Control+Enter');
  await expect(dialog).toBeHidden();
  const panel = runPanel(page);
  await expect(panel.locator('.run-status')).toHaveText('Completed', { timeout: 30_000 });
  await expect(panel.getByText('budget $0.0100')).toBeVisible();
  dialog = await open();
  await expect(dialog.locator('.estimate')).toHaveText('Estimated cost: about $0 (its last run).');
  expect(errors).toEqual([]);
});

test('a coding agent set in its card to continue the upstream session takes it up, and the card says when it cannot', async ({ page }) => {
  const id = await newGraph(page);
  const document = await (await page.request.get(`/api/graphs/${id}`)).json();
  const build = document.modules.find((candidate) => candidate.id === 'm2');
  build.kind = 'step.coding';
  build.label = 'Build';
  build.config = { instruction: 'write plan.txt: the plan', agents: [{ role: 'builder' }] };
  const output = document.modules.find((candidate) => candidate.id === 'm3');
  document.modules.push({
    id: 'm4', kind: 'step.coding', label: 'Fix', position: { x: output.position.x, y: output.position.y },
    config: { instruction: 'Fix what is left.', agents: [{ role: 'fixer' }] },
  });
  output.position.x += 320;
  document.cables = [
    { id: 'c1', from: { module: 'm1', port: 'data_out' }, to: { module: 'm2', port: 'data_in' } },
    { id: 'c2', from: { module: 'm2', port: 'data_out' }, to: { module: 'm4', port: 'data_in' } },
    { id: 'c3', from: { module: 'm4', port: 'data_out' }, to: { module: 'm3', port: 'data_in' } },
  ];
  const created = await (await page.request.post('/api/graphs', { data: document })).json();
  await page.goto(created.edit_url);
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await node(page, 'm4').locator('.module-header').click();
  const card = find.panel(page).locator('.agent-card').first();
  await card.getByLabel(/^Session/).selectOption('continue');
  await expect(card.getByRole('alert')).toHaveCount(0);
  await check.saved(page);

  await startRun(page, 'plans');
  await expect(badge(page, 'm4')).toContainText('✓');
  const panel = runPanel(page);
  await panel.locator('.run-module-entry[data-module-id="m4"]').click();
  await panel.getByRole('tab', { name: 'fixer · Original' }).click();
  // The builder's one turn, then the fixer's, in one conversation.
  await expect(panel.locator('.run-output')).toContainText('Simulated agent, turn 2.');
  await expect(panel.locator('.run-output')).toContainText(': 1 earlier turns; first asked:');

  // Build's agents in parallel hand on no session: the fixer's card says so.
  await node(page, 'm2').locator('.module-header').click();
  await find.panel(page).getByLabel(/^Coordination/).selectOption('parallel');
  await node(page, 'm4').locator('.module-header').click();
  await expect(card.getByRole('alert')).toContainText('"Build" runs its agents in parallel, which hands on no session');
  await expect(card.getByRole('alert')).toContainText('it starts a new session');
});

test('a coding agent\'s model and mode, set in its card, reach its ACP session', async ({ page }) => {
  const id = await newGraph(page);
  const document = await (await page.request.get(`/api/graphs/${id}`)).json();
  const module = document.modules.find((candidate) => candidate.id === 'm2');
  module.kind = 'step.coding';
  module.label = 'Build';
  module.config = { instruction: 'write notes.txt: notes', agents: [{ role: 'builder' }] };
  const created = await (await page.request.post('/api/graphs', { data: document })).json();
  await page.goto(created.edit_url);
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await node(page, 'm2').locator('.module-header').click();
  const card = find.panel(page).locator('.agent-card').first();
  await card.getByLabel('Model', { exact: true }).fill('sim-careful');
  // The Mode menu offers what the operator allows for the agent, no more.
  expect(await card.getByLabel(/^Mode(?!l)/).locator('option').allTextContents()).toEqual(["The agent's own", 'code', 'ask']);
  await card.getByLabel(/^Mode(?!l)/).selectOption('ask');
  await check.saved(page);

  await startRun(page, 'notes');
  await expect(badge(page, 'm2')).toContainText('✓');
  const panel = runPanel(page);
  await panel.locator('.run-module-entry[data-module-id="m2"]').click();
  await panel.getByRole('tab', { name: 'builder · Original' }).click();
  await expect(panel.locator('.run-output')).toContainText('(Chosen for this session: mode ask, model sim-careful.)');

  // Once the agent has run here, its card says what it offers, and what it
  // does not before a run finds out.
  await node(page, 'm2').locator('.module-header').click();
  await expect(card).toContainText('This agent offers the models sim-standard, sim-careful, and can continue a session.');
  await expect(card.getByRole('alert')).toHaveCount(0);
  await card.getByLabel('Model', { exact: true }).fill('gpt-9');
  await expect(card.getByRole('alert')).toContainText('This agent has no model "gpt-9" (it offers sim-standard, sim-careful): the module would fail.');
  await check.saved(page);
  await startRun(page, 'notes');
  await expect(badge(page, 'm2')).toContainText('✕');
  await panel.locator('.run-module-entry[data-module-id="m2"]').click();
  await expect(panel).toContainText('it offers "sim-standard", "sim-careful"');
});
