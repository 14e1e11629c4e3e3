// The canvas never says one thing while the graph does another (issue 12):
// cables follow their re-prompt or named output, port labels are redrawn
// from ports() on every change, an output module shows every input, focus
// follows what the person clicked or added, a save seen live moves the boxes
// with their cables, output dots sit on the module's edge, attachments that
// cannot be sent are refused when attached, labels fit and differ, icons
// render without an emoji font, and messages use the person's words.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { panel, node, port, runPanel, centre } = find;
const { newGraph, wire, drag } = act;
const { saved, findings, findingCodes } = check;

async function savedDocument(page, id) {
  await saved(page);
  return (await page.request.get(`/api/graphs/${id}`)).json();
}

/** An agent task (m4) with these re-prompts and separate outputs on. */
async function taskWithReprompts(page, texts) {
  await page.locator('.palette-item[data-kind="step.agent_task"]').click();
  await expect(node(page, 'm4')).toBeVisible();
  await panel(page).getByLabel('Instruction').fill('Write the plan.');
  const add = panel(page).getByRole('button', { name: '+ Add Re-Prompt' });
  for (const [index, text] of texts.entries()) {
    await add.click();
    await panel(page).getByLabel(`Re-prompt ${index + 1}`, { exact: true }).fill(text);
  }
  await panel(page).getByLabel('Send responses to separate outputs').check();
}

/** Adds an output module (the next id) below the others and returns its id. */
async function outputModule(page, id, dy) {
  await page.locator('.palette-item[data-kind="step.output"]').click();
  await expect(node(page, id)).toBeVisible();
  await drag(page, id, 0, dy);
  return id;
}

test('a cable follows its re-prompt when the list is renumbered or reordered, and dangles when its re-prompt is removed', async ({ page }) => {
  const id = await newGraph(page);
  await taskWithReprompts(page, ['AAA', 'BBB', 'CCC']);
  await outputModule(page, 'm5', 260);
  await wire(page, ['m4', 'reprompt_1_out'], ['m5', 'data_in']);
  const fromAaa = page.locator('[data-edge-id="c3"]');
  await expect(fromAaa).not.toHaveClass(/dangling/);

  // ✕ on AAA: the cable must not silently carry BBB's reply.
  await node(page, 'm4').locator('.module-header').click();
  await panel(page).getByRole('button', { name: 'Remove re-prompt 1' }).click();
  await expect(fromAaa).toHaveClass(/dangling/);
  // Validation runs 120 ms after an edit; the dangling class is drawn at once.
  await expect.poll(() => findingCodes(page)).toContain('validation.dangling_cable');
  let document = await savedDocument(page, id);
  expect(document.cables.find((cable) => cable.id === 'c3').from.port).not.toBe('reprompt_1_out');

  // Undo puts the re-prompt and the cable back in one step.
  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await page.keyboard.press('Control+z');
  await expect(fromAaa).not.toHaveClass(/dangling/);
  document = await savedDocument(page, id);
  expect(document.cables.find((cable) => cable.id === 'c3').from.port).toBe('reprompt_1_out');

  // Reordering: a cable from BBB follows BBB to the first place, AAA's to the second.
  await page.locator('.palette-item[data-kind="step.output"]').click();
  await expect(node(page, 'm6')).toBeVisible();
  // Wired from the keyboard: the output popup, then the target list.
  await node(page, 'm4').locator('.module-header').click();
  await page.keyboard.press('o');
  await page.getByRole('dialog', { name: 'Outputs of Agent task' }).locator('[data-port-id="reprompt_2_out"]').press('Enter');
  await page.getByRole('dialog', { name: 'Connect to' }).getByRole('button', { name: 'Output 2 · Results' }).press('Enter');
  await expect(page.locator('[data-edge-id="c4"]')).toHaveCount(1);
  await node(page, 'm4').locator('.module-header').click();
  await panel(page).getByLabel('Re-prompt 2', { exact: true }).press('Alt+ArrowUp');
  document = await savedDocument(page, id);
  expect(document.cables.find((cable) => cable.id === 'c4').from.port).toBe('reprompt_1_out');
  expect(document.cables.find((cable) => cable.id === 'c3').from.port).toBe('reprompt_2_out');
  await expect(page.locator('[data-edge-id="c3"]')).not.toHaveClass(/dangling/);
  await expect(page.locator('[data-edge-id="c4"]')).not.toHaveClass(/dangling/);
});

