// The canvas editor, through the UI only: DOC23 §6.1 re-prompts, separate
// outputs and wiring, dangling cables and undo, validation, persistence,
// coding agents, copy/paste between graphs, a save through the API seen
// live, and the conflict of a draft left on an older revision.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { panel, node, port } = find;
const { newGraph, pasteInNewGraph, wire, drag } = act;
const { saved, findingCodes, watchErrors } = check;

async function reprompts(page) {
  return panel(page).locator('.reprompt textarea').evaluateAll((areas) => areas.map((area) => area.value));
}

test('re-prompts as DOC23 §6.1: add, remove, reorder, the limit, separate outputs, wiring, undo, reload', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  await newGraph(page);

  // Build DOC23's §6.1 example from the palette.
  await page.locator('.palette-item[data-kind="step.agent_task"]').click();
  await expect(node(page, 'm4')).toBeVisible();
  await expect(panel(page)).toBeVisible();
  await panel(page).getByLabel('Instruction').fill('Write the launch plan for the new API.');
  const add = panel(page).getByRole('button', { name: '+ Add Re-Prompt' });
  await add.click();
  await panel(page).getByLabel('Re-prompt 1', { exact: true }).fill('Review your work above. What did you miss? What could be stronger?');
  await add.click();
  await panel(page).getByLabel('Re-prompt 2', { exact: true }).fill('Incorporate your review into a final consolidated version.');
  await expect(node(page, 'm4')).toContainText('↻ 2');

  // ✕ removes and renumbers.
  await panel(page).getByRole('button', { name: 'Remove re-prompt 1' }).click();
  expect(await reprompts(page)).toEqual(['Incorporate your review into a final consolidated version.']);
  await expect(panel(page).locator('.reprompt-number')).toHaveText(['1.']);

  // Reorder by the drag handle, and from the keyboard.
  await add.click();
  await panel(page).getByLabel('Re-prompt 2', { exact: true }).fill('Review your work');
  await panel(page).locator('.reprompt').nth(1).locator('.drag-handle').dragTo(panel(page).locator('.reprompt').nth(0));
  expect(await reprompts(page)).toEqual(['Review your work', 'Incorporate your review into a final consolidated version.']);
  await panel(page).getByLabel('Re-prompt 1', { exact: true }).press('Alt+ArrowDown');
  expect(await reprompts(page)).toEqual(['Incorporate your review into a final consolidated version.', 'Review your work']);
  await expect(panel(page).getByLabel('Re-prompt 2', { exact: true })).toBeFocused();
  await panel(page).getByLabel('Re-prompt 2', { exact: true }).press('Alt+ArrowUp');
  expect(await reprompts(page)).toEqual(['Review your work', 'Incorporate your review into a final consolidated version.']);

  // An 11th re-prompt is impossible.
  for (let number = 3; number <= 10; number += 1) {
    await add.click();
    await panel(page).getByLabel(`Re-prompt ${number}`, { exact: true }).fill(`Pass ${number}`);
  }
  await expect(add).toBeDisabled();
  await expect(panel(page).getByText('At most 10 re-prompts per module.')).toBeVisible();
  for (let count = 0; count < 8; count += 1) {
    await panel(page).getByRole('button', { name: 'Remove re-prompt 3' }).click();
  }
  await expect(add).toBeEnabled();
  expect((await reprompts(page)).length).toBe(2);

  // Separate outputs: original_out and reprompt_1_out appear with their labels.
  await expect(port(page, 'm4', 'original_out')).toHaveCount(0);
  await panel(page).getByLabel('Send responses to separate outputs').check();
  await expect(port(page, 'm4', 'original_out')).toHaveAttribute('data-label', '📄 Original');
  await expect(port(page, 'm4', 'reprompt_1_out')).toHaveAttribute('data-label', '📄 "Review your work"');
  await expect(port(page, 'm4', 'reprompt_2_out')).toHaveAttribute('data-label', '📄 Re-prompt 2');
  // DOC23's 📄 is drawn as an icon: it renders without an emoji font.
  await expect(port(page, 'm4', 'reprompt_1_out')).toContainText('"Review your work"');
  await expect(port(page, 'm4', 'reprompt_1_out').locator('svg.icon-document')).toHaveCount(1);

  // Wire reprompt_1_out to a new output module.
  await page.locator('.palette-item[data-kind="step.output"]').click();
  await expect(node(page, 'm5')).toBeVisible();
  await drag(page, 'm5', 0, 220);
  await wire(page, ['m4', 'reprompt_1_out'], ['m5', 'data_in']);
  const cable = page.locator('[data-edge-id="c3"]');
  await expect(cable).toHaveCount(1);
  await expect(cable).not.toHaveClass(/dangling/);

  // Untick: the cable stays, dashed, and validation says why.
  await node(page, 'm4').locator('.module-header').click();
  await panel(page).getByLabel('Send responses to separate outputs').uncheck();
  await expect(port(page, 'm4', 'reprompt_1_out')).toHaveCount(0);
  await expect(cable).toHaveClass(/dangling/);
  await expect.poll(() => findingCodes(page)).toContain('validation.dangling_cable');

  // Undo brings the port back and the cable leads somewhere again.
  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await page.keyboard.press('Control+z');
  await expect(port(page, 'm4', 'reprompt_1_out')).toHaveCount(1);
  await expect(cable).not.toHaveClass(/dangling/);
  await expect.poll(() => findingCodes(page)).not.toContain('validation.dangling_cable');

  // An empty re-prompt is an error, and the module is marked.
  await node(page, 'm4').locator('.module-header').click();
  await add.click();
  await expect.poll(() => findingCodes(page)).toContain('validation.reprompt_empty');
  await expect(node(page, 'm4')).toHaveClass(/flagged/);
  await panel(page).getByLabel('Re-prompt 3', { exact: true }).fill('Shorten it.');
  await expect.poll(() => findingCodes(page)).not.toContain('validation.reprompt_empty');

  // Reload: everything persisted.
  await saved(page);
  await page.reload();
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await expect(port(page, 'm4', 'reprompt_1_out')).toHaveAttribute('data-label', '📄 "Review your work"');
  await expect(page.locator('[data-edge-id="c3"]')).not.toHaveClass(/dangling/);
  await node(page, 'm4').locator('.module-header').click();
  await expect(panel(page).getByLabel('Instruction')).toHaveValue('Write the launch plan for the new API.');
  expect(await reprompts(page)).toEqual(['Review your work', 'Incorporate your review into a final consolidated version.', 'Shorten it.']);
  await expect(panel(page).getByLabel('Send responses to separate outputs')).toBeChecked();
  expect(errors).toEqual([]);
});

