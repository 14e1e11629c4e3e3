// Agent tasks that call tools (PRODUCT §3.17), through the UI: choosing a
// server's tools in the detail panel (the name the model calls it, a locked
// argument, a re-prompt that may call none), then a run on a server whose
// operator configured an MCP server with a slow tool: the module's badge
// says which tool it is calling while it runs, and the run panel's
// transcript folds each call with its result, the same live and after a
// reload.
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, panel, runPanel, graphId } = find;
const { newGraph, ownServer } = act;
const { saved, watchErrors } = check;

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

test('tools are chosen in the panel: the name the model calls one, a locked argument, a re-prompt that calls none', async ({ page }) => {
  const errors = watchErrors(page);
  await newGraph(page);
  // The starter graph's agent task.
  await node(page, 'm2').click();
  const tools = panel(page).getByRole('region', { name: 'Tools' });
  await expect(tools).toBeVisible();
  // The built-in server's tools are offered, grouped by server.
  const add = tools.getByLabel('Add a tool');
  await expect(add.locator('optgroup[label="Patchbay tools (built in)"] option')).toHaveText(['calculate', 'clock', 'lookup']);
  await add.selectOption('patchbay/lookup');
  const lookup = tools.locator('.tool[data-tool="lookup"]');
  await expect(lookup.locator('.tool-title')).toHaveText('patchbay · lookup');
  await expect(lookup).toContainText('Look up an entry');
  // Once chosen, it is not offered again.
  await expect(add.locator('option[value="patchbay/lookup"]')).toHaveCount(0);
  // Typed key by key, as a person does: the field keeps its caret.
  await lookup.getByLabel('The model calls it').pressSequentially('policy');
  const policy = tools.locator('.tool[data-tool="policy"]');
  await policy.getByLabel('Lock an argument of policy').selectOption('key');
  await policy.getByLabel('key · locked').pressSequentially('refund-policy');
  await expect(policy.getByLabel('key · locked')).toBeFocused();
  // The first re-prompt may call none of the module's tools.
  const first = panel(page).locator('.reprompt').first();
  await first.locator('.reprompt-tools summary').click();
  await expect(first.locator('.reprompt-tools summary')).toHaveText("Tools: all the module's");
  await first.getByLabel('Every tool of the module').uncheck();
  await first.locator('.reprompt-tools').getByLabel('policy').uncheck();
  await expect(first.locator('.reprompt-tools summary')).toHaveText('Tools: none');
  await saved(page);
  const stored = await (await page.request.get(`/api/graphs/${graphId(page)}`)).json();
  const draft = stored.modules.find((module) => module.id === 'm2');
  expect(draft.config.tools).toEqual([{ server: 'patchbay', tool: 'lookup', as: 'policy', arguments: { key: 'refund-policy' } }]);
  expect(draft.config.re_prompts[0].allowed_tools).toEqual([]);
  expect(draft.config.re_prompts[1].allowed_tools).toBeUndefined();
  // A name two tools would share is a finding, in the Tools section.
  await add.selectOption('patchbay/calculate');
  await tools.locator('.tool[data-tool="calculate"]').getByLabel('The model calls it').fill('policy');
  await expect(tools.locator('.field-problems')).toContainText('policy');
  expect(errors).toEqual([]);
});

/** Input → an agent task whose second of three re-prompts calls the slow
 * server's `wait` → output. */
function slowGraph() {
  const module = (id, kind, label, x, config = {}) => ({ id, kind, label, position: { x, y: 160 }, config });
  const cable = (id, from, to) => ({ id, from: { module: from, port: 'data_out' }, to: { module: to, port: 'data_in' } });
  return {
    name: 'A slow tool',
    modules: [
      module('m1', 'step.input', 'Question', 40),
      module('m2', 'step.agent_task', 'Ask', 300, {
        instruction: 'Plan it.',
        agent_config: { provider: 'sim', model: 'sim-1' },
        re_prompts: ['Say what you will do.', 'Wait for it.\n[sim:tool wait {"seconds": 3}]', 'Shorter.'],
        tools: [{ server: 'slow', tool: 'wait' }],
      }),
      module('m3', 'step.output', 'Answer', 600),
    ],
    cables: [cable('c1', 'm1', 'm2'), cable('c2', 'm2', 'm3')],
  };
}