test('a cable follows its named output when it is renamed, and dangles when it is removed', async ({ page }) => {
  const id = await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  await panel(page).getByRole('button', { name: '+ Add named output' }).click();
  await panel(page).getByLabel('Named output 1', { exact: true }).fill('Summary');
  await outputModule(page, 'm4', 260);
  await wire(page, ['m2', 'named:Summary'], ['m4', 'data_in']);
  const cable = page.locator('[data-edge-id="c3"]');
  await expect(cable).not.toHaveClass(/dangling/);
  await node(page, 'm2').locator('.module-header').click();
  await panel(page).getByLabel('Named output 1', { exact: true }).fill('Digest');
  await expect(cable).not.toHaveClass(/dangling/);
  let document = await savedDocument(page, id);
  expect(document.cables.find((cable) => cable.id === 'c3').from.port).toBe('named:Digest');
  await panel(page).getByRole('button', { name: 'Remove named output 1' }).click();
  await expect(cable).toHaveClass(/dangling/);
  // A new output of the old name does not pick the cable up again.
  await panel(page).getByRole('button', { name: '+ Add named output' }).click();
  await panel(page).getByLabel('Named output 1', { exact: true }).fill('Digest');
  await expect(cable).toHaveClass(/dangling/);
  document = await savedDocument(page, id);
  expect(document.cables.find((cable) => cable.id === 'c3').from.port).not.toBe('named:Digest');
});

test('port labels are redrawn from ports() on every change', async ({ page }) => {
  await newGraph(page);
  await taskWithReprompts(page, ['AAA', 'BBB', 'CCC']);
  const first = port(page, 'm4', 'reprompt_1_out');
  await expect(first).toContainText('"AAA"');
  await panel(page).getByRole('button', { name: 'Remove re-prompt 1' }).click();
  await expect(first).toContainText('"BBB"');
  await expect(port(page, 'm4', 'reprompt_2_out')).toContainText('"CCC"');
  await expect(port(page, 'm4', 'reprompt_3_out')).toHaveCount(0);
  await panel(page).getByLabel('Re-prompt 2', { exact: true }).press('Alt+ArrowUp');
  await expect(first).toContainText('"CCC"');
  await panel(page).getByLabel('Re-prompt 1', { exact: true }).fill('Tighten it');
  await expect(first).toContainText('"Tighten it"');
  await expect(first).toHaveAttribute('data-label', '📄 "Tighten it"');
});

test('an output module with several incoming cables shows every input, labelled by where it came from', async ({ page, browser }) => {
  await newGraph(page);
  // The topic goes straight to the output as well as through the draft.
  await wire(page, ['m1', 'data_out'], ['m3', 'data_in']);
  await expect(page.locator('[data-edge-id]')).toHaveCount(3);
  await page.locator('.run-button').click();
  const dialog = page.getByRole('dialog', { name: 'Run the graph' });
  await dialog.getByLabel('Run input').fill('Tide tables');
  await dialog.getByRole('button', { name: /Start run/ }).click();
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 30_000 });
  await runPanel(page).locator('.run-module-entry[data-module-id="m3"]').click();
  const output = runPanel(page).locator('.run-output');
  await expect(output).toContainText('From “Draft”');
  await expect(output).toContainText('From “Topic”');
  await expect(output).toContainText('Tide tables');
  await expect(output).toContainText('Simulated reply');
  // The run's own page shows the same.
  const link = await runPanel(page).getByRole('link', { name: 'Run link' }).getAttribute('href');
  const visitor = await (await browser.newContext()).newPage();
  await visitor.goto(link);
  await runPanel(visitor).locator('.run-module-entry[data-module-id="m3"]').click();
  await expect(runPanel(visitor).locator('.run-output')).toContainText('From “Topic”');
  await expect(runPanel(visitor).locator('.run-output')).toContainText('From “Draft”');
});

test('focus follows the click: a canvas shortcut after clicking a module acts on the canvas, not on a text field', async ({ page }) => {
  await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  await panel(page).getByLabel('Label').click();
  await node(page, 'm3').locator('.module-header').click();
  await page.keyboard.press('Backspace');
  await expect(node(page, 'm3')).toHaveCount(0);
  await expect(node(page, 'm2')).toContainText('Draft');
  await node(page, 'm2').locator('.module-header').click();
  await expect(panel(page).getByLabel('Label')).toHaveValue('Draft');
});