test('a file attached to one re-prompt is uploaded and kept', async ({ page }) => {
  await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  const second = panel(page).locator('.reprompt').nth(1);
  await second.locator('input[type="file"]').setInputFiles({ name: 'style guide.md', mimeType: 'text/markdown', buffer: Buffer.from('# Style\nShort sentences.') });
  await expect(second.locator('.attachment-chip')).toContainText('style guide.md');
  await expect(panel(page).locator('.reprompt').nth(0).locator('.attachment-chip')).toHaveCount(0);
  const href = await second.locator('.attachment-chip a').getAttribute('href');
  const body = await page.evaluate(async (url) => (await fetch(url)).text(), href);
  expect(body).toBe('# Style\nShort sentences.');
  await saved(page);
  await page.reload();
  await node(page, 'm2').locator('.module-header').click();
  await expect(panel(page).locator('.reprompt').nth(1).locator('.attachment-chip')).toContainText('style guide.md');
});

test('edits made while the server is unreachable are saved when it is back', async ({ page }) => {
  await newGraph(page);
  await page.route('**/api/graphs/*/changes', (route) => route.abort('connectionrefused'));
  await page.getByLabel('Graph name').fill('Written offline');
  await expect(page.locator('.save-status')).toContainText('Offline', { timeout: 10_000 });
  await page.unroute('**/api/graphs/*/changes');
  await saved(page);
  await page.reload();
  await expect(page.getByLabel('Graph name')).toHaveValue('Written offline');
});

test('incompatible ports refuse the drop with a reason', async ({ page }) => {
  await newGraph(page);
  await wire(page, ['m2', 'signal_out'], ['m3', 'data_in']);
  await expect(page.getByRole('status').filter({ hasText: 'cannot feed' })).toContainText('A signal output cannot feed a bundle input');
  await expect(page.locator('[data-edge-id]')).toHaveCount(2);
});

