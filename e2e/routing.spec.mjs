// Routing on the canvas, through the UI only: a classifier wired to three
// branches, conditions typed into the cable panel (checked as they are
// typed), the order they are tried in, and a run whose taken cable lights
// up while the others dim — live, and again after a reload.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, panel, runPanel } = find;
const { newGraph, wire, drag, startRun } = act;
const { watchErrors, findingCodes } = check;

const cablePanel = (page) => page.getByRole('complementary', { name: 'Cable details' });
const cable = (page, id) => page.locator(`[data-edge-id="${id}"]`);

/** Clicks a cable a quarter of the way along its curve, as a person would. */
async function selectCable(page, id) {
  const point = await cable(page, id).locator('.cable-line').evaluate((path) => {
    const at = path.getPointAtLength(path.getTotalLength() * 0.25);
    const matrix = path.getScreenCTM();
    return { x: at.x * matrix.a + at.y * matrix.c + matrix.e, y: at.x * matrix.b + at.y * matrix.d + matrix.f };
  });
  await page.mouse.click(point.x, point.y);
  await expect(cablePanel(page)).toBeVisible();
}

/** Runs the graph from the keyboard with `input`, to its end. */
async function runWith(page, input) {
  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await startRun(page, input);
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed');
}

async function rename(page, id, label) {
  await node(page, id).locator('.module-header').click();
  await panel(page).getByLabel('Label').fill(label);
}

test('a classifier routes to the first branch whose condition holds, and the run lights that cable', async ({ page }) => {
  const errors = watchErrors(page);
  await newGraph(page);

  // The starter's Draft becomes a classifier; the simulated provider is
  // told what to answer.
  await rename(page, 'm2', 'Classify');
  await panel(page).getByLabel('Instruction').fill('Classify the request. [sim:reply {"intent": "support"}]');
  await rename(page, 'm3', 'Sales');
  for (const [id, label, dy] of [['m4', 'Support', 200], ['m5', 'Other', 400]]) {
    await page.locator('.palette-item[data-kind="step.output"]').click();
    await expect(node(page, id)).toBeVisible();
    await drag(page, id, 0, dy);
    await rename(page, id, label);
    await wire(page, ['m2', 'data_out'], [id, 'data_in']);
  }
  await expect(cable(page, 'c3')).toHaveCount(1);
  await expect(cable(page, 'c4')).toHaveCount(1);
  // No conditions yet: no numbers on the cables.
  await expect(page.locator('.cable-condition')).toHaveCount(0);

  // A condition with a mistake: the panel says what and where, at once.
  await selectCable(page, 'c2');
  await expect(cablePanel(page)).toContainText('From “Classify” · Output');
  await expect(cablePanel(page)).toContainText('“Sales” · Results');
  const condition = cablePanel(page).getByLabel('Condition');
  await condition.fill("get('$.output.intent') = 'sales'");
  await expect(cablePanel(page).locator('.cable-problems')).toContainText('Use `==`');
  await expect(cablePanel(page).locator('.cable-problems')).toContainText('character 24');
  await expect(cable(page, 'c2')).toHaveClass(/flagged/);
  await condition.fill("get('$.output.intent') == 'sales'");
  await expect(cable(page, 'c2')).not.toHaveClass(/flagged/);

  // Numbered in the order they are tried; the two without a condition
  // come after, and the last of them can never be reached.
  await expect(cable(page, 'c2').locator('.cable-condition')).toContainText("1 intent == 'sales'");
  await expect(cable(page, 'c3').locator('.cable-condition')).toContainText('2 otherwise');
  await expect(cable(page, 'c4').locator('.cable-condition')).toContainText('3 otherwise');
  await expect.poll(() => findingCodes(page)).toContain('validation.condition_unreachable');

  await selectCable(page, 'c3');
  await cablePanel(page).getByLabel('Condition').fill("get('$.output.intent') == 'support'");
  await expect(cable(page, 'c3').locator('.cable-condition')).toContainText("2 intent == 'support'");
  await expect(cable(page, 'c3').locator('.cable-condition title')).toHaveText("Tried 2nd: get('$.output.intent') == 'support'");
  await expect.poll(() => findingCodes(page)).not.toContain('validation.condition_unreachable');

  // Moving the catch-all up makes what follows it unreachable; moving it
  // back puts things right.
  await selectCable(page, 'c4');
  await expect(cablePanel(page)).toContainText('Tried 3 of 3');
  await cablePanel(page).getByRole('button', { name: '↑ Try earlier' }).click();
  await expect(cable(page, 'c4').locator('.cable-condition')).toContainText('2 otherwise');
  await expect.poll(() => findingCodes(page)).toContain('validation.condition_unreachable');
  await cablePanel(page).getByRole('button', { name: '↓ Try later' }).click();
  await expect(cable(page, 'c4').locator('.cable-condition')).toContainText('3 otherwise');
  await expect(cablePanel(page).getByRole('button', { name: '↓ Try later' })).toBeDisabled();
  await expect.poll(() => findingCodes(page)).toEqual([]);

  // Run it: the classifier says "support", so the second cable is taken.
  await runWith(page, 'My order has not arrived');
  await expect(cable(page, 'c3')).toHaveClass(/taken/);
  await expect(cable(page, 'c2')).toHaveClass(/passed/);
  await expect(cable(page, 'c4')).toHaveClass(/passed/);
  await expect(node(page, 'm4')).toHaveClass(/run-done/);
  await expect(node(page, 'm3')).not.toHaveClass(/run-done/);
  await expect(node(page, 'm5')).not.toHaveClass(/run-done/);
  // The run panel says which way the classifier's output went, and why.
  await runPanel(page).locator('.run-module-entry[data-module-id="m2"]').click();
  await expect(runPanel(page).locator('.run-routes')).toContainText(
    "Output → “Support”: condition 2 held: get('$.output.intent') == 'support'",
  );

  // A reload follows the run again and shows the same way.
  await page.reload();
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed');
  await expect(cable(page, 'c3')).toHaveClass(/taken/);
  await expect(cable(page, 'c2')).toHaveClass(/passed/);
  expect(errors).toEqual([]);
});