test('while a tool runs the badge names it, and the transcript folds each call with its result, live and after a reload', async ({ page }) => {
  const errors = watchErrors(page);
  // An operator's server with an MCP server of its own.
  const folder = mkdtempSync(join(tmpdir(), 'patchbay-tools-'));
  const config = join(folder, 'patchbay.toml');
  writeFileSync(config, [
    '[[mcp_servers]]',
    'id = "slow"',
    'name = "Slow tools"',
    'command = "node"',
    `args = [${JSON.stringify(join(fixtures, 'slow-tools.mjs'))}]`,
    `read_only = [${JSON.stringify(fixtures)}]`,
    'approval = "auto"',
    '',
  ].join('\n'));
  const server = await ownServer({ args: ['--config', config, '--sim-latency-ms', '20'] });
  try {
    const created = await (await page.request.post(`${server.base}/api/graphs`, { data: slowGraph() })).json();
    await page.goto(`${server.base}${created.edit_url}`);
    await expect(page.locator('.access-badge')).toHaveText('Editing');
    await page.locator('.pane').focus();
    await page.keyboard.press('Control+Enter');
    const dialog = page.getByRole('dialog', { name: 'Run the graph' });
    await dialog.getByLabel('Run input').fill('How long?');
    await dialog.getByLabel('Run input').press('Control+Enter');
    // The badge while the call runs.
    await expect(node(page, 'm2').locator('.run-badge')).toContainText('Re-prompt 2/3 · wait…', { timeout: 20_000 });
    // The transcript, live: the call is there, folded, still running.
    await node(page, 'm2').click();
    const run = runPanel(page);
    await run.getByRole('tab', { name: 'Transcript' }).click();
    const call = run.locator('.tool-exchange').first();
    await expect(call.locator('summary')).toContainText('wait {"seconds":3}');
    await expect(call.locator('summary')).toContainText('running');
    // Then its result, and the module goes on.
    await expect(call.locator('summary')).toContainText('✓', { timeout: 10_000 });
    await expect(run.locator('.run-status')).toHaveText('Completed', { timeout: 30_000 });
    // The run's figures count its tool calls, each tool's in the tooltip.
    await expect(run.locator('.run-tools')).toHaveText(/^1 tool call · 3\.\d s$/);
    await expect(run.locator('.run-tools')).toHaveAttribute('title', /^wait: 1 call, 3\.\d s$/);
    // A completed run shows its output; back to the agent task's transcript.
    const modules = run.getByRole('navigation', { name: 'Modules of the run' });
    await modules.getByRole('button', { name: /^Ask/ }).click();
    await run.getByRole('tab', { name: 'Transcript' }).click();
    await call.locator('summary').click();
    await expect(call.locator('pre')).toHaveText('Waited 3 s.');
    // After a reload: the same fold, from the record.
    await page.reload();
    await expect(run.locator('.run-status')).toHaveText('Completed', { timeout: 10_000 });
    await modules.getByRole('button', { name: /^Ask/ }).click();
    await run.getByRole('tab', { name: 'Transcript' }).click();
    const again = run.locator('.tool-exchange');
    await expect(again).toHaveCount(1);
    await expect(again.locator('summary')).toContainText('wait {"seconds":3}');
    await expect(again.locator('summary')).toContainText('✓');
    await again.locator('summary').click();
    await expect(again.locator('pre')).toHaveText('Waited 3 s.');
    // The turns around it are there too.
    await expect(run.locator('.transcript-entry[data-role="user"]')).toHaveCount(4);
  } finally {
    server.stop();
  }
  expect(errors).toEqual([]);
});

test('a call that needs a person waits: the panel says why, the badge names the tool, and the Decision tab approves it with an edited argument', async ({ page }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  const module = (id, kind, label, x, config = {}) => ({ id, kind, label, position: { x, y: 160 }, config });
  const cable = (id, from, to) => ({ id, from: { module: from, port: 'data_out' }, to: { module: to, port: 'data_in' } });
  const graph = {
    name: 'Ask before calculating',
    modules: [
      module('m1', 'step.input', 'Question', 40),
      module('m2', 'step.agent_task', 'Work it out', 300, {
        instruction: 'Work it out.\n[sim:tool calculate {"expression": "6*7"}]',
        agent_config: { provider: 'sim', model: 'sim-1' },
        tools: [{ server: 'patchbay', tool: 'calculate', approval: 'ask' }],
      }),
      module('m3', 'step.output', 'Answer', 600),
    ],
    cables: [cable('c1', 'm1', 'm2'), cable('c2', 'm2', 'm3')],
  };
  const created = await (await page.request.post('/api/graphs', { data: graph })).json();
  await page.goto(created.edit_url);
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  // The panel says, per tool, whether its calls will wait, and why.
  await node(page, 'm2').click();
  const tool = panel(page).locator('.tool[data-tool="calculate"]');
  await expect(tool.locator('.tool-approval-verdict')).toHaveText('Calls wait for you: this module asks');
  await expect(tool.getByLabel('When calls of calculate wait for a person')).toHaveValue('ask');
  // Run it.
  await page.locator('.pane').focus();
  await page.keyboard.press('Control+Enter');
  const dialog = page.getByRole('dialog', { name: 'Run the graph' });
  await dialog.getByLabel('Run input').fill('What is six sevens?');
  await dialog.getByLabel('Run input').press('Control+Enter');
  await expect(node(page, 'm2').locator('.run-badge')).toContainText('Waiting for you · calculate', { timeout: 20_000 });
  const run = runPanel(page);
  await expect(run.locator('.run-status')).toHaveText('Waiting for a person');
  await expect(run.getByRole('tab', { name: 'Decision' })).toHaveAttribute('aria-selected', 'true');
  const card = run.locator('.call-decision');
  await expect(card.locator('.call-decision-tool')).toHaveText('calculate · patchbay');
  await expect(card.locator('.call-decision-reason')).toHaveText('Calls wait for you: this module asks');
  const expression = card.getByLabel('expression · string');
  await expect(expression).toHaveValue('6*7');
  await page.screenshot({ path: test.info().outputPath('call-waiting.png') });
  // Edited, then approved from the keyboard.
  await expression.fill('6*8');
  await card.getByRole('button', { name: 'Approve' }).focus();
  await page.keyboard.press('Enter');
  await expect(run.locator('.run-status')).toHaveText('Completed', { timeout: 20_000 });
  const modules = run.getByRole('navigation', { name: 'Modules of the run' });
  await modules.getByRole('button', { name: /^Work it out/ }).click();
  await run.getByRole('tab', { name: 'Decision' }).click();
  await expect(run.locator('.call-decision .decision-outcome')).toHaveText('Approved by the editor, with the arguments edited');
  await run.getByRole('tab', { name: 'Transcript' }).click();
  const call = run.locator('.tool-exchange').first();
  await expect(call.locator('summary')).toContainText('✓');
  await call.locator('summary').click();
  await expect(call.locator('pre')).toContainText('48');
  expect(errors).toEqual([]);
});