test('a coding module with two agents, each with re-prompts, persists', async ({ page }) => {
  await newGraph(page);
  await page.locator('.palette-item[data-kind="step.coding"]').click();
  await expect(node(page, 'm4')).toBeVisible();
  await panel(page).getByLabel('Instruction', { exact: true }).fill('Implement the /health endpoint.');
  await panel(page).getByRole('button', { name: '+ Add agent' }).click();
  const cards = panel(page).locator('.agent-card');
  await expect(cards).toHaveCount(2);
  await cards.nth(0).getByRole('button', { name: '+ Add Re-Prompt' }).click();
  await cards.nth(0).getByLabel('Re-prompt 1', { exact: true }).fill('Run the tests and fix what fails.');
  await cards.nth(0).getByRole('button', { name: '+ Add Re-Prompt' }).click();
  await cards.nth(0).getByLabel('Re-prompt 2', { exact: true }).fill('Review your implementation for edge cases.');
  await cards.nth(1).getByLabel('Role').fill('security reviewer');
  await cards.nth(1).getByRole('button', { name: '+ Add Re-Prompt' }).click();
  await cards.nth(1).getByLabel('Re-prompt 1', { exact: true }).fill('Reconsider your review. What did you miss?');
  await panel(page).getByLabel('Coordination').selectOption('review_chain');
  await expect(node(page, 'm4')).toContainText('↻ 3');
  await saved(page);

  await page.reload();
  await node(page, 'm4').locator('.module-header').click();
  await expect(cards).toHaveCount(2);
  await expect(cards.nth(0).getByLabel('Re-prompt 2', { exact: true })).toHaveValue('Review your implementation for edge cases.');
  await expect(cards.nth(1).getByLabel('Role')).toHaveValue('security reviewer');
  await expect(cards.nth(1).getByLabel('Re-prompt 1', { exact: true })).toHaveValue('Reconsider your review. What did you miss?');
  await expect(panel(page).getByLabel('Coordination')).toHaveValue('review_chain');
  // No test command, no iteration modes.
  await expect(panel(page).getByText('Test command')).toHaveCount(0);
});

test('copy and paste move modules between two graphs', async ({ page, context }) => {
  await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  await page.keyboard.press('Control+c');

  const other = await pasteInNewGraph(context);
  await expect(node(other, 'm4')).toContainText('Draft');
  await expect(node(other, 'm4')).toContainText('↻ 2');
  await saved(other);
  await other.reload();
  await expect(node(other, 'm4')).toContainText('Draft');
});