test('the Triage example: a gate of intents on the classifier, ports that come and go with them, and a run that takes the team it chose', async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto('/');
  const triage = page.getByRole('region', { name: 'Examples' }).locator('.home-example').filter({ hasText: 'Triage' });
  await triage.getByRole('link', { name: 'Start from this example' }).click();
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await expect(page.getByLabel('Graph name')).toHaveValue('Triage');
  await expect.poll(() => findingCodes(page)).toEqual([]);

  // The classifier's gate: the intents it allows are ports of its own.
  await node(page, 'classify').locator('.module-header').click();
  const gate = panel(page).getByRole('group', { name: 'Allowed intents' });
  await expect(gate.getByLabel('Allow intent next')).toBeChecked();
  await expect(gate.getByLabel('Allow intent escalate')).toBeChecked();
  await expect(gate.getByLabel('Allow intent jump')).not.toBeChecked();
  const port = (id) => node(page, 'classify').locator(`[data-port-id="${id}"]`);
  await expect(port('escalate_out')).toBeVisible();
  await expect(port('jump_out')).toHaveCount(0);
  // Allowing jump adds its port; it has no cable yet, and validation says so.
  await gate.getByLabel('Allow intent jump').check();
  await expect(port('jump_out')).toBeVisible();
  await expect.poll(() => findingCodes(page)).toEqual(['validation.intent_unwired']);
  await expect(panel(page).locator('fieldset.intent-gate .field-problems')).toContainText('allows the intent “jump”');
  // No longer allowing escalate takes its port away and leaves its cable dangling.
  await gate.getByLabel('Allow intent jump').uncheck();
  await gate.getByLabel('Allow intent escalate').uncheck();
  await expect(port('escalate_out')).toHaveCount(0);
  await expect(cable(page, 'c6')).toHaveClass(/dangling/);
  await expect.poll(() => findingCodes(page)).toContain('validation.dangling_cable');
  await page.keyboard.press('Control+z');
  await expect(port('escalate_out')).toBeVisible();
  await expect(cable(page, 'c6')).not.toHaveClass(/dangling/);
  await expect.poll(() => findingCodes(page)).toEqual([]);
  // A fallback instead of failing: chosen from the allowed intents.
  const unreadable = panel(page).getByLabel("When the reply's intent cannot be read");
  await expect(unreadable).toHaveValue('fail');
  await unreadable.selectOption('escalate');
  await expect(unreadable).toHaveValue('escalate');

  // Run it: the simulated classifier picks the team the message names,
  // and the cable whose condition holds for it is taken.
  await runWith(page, 'Sales: do you offer a plan for a team of forty?');
  await expect(cable(page, 'c4')).toHaveClass(/taken/);
  await expect(cable(page, 'c2')).toHaveClass(/passed/);
  await expect(node(page, 'sales')).toHaveClass(/run-done/);
  await expect(node(page, 'billing')).not.toHaveClass(/run-done/);
  await runPanel(page).locator('.run-module-entry[data-module-id="classify"]').click();
  const routes = runPanel(page).locator('.run-routes');
  await expect(routes).toContainText('Intent “next”: Simulated reason for this decision.');
  await expect(routes).toContainText("→ next → “Sales reply”: condition 3 held: get('$.output.team') == 'sales'");
  expect(errors).toEqual([]);
});