test('focus follows what was added: after / , a search and Enter, canvas keys act on the new module', async ({ page }) => {
  await newGraph(page);
  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await page.keyboard.press('/');
  await expect(page.getByLabel('Search module kinds')).toBeFocused();
  await page.keyboard.type('judge');
  await page.keyboard.press('Enter');
  await expect(page.locator('[data-node-id]')).toHaveCount(4);
  await expect(node(page, 'm4')).toHaveClass(/selected/);
  await expect(page.getByLabel('Search module kinds')).not.toBeFocused();
  await page.keyboard.press('Delete');
  await expect(page.locator('[data-node-id]')).toHaveCount(3);
  await page.keyboard.press(']');
  await expect(node(page, 'm1')).toHaveClass(/selected/);
  await page.keyboard.press('Escape');
  await expect(node(page, 'm1')).not.toHaveClass(/selected/);
});

test('a save through the API that moves a module moves its box with its cables in the open editor', async ({ page }) => {
  const id = await newGraph(page);
  const before = await node(page, 'm2').boundingBox();
  await page.evaluate(async (graphId) => {
    const token = localStorage.getItem(`patchbay.edit.${graphId}`);
    const document = await (await fetch(`/api/graphs/${graphId}`)).json();
    document.name = 'Their version';
    document.modules.find((module) => module.id === 'm2').position.y += 200;
    await fetch(`/api/graphs/${graphId}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, 'If-Match': '1' },
      body: JSON.stringify(document),
    });
  }, id);
  await expect(page.getByLabel('Graph name')).toHaveValue('Their version');
  await expect.poll(async () => Math.round((await node(page, 'm2').boundingBox()).y - before.y)).toBe(200);
  // The cable into the draft ends at the draft's input dot.
  const dot = await centre(port(page, 'm2', 'data_in').locator('.port-dot'));
  const end = await page.locator('[data-edge-id="c1"] path').first().evaluate((path) => {
    const length = path.getTotalLength();
    const point = path.getPointAtLength(length);
    const matrix = path.getScreenCTM();
    return { x: point.x * matrix.a + matrix.e, y: point.y * matrix.d + matrix.f };
  });
  expect(Math.abs(end.y - dot.y)).toBeLessThan(4);
  expect(Math.abs(end.x - dot.x)).toBeLessThan(8);
});

test('output port dots sit on the module edge, right of their labels, in one column', async ({ page }) => {
  await newGraph(page);
  const module = await node(page, 'm2').boundingBox();
  const dots = await node(page, 'm2').locator('.port-out .port-dot').evaluateAll((items) => items.map((item) => item.getBoundingClientRect().toJSON()));
  const labels = await node(page, 'm2').locator('.port-out .port-label').evaluateAll((items) => items.map((item) => item.getBoundingClientRect().toJSON()));
  expect(dots.length).toBeGreaterThan(2);
  for (const [index, dot] of dots.entries()) {
    expect(Math.abs(dot.x + dot.width / 2 - (module.x + module.width))).toBeLessThan(3);
    expect(dot.x).toBeGreaterThan(labels[index].x + labels[index].width - 1);
  }
});

test('a file that cannot be sent to a model is refused when attached, and validation reports one that arrived another way', async ({ page }) => {
  const id = await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  const first = panel(page).locator('.reprompt').nth(0);
  await first.locator('input[type="file"]').setInputFiles({ name: 'model.bin', mimeType: 'application/octet-stream', buffer: Buffer.from([0, 159, 146, 150, 255, 0, 1, 2]) });
  await expect(page.getByRole('status').filter({ hasText: 'model.bin' })).toContainText(/cannot be sent to a model.*text files/);
  await expect(first.locator('.attachment-chip')).toHaveCount(0);
  // A text file is fine.
  await first.locator('input[type="file"]').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('Short sentences.') });
  await expect(first.locator('.attachment-chip')).toContainText('notes.txt');
  // A document that names an unsendable attachment (written elsewhere) is reported.
  await saved(page);
  const reply = await page.request.post('/api/validate', {
    data: {
      ...(await (await page.request.get(`/api/graphs/${id}`)).json()),
      modules: (await (await page.request.get(`/api/graphs/${id}`)).json()).modules.map((module) => (module.id === 'm2'
        ? { ...module, config: { ...module.config, re_prompts: [{ text: 'Use this', attachments: [{ id: 'a_AAAAAAAAAAAAAAAAAAAAAAAA', name: 'archive.zip', media_type: 'application/zip', size_bytes: 10 }] }] } }
        : module)),
    },
  });
  const checked = await reply.json();
  expect(checked.findings.map((finding) => finding.code)).toContain('validation.attachment_unsupported');
});

test('port labels fit and differ: a module grows to show them, with the full text in a tooltip', async ({ page }) => {
  await newGraph(page);
  const names = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
  await taskWithReprompts(page, names.map((name) => `Follow-up number ${name}`));
  const labels = await node(page, 'm4').locator('.port-out .port-label').allTextContents();
  expect(labels.length).toBeGreaterThan(9);
  expect(new Set(labels).size).toBe(labels.length);
  for (const label of labels) expect(label).not.toContain('…');
  const inputs = await node(page, 'm4').locator('.port-in .port-label').allTextContents();
  expect(inputs).toContain('Context');
  expect(inputs).toContain('Instruction');
  await expect(port(page, 'm4', 'reprompt_9_out')).toHaveAttribute('title', /Follow-up number nine/);
  expect((await node(page, 'm4').boundingBox()).width).toBeGreaterThan(182);
  // The benchmark page keeps the contract's size.
  await page.goto('/bench?bench=10');
  expect(Math.round((await node(page, '0').boundingBox()).width)).toBe(182);
});

test('icons render without an emoji font', async ({ page }) => {
  await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  await panel(page).getByLabel('Send responses to separate outputs').check();
  const label = port(page, 'm2', 'reprompt_1_out');
  await expect(label.locator('svg')).toHaveCount(1);
  expect(await label.textContent()).not.toMatch(/[\u{1F300}-\u{1FAFF}]/u);
  const attach = panel(page).locator('.reprompt').nth(0).locator('.attach');
  await expect(attach.locator('svg')).toHaveCount(1);
  expect(await attach.textContent()).not.toMatch(/[\u{1F300}-\u{1FAFF}]/u);
  await panel(page).locator('.reprompt').nth(0).locator('input[type="file"]').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('x') });
  const chip = panel(page).locator('.reprompt').nth(0).locator('.attachment-chip');
  await expect(chip).toContainText('notes.txt');
  expect(await chip.textContent()).not.toMatch(/[\u{1F300}-\u{1FAFF}]/u);
  await page.locator('.run-button').click();
  const dialog = page.getByRole('dialog', { name: 'Run the graph' });
  expect(await dialog.locator('.attach').textContent()).not.toMatch(/[\u{1F300}-\u{1FAFF}]/u);
});

test('messages name modules and ports in the person\'s words, and a port that does not fit says why before the drop', async ({ page }) => {
  await newGraph(page);
  await taskWithReprompts(page, ['AAA', 'BBB']);
  await outputModule(page, 'm5', 260);
  await wire(page, ['m4', 'reprompt_2_out'], ['m5', 'data_in']);
  await node(page, 'm4').locator('.module-header').click();
  await panel(page).getByLabel('Send responses to separate outputs').uncheck();
  await expect(page.locator('[data-edge-id="c3"]')).toHaveClass(/dangling/);
  await expect.poll(async () => (await findings(page)).map((finding) => finding.code)).toContain('validation.dangling_cable');
  const dangling = (await findings(page)).find((finding) => finding.code === 'validation.dangling_cable');
  expect(dangling.text).not.toMatch(/\bc\d+\b/);
  expect(dangling.text).not.toContain('reprompt_');
  expect(dangling.text).toContain('Agent task');
  expect(dangling.text).toContain('Re-prompt 2');

  // While a signal cable hovers over a bundle input, the reason shows.
  const start = await centre(port(page, 'm2', 'signal_out').locator('.port-dot'));
  const end = await centre(port(page, 'm3', 'data_in').locator('.port-dot'));
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  await page.mouse.move((start.x + end.x) / 2, (start.y + end.y) / 2, { steps: 5 });
  await page.mouse.move(end.x, end.y, { steps: 5 });
  await expect(page.locator('.connection-hint')).toContainText('A signal output cannot feed a bundle input');
  await page.mouse.up();
});

test('the palette puts the kind whose name was typed first', async ({ page }) => {
  await newGraph(page);
  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await page.keyboard.press('/');
  await page.keyboard.type('review');
  // Coding's description mentions a review chain; the Review gate is meant.
  await expect(page.locator('.palette-item').first()).toHaveAttribute('data-kind', 'step.agent_review_gate');
  await page.keyboard.press('Enter');
  await expect(node(page, 'm4')).toHaveClass(/kind-agent_review_gate/);
  // Escape from a dialog gives the keys back to the canvas.
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.locator('.pane')).toBeFocused();
});