test('deleting, box selection and undo work from the keyboard', async ({ page }) => {
  await newGraph(page);
  // Box-select the two right-hand modules and delete them.
  const pane = page.locator('.pane');
  const paneBox = await pane.boundingBox();
  const first = await node(page, 'm2').boundingBox();
  await page.keyboard.down('Shift');
  await page.mouse.move(first.x - 20, first.y - 20);
  await page.mouse.down();
  await page.mouse.move(paneBox.x + paneBox.width - 240, first.y + 200, { steps: 6 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await expect(node(page, 'm2')).toHaveClass(/selected/);
  await expect(node(page, 'm3')).toHaveClass(/selected/);
  await expect(node(page, 'm1')).not.toHaveClass(/selected/);
  await page.keyboard.press('Delete');
  await expect(page.locator('[data-node-id]')).toHaveCount(1);
  await expect(page.locator('[data-edge-id]')).toHaveCount(0);
  await page.keyboard.press('Control+z');
  await expect(page.locator('[data-node-id]')).toHaveCount(3);
  await expect(page.locator('[data-edge-id]')).toHaveCount(2);
  await page.keyboard.press('Control+Shift+z');
  await expect(page.locator('[data-node-id]')).toHaveCount(1);
  await page.keyboard.press('Control+y');
  await page.keyboard.press('Control+z');
  await expect(page.locator('[data-node-id]')).toHaveCount(3);

  // Select with ], open the output popup with O, wire from the keyboard.
  await page.keyboard.press(']');
  await expect(node(page, 'm1')).toHaveClass(/selected/);
  await page.keyboard.press('o');
  const popup = page.getByRole('dialog', { name: 'Outputs of Topic' });
  await expect(popup).toBeVisible();
  await popup.locator('[data-port-id="signal_out"]').press('Enter');
  const targets = page.getByRole('dialog', { name: 'Connect to' });
  await targets.getByRole('button', { name: 'Draft · Start after' }).press('Enter');
  await expect(page.locator('[data-edge-id]')).toHaveCount(3);

  // The shortcut list.
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toHaveCount(0);
});

test('a save through the API reaches the open editor as it happens, and an edit after it is kept on top', async ({ page }) => {
  const id = await newGraph(page);
  // A script saves (with the edit token, over revision 1).
  const status = await page.evaluate(async (graphId) => {
    const token = localStorage.getItem(`patchbay.edit.${graphId}`);
    const document = await (await fetch(`/api/graphs/${graphId}`)).json();
    document.name = 'Their version';
    const reply = await fetch(`/api/graphs/${graphId}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, 'If-Match': '"1"' },
      body: JSON.stringify(document),
    });
    return reply.status;
  }, id);
  expect(status).toBe(200);
  // No reload, no conflict: the editor shows it, and goes on from it.
  await expect(page.getByLabel('Graph name')).toHaveValue('Their version');
  await node(page, 'm2').locator('.module-header').click();
  await panel(page).getByLabel('Label', { exact: true }).fill('My draft');
  await saved(page);
  const stored = await page.evaluate(async (graphId) => (await (await fetch(`/api/graphs/${graphId}`)).json()), id);
  expect([stored.name, stored.modules[1].label]).toEqual(['Their version', 'My draft']);
});

test('a draft left on an older revision offers load theirs or save mine as a fork', async ({ page }) => {
  const id = await newGraph(page);
  // A draft an earlier visit left, made on a revision before the graph's.
  const draft = await page.evaluate(async (graphId) => {
    const document = await (await fetch(`/api/graphs/${graphId}`)).json();
    document.name = 'My version';
    localStorage.setItem(`patchbay.draft.${graphId}`, JSON.stringify({ base_revision: 0, document }));
    return document.name;
  }, id);
  expect(draft).toBe('My version');
  await page.reload();
  const dialog = page.getByRole('alertdialog', { name: 'Someone else saved this graph' });
  await expect(dialog).toBeVisible({ timeout: 10_000 });
  await expect(page.getByLabel('Graph name')).toHaveValue('My version');
  // Nothing was sent meanwhile.
  const stored = await page.evaluate(async (graphId) => (await (await fetch(`/api/graphs/${graphId}`)).json()).name, id);
  expect(stored).toBe('Draft, review, finalize');
  await dialog.getByRole('button', { name: 'Load theirs (discard my edits)' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByLabel('Graph name')).toHaveValue('Draft, review, finalize');
  await saved(page);

  // Again, and this time save mine as a fork: a new graph, mine, with my edit.
  await page.evaluate(async (graphId) => {
    const document = await (await fetch(`/api/graphs/${graphId}`)).json();
    document.name = 'My version';
    localStorage.setItem(`patchbay.draft.${graphId}`, JSON.stringify({ base_revision: 0, document }));
  }, id);
  await page.reload();
  await dialog.getByRole('button', { name: 'Save mine as a fork' }).click();
  await expect(page).not.toHaveURL(new RegExp(id));
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await expect(page.getByLabel('Graph name')).toHaveValue('My version (fork)');
});

test('the bench page builds the contract graph in the browser', async ({ page }) => {
  await page.goto('/bench?bench=10');
  await expect(page.locator('[data-node-id]')).toHaveCount(10);
  await expect(page.locator('[data-edge-id]')).toHaveCount(14);
  await expect(node(page, '0')).toContainText('Module 0');
  for (const label of ['in0', 'in1', 'out0', 'out1', 'out2']) await expect(node(page, '0')).toContainText(label);
  const pane = await page.locator('[data-bench-pane]').boundingBox();
  const fifth = await node(page, '5').boundingBox();
  // cols = 4: node 5 is at (220, 140).
  expect(Math.round(fifth.x - pane.x)).toBe(220);
  expect(Math.round(fifth.y - pane.y)).toBe(140);
});

test('a keyboard reaches every cable: the module lists its cables, one opens the cable panel, Delete or Remove cable takes it out', async ({ page }) => {
  const errors = watchErrors(page);
  await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  const cables = panel(page).getByRole('group', { name: 'Cables' });
  const incoming = cables.getByRole('button', { name: '“Topic” · Input → Data' });
  const outgoing = cables.getByRole('button', { name: /^Output → “/ });
  await expect(incoming).toBeVisible();
  await expect(outgoing).toBeVisible();

  // By keyboard: focus the button, Enter opens the cable, Delete removes it.
  await incoming.focus();
  await page.keyboard.press('Enter');
  const cablePanel = page.getByRole('complementary', { name: 'Cable details' });
  await expect(cablePanel).toContainText('From “Topic” · Input to “Draft” · Data');
  await expect(cablePanel).toBeFocused();
  await page.keyboard.press('Delete');
  await expect(page.locator('[data-edge-id="c1"]')).toHaveCount(0);
  await expect(cablePanel).toBeHidden();
  await page.keyboard.press('Control+z');
  await expect(page.locator('[data-edge-id="c1"]')).toHaveCount(1);

  // With the pointer: the cable panel's Remove cable.
  await node(page, 'm2').locator('.module-header').click();
  await outgoing.click();
  await cablePanel.getByRole('button', { name: 'Remove cable' }).click();
  await expect(page.locator('[data-edge-id="c2"]')).toHaveCount(0);
  await node(page, 'm2').locator('.module-header').click();
  await expect(cables.getByRole('button')).toHaveCount(1);
  await saved(page);
  expect(errors).toEqual([]);
});

test('the palette finds kinds whatever the case, and a number field keeps only numbers in range', async ({ page }) => {
  const errors = watchErrors(page);
  const id = await newGraph(page);
  const search = page.locator('#palette-search');
  await search.fill('REVIEW');
  await expect(page.locator('.palette-item').first()).toHaveAttribute('data-kind', 'step.agent_review_gate');
  await search.fill('Jüdge');
  await expect(page.locator('.palette-item')).toHaveCount(0);
  await search.fill('JUDGE');
  await expect(page.locator('.palette-item')).toHaveCount(1);
  await expect(page.locator('.palette-item').first()).toHaveAttribute('data-kind', 'step.judge');
  await search.fill('');

  // By keyboard: the search is the palette's one tab stop; the arrows
  // choose a kind, Enter adds it, and Tab goes on to the canvas.
  const modules = await page.locator('[data-node-id]').count();
  await search.focus();
  await page.keyboard.press('ArrowDown');
  await expect(page.locator('.palette-item.highlighted')).toHaveAttribute('data-kind', 'step.agent_task');
  await page.keyboard.press('Enter');
  await expect(page.locator('[data-node-id]')).toHaveCount(modules + 1);
  await expect(page.locator('.module.selected')).toContainText('Agent task');
  await search.focus();
  await page.keyboard.press('Tab');
  await expect(page.locator('[data-bench-pane]')).toBeFocused();
  await page.keyboard.press('Control+z');
  await expect(page.locator('[data-node-id]')).toHaveCount(modules);

  // The starter's agent task: its temperature is a number field (0 to 2).
  await node(page, 'm2').locator('.module-header').click();
  const temperature = panel(page).getByLabel('Temperature');
  const savedTemperature = () => page.evaluate(async (graphId) => {
    const document = await (await fetch(`/api/graphs/${graphId}`)).json();
    return document.modules.find((module) => module.id === 'm2').config.agent_config.temperature ?? null;
  }, id);
  await temperature.fill('0.7');
  await expect.poll(savedTemperature).toBe(0.7);
  await temperature.fill('5');
  await expect.poll(savedTemperature).toBe(2);
  await temperature.fill('');
  await expect.poll(savedTemperature).toBe(null);
  await saved(page);
  expect(errors).toEqual([]);
});

test('the view pans by dragging the empty canvas, Fit brings every module back, and Ctrl+D duplicates', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  const id = await newGraph(page);
  const pane = page.locator('.pane');
  const before = await node(page, 'm2').boundingBox();

  // Pan: an empty point dragged by (-300, +120) moves every module with it.
  const area = await pane.boundingBox();
  const start = { x: area.x + area.width / 2, y: area.y + area.height - 60 };
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  await page.mouse.move(start.x - 150, start.y + 60, { steps: 4 });
  await page.mouse.move(start.x - 300, start.y + 120, { steps: 4 });
  await page.mouse.up();
  const panned = await node(page, 'm2').boundingBox();
  expect(Math.round(panned.x - before.x)).toBe(-300);
  expect(Math.round(panned.y - before.y)).toBe(120);
  await expect(page.locator('.module.selected')).toHaveCount(0);

  // Far away, then Fit: every module is inside the pane again.
  for (let drag = 0; drag < 3; drag++) {
    await page.mouse.move(start.x, start.y);
    await page.mouse.down();
    await page.mouse.move(start.x - 400, start.y - 200, { steps: 4 });
    await page.mouse.up();
  }
  await expect.poll(async () => (await node(page, 'm1').boundingBox()).x + 300 < area.x).toBe(true);
  await page.getByRole('button', { name: 'Fit view' }).click();
  for (const module of ['m1', 'm2', 'm3']) {
    await expect.poll(async () => {
      const box = await node(page, module).boundingBox();
      return box.x >= area.x && box.y >= area.y && box.x + box.width <= area.x + area.width && box.y + box.height <= area.y + area.height;
    }, { message: `${module} in view` }).toBe(true);
  }

  // Ctrl+D: a copy of the selected module, 40 px right and down, selected;
  // undo takes it away.
  await node(page, 'm2').locator('.module-header').click();
  await pane.focus();
  await page.keyboard.press('Control+d');
  await expect(page.locator('[data-node-id]')).toHaveCount(4);
  const copy = page.locator('.module.selected');
  await expect(copy).toHaveCount(1);
  const copyId = await copy.getAttribute('data-node-id');
  expect(copyId).not.toBe('m2');
  await expect(copy.locator('.module-header')).toContainText('Draft');
  let document = await (async () => { await saved(page); return (await page.request.get(`/api/graphs/${id}`)).json(); })();
  const original = document.modules.find((module) => module.id === 'm2');
  const duplicate = document.modules.find((module) => module.id === copyId);
  expect(duplicate.kind).toBe(original.kind);
  expect(duplicate.config).toEqual(original.config);
  expect(duplicate.position).toEqual({ x: original.position.x + 40, y: original.position.y + 40 });
  await page.keyboard.press('Control+z');
  await expect(page.locator('[data-node-id]')).toHaveCount(3);
  expect(errors).toEqual([]);
});

test('with separate outputs on, the output popup offers each response; off, only the merged output', async ({ page }) => {
  const id = await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  const choices = () => page.getByRole('dialog', { name: 'Outputs of Draft' }).locator('.output-choice');
  const ids = async () => choices().evaluateAll((buttons) => buttons.map((button) => button.dataset.portId));
  await page.locator('.pane').focus();
  await page.keyboard.press('o');
  await expect(choices().first()).toBeVisible();
  expect(await ids()).not.toContain('original_out');
  await page.keyboard.press('Escape');

  await node(page, 'm2').locator('.module-header').click();
  await panel(page).getByLabel('Send responses to separate outputs').check();
  await page.locator('.pane').focus();
  await page.keyboard.press('o');
  await expect(choices().first()).toBeVisible();
  const offered = await ids();
  expect(offered.slice(0, 4)).toEqual(['data_out', 'original_out', 'reprompt_1_out', 'reprompt_2_out']);
  await expect(choices().filter({ hasText: 'Original Response' })).toHaveCount(1);
  // Choosing one starts a cable from it, finished from the target list.
  await page.getByRole('dialog', { name: 'Outputs of Draft' }).locator('[data-port-id="reprompt_1_out"]').press('Enter');
  await page.getByRole('dialog', { name: 'Connect to' }).getByRole('button', { name: 'Final essay · Results' }).press('Enter');
  await saved(page);
  const document = await (await page.request.get(`/api/graphs/${id}`)).json();
  expect(document.cables.some((cable) => cable.from.module === 'm2' && cable.from.port === 'reprompt_1_out' && cable.to.module === 'm3')).toBe(true);
});

test('zoomed out, modules are sketched and cables drawn on a canvas; a click where a cable is drawn selects it', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  const id = await newGraph(page);
  await expect(page.locator('[data-edge-id]')).toHaveCount(2);
  const zoomOut = page.getByRole('button', { name: 'Zoom out' });
  for (let click = 0; click < 3; click++) await zoomOut.click();
  // Below 60 %: a sketch per module, no detailed cable left in the page.
  await expect(page.locator('.module.sketch')).toHaveCount(3);
  await expect(page.locator('.module:not(.sketch)')).toHaveCount(0);
  await expect(page.locator('.cable')).toHaveCount(0);
  const zoom = await page.locator('.viewport-scale').evaluate((element) => Number(/scale\(([^)]+)\)/.exec(element.style.transform)[1]));
  expect(zoom).toBeLessThan(0.6);

  // The middle of cable c1 (m1's output, row 0, to m2's input, row 0): the
  // middle of its ends, as its control points sit level with them.
  const from = await node(page, 'm1').boundingBox();
  const to = await node(page, 'm2').boundingBox();
  const rowCentre = (1 + 24 + 4 + 10) * zoom;
  const middle = { x: (from.x + from.width + to.x) / 2, y: (from.y + to.y) / 2 + rowCentre };
  // Drawn there: the canvas has ink at that point.
  await expect.poll(() => page.locator('canvas.cable-sketches').evaluate((canvas, point) => {
    const box = canvas.getBoundingClientRect();
    const x = Math.round((point.x - box.left) * canvas.width / box.width);
    const y = Math.round((point.y - box.top) * canvas.height / box.height);
    const pixels = canvas.getContext('2d').getImageData(x - 2, y - 2, 5, 5).data;
    return pixels.some((value, index) => index % 4 === 3 && value > 0);
  }, middle)).toBe(true);

  // A click on empty canvas selects no cable: Delete removes nothing.
  await page.mouse.click(middle.x, middle.y - 60);
  await page.keyboard.press('Delete');
  // A click a pixel or two off the curve selects c1; Delete removes it.
  await page.mouse.click(middle.x, middle.y + 2);
  await page.keyboard.press('Delete');
  await saved(page);
  const document = await (await page.request.get(`/api/graphs/${id}`)).json();
  expect(document.cables.map((cable) => cable.id)).toEqual(['c2']);

  // Zoomed in again, modules and cables are drawn in detail.
  const zoomIn = page.getByRole('button', { name: 'Zoom in' });
  for (let click = 0; click < 3; click++) await zoomIn.click();
  await expect(page.locator('.module.sketch')).toHaveCount(0);
  await expect(page.locator('[data-edge-id]')).toHaveCount(1);
  await expect(page.locator('canvas.cable-sketches')).toHaveAttribute('width', '0');
  expect(errors).toEqual([]);
});

test('the scaled canvas is a layer of its own at rest, dropped in the frame a zoom changes and made again once the view is still', async ({ page }) => {
  const errors = watchErrors(page);
  await newGraph(page);
  const layerHint = () => page.locator('.viewport-scale').evaluate((element) => getComputedStyle(element).willChange);
  // At rest: ready for a wheel zoom to scale it as it is (made at the first
  // notch, its raster held that frame back).
  await expect.poll(layerHint).toBe('transform');
  // A zoom by button: in the frame the scale changes the layer is gone, so
  // the modules are drawn again at the new scale, not the old raster scaled.
  const inTheFrame = await page.evaluate(() => new Promise((done) => {
    const scale = document.querySelector('.viewport-scale');
    const before = scale.style.transform;
    document.querySelector('button[aria-label="Zoom in"]').click();
    const cables = document.querySelector('svg.cables:not(.cables-moving)');
    requestAnimationFrame(() => done({
      before,
      after: scale.style.transform,
      hint: getComputedStyle(scale).willChange,
      cablesHint: getComputedStyle(cables).willChange,
    }));
  }));
  expect(inTheFrame.after).not.toBe(inTheFrame.before);
  expect(inTheFrame.hint).toBe('auto');
  expect(inTheFrame.cablesHint).toBe('opacity');
  // Made again at the new scale once the view is still.
  await expect.poll(layerHint).toBe('transform');
  // The cables' layer follows it: a transform hint only with the scaled one.
  await expect.poll(() => page.locator('svg.cables:not(.cables-moving)').evaluate((element) => getComputedStyle(element).willChange)).toBe('transform');
  expect(errors).toEqual([]);
});

// Where the minimap draws each module's centre (screen pixels of the map's
// canvas), from the modules' boxes on the page: the map fits their bounds,
// 40 graph units of padding around, into 200 × 130.
async function mapCentres(page, ids) {
  const zoom = await page.locator('.viewport-scale').evaluate((element) => Number(/scale\(([^)]+)\)/.exec(element.style.transform)?.[1] ?? 1));
  const boxes = await page.locator('[data-node-id]').evaluateAll((elements) => elements.map((element) => {
    const box = element.getBoundingClientRect();
    return { id: element.dataset.nodeId, left: box.left, top: box.top, right: box.right, bottom: box.bottom };
  }));
  const padding = 40 * zoom;
  const left = Math.min(...boxes.map((box) => box.left)) - padding;
  const top = Math.min(...boxes.map((box) => box.top)) - padding;
  const width = Math.max(...boxes.map((box) => box.right)) + padding - left;
  const height = Math.max(...boxes.map((box) => box.bottom)) + padding - top;
  const scale = Math.min(200 / width, 130 / height);
  return Object.fromEntries(boxes.filter((box) => ids.includes(box.id)).map((box) => [box.id, {
    x: ((box.left + box.right) / 2 - left) * scale,
    y: ((box.top + box.bottom) / 2 - top) * scale,
  }]));
}

// The colour the map has at `point` (its own pixels), as "r,g,b,a".
function mapColour(page, point) {
  return page.locator('.minimap canvas').evaluate((canvas, point) => {
    // Its pixels per CSS pixel of its layout (a small pane scales the map).
    const ratio = canvas.width / canvas.clientWidth;
    return [...canvas.getContext('2d').getImageData(Math.round(point.x * ratio), Math.round(point.y * ratio), 1, 1).data].join(',');
  }, point);
}

test('the minimap draws every module, marks the selected one, follows a drag once it ends, and a click on it moves the view there', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  await newGraph(page);
  const ids = ['m1', 'm2', 'm3'];
  const blank = '0,0,0,0';
  let centres = await mapCentres(page, ids);
  for (const id of ids) await expect.poll(() => mapColour(page, centres[id])).not.toBe(blank);
  // A wide pane has the map at its full size.
  expect((await page.locator('.minimap').boundingBox()).width).toBeCloseTo(200, 0);
  const plain = await mapColour(page, centres.m1);
  expect(await mapColour(page, centres.m2)).toBe(plain);
  // Above every box (the map's padding), nothing is drawn.
  expect(await mapColour(page, { x: centres.m1.x, y: 2 })).toBe(blank);

  // Selected, m1's box takes another colour; m2's stays.
  await node(page, 'm1').locator('.module-header').click();
  await expect.poll(() => mapColour(page, centres.m1)).not.toBe(plain);
  expect(await mapColour(page, centres.m2)).toBe(plain);

  // m2 dragged down: once dropped, the map fits the new bounds and draws
  // m2 where it is now.
  await drag(page, 'm2', 0, 260);
  await saved(page);
  const before = centres;
  centres = await mapCentres(page, ids);
  expect(centres.m2.y - before.m2.y).toBeGreaterThan(10);
  for (const id of ids) await expect.poll(() => mapColour(page, centres[id])).not.toBe(blank);

  // Beside the side panel the pane is narrow, and the map is drawn at 60 %
  // so that it covers less of it.
  const map = await page.locator('.minimap').boundingBox();
  expect(map.width).toBeCloseTo(200 * 0.6, 0);
  // A click on m3's box centres the view on m3.
  const shrink = map.width / 200;
  await page.mouse.click(map.x + (1 + centres.m3.x) * shrink, map.y + (1 + centres.m3.y) * shrink);
  const pane = await page.locator('.pane').boundingBox();
  await expect.poll(async () => {
    const box = await node(page, 'm3').boundingBox();
    return Math.hypot(box.x + box.width / 2 - (pane.x + pane.width / 2), box.y + box.height / 2 - (pane.y + pane.height / 2));
  }).toBeLessThan(12);
  expect(errors).toEqual([]);
});