test('an approver link in a second browser rejects a waiting call with a reason, and the model is told', async ({ page, browser }) => {
  test.setTimeout(90_000);
  const errors = watchErrors(page);
  const module = (id, kind, label, x, config = {}) => ({ id, kind, label, position: { x, y: 160 }, config });
  const cable = (id, from, to) => ({ id, from: { module: from, port: 'data_out' }, to: { module: to, port: 'data_in' } });
  const graph = {
    name: 'Ask before looking up',
    modules: [
      module('m1', 'step.input', 'Question', 40),
      module('m2', 'step.agent_task', 'Look it up', 300, {
        instruction: 'Look it up.\n[sim:tool lookup {"key": "tides"}]',
        agent_config: { provider: 'sim', model: 'sim-1' },
        tools: [{ server: 'patchbay', tool: 'lookup', approval: 'ask' }],
      }),
      module('m3', 'step.output', 'Answer', 600),
    ],
    cables: [cable('c1', 'm1', 'm2'), cable('c2', 'm2', 'm3')],
  };
  const created = await (await page.request.post('/api/graphs', { data: graph })).json();
  await page.goto(created.edit_url);
  await page.locator('.pane').focus();
  await page.keyboard.press('Control+Enter');
  const dialog = page.getByRole('dialog', { name: 'Run the graph' });
  await dialog.getByLabel('Run input').fill('When is high tide?');
  await dialog.getByLabel('Run input').press('Control+Enter');
  await expect(node(page, 'm2').locator('.run-badge')).toContainText('Waiting for you · lookup', { timeout: 20_000 });
  const run = runPanel(page);
  // The editor hands the decision to someone else.
  await run.getByRole('button', { name: 'Make an approver link' }).click();
  const linkField = run.getByRole('textbox', { name: 'Approver link' });
  await expect(linkField).toHaveValue(/#approve=/);
  const link = await linkField.inputValue();

  const approverContext = await browser.newContext();
  const approver = await approverContext.newPage();
  const approverErrors = watchErrors(approver);
  await approver.goto(link);
  await expect(approver.locator('.access-badge')).toHaveText('Approver link');
  const card = runPanel(approver).locator('.call-decision');
  await expect(card.locator('.call-decision-tool')).toHaveText('lookup · patchbay');
  await expect(card.getByLabel('key · string')).toHaveValue('tides');
  // Only the decision: no run, save or link controls.
  await expect(approver.locator('.run-button')).toHaveCount(0);
  await expect(approver.getByRole('button', { name: 'Make an approver link' })).toHaveCount(0);
  await card.getByLabel(/Reason/).fill('Ask the harbour master instead.');
  await card.getByRole('button', { name: 'Reject' }).click();
  await expect(runPanel(approver).locator('.run-status')).toHaveText('Completed', { timeout: 20_000 });
  await approverContext.close();

  // The editor's page: the run went on, and the model was told why.
  await expect(run.locator('.run-status')).toHaveText('Completed', { timeout: 20_000 });
  const modules = run.getByRole('navigation', { name: 'Modules of the run' });
  await modules.getByRole('button', { name: /^Look it up/ }).click();
  await run.getByRole('tab', { name: 'Decision' }).click();
  await expect(run.locator('.call-decision .decision-outcome')).toHaveText('Rejected by an approver link: Ask the harbour master instead.');
  await run.getByRole('tab', { name: 'Transcript' }).click();
  const call = run.locator('.tool-exchange').first();
  await expect(call.locator('summary')).toContainText('declined');
  await call.locator('summary').click();
  await expect(call.locator('pre')).toHaveText('A person declined this call. Their reason: Ask the harbour master instead.');
  expect(errors).toEqual([]);
  expect(approverErrors).toEqual([]);
});
