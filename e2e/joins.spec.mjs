// How a module's inputs join, through the UI: the panel's Inputs choice,
// the `⋁ any` mark on the module, and a run of two branches into a module
// that runs on the first to arrive and lists the other as ignored.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, panel, runPanel } = find;
const { newGraph, runToEnd, wire, drag } = act;
const { watchErrors, saved } = check;

test('a module that joins any runs on the first input and lists the one it ignored', async ({ page }) => {
  const errors = watchErrors(page);
  await newGraph(page);
  // A second, slow branch from Topic into the Final essay.
  await page.locator('.palette-item[data-kind="step.agent_task"]').click();
  await expect(node(page, 'm4')).toBeVisible();
  await drag(page, 'm4', 0, 260);
  await panel(page).getByLabel('Label').fill('Slow draft');
  await panel(page).getByLabel('Instruction', { exact: true }).fill('Take your time. [sim:sleep 8]');
  // The panel would cover the Final essay's input.
  await panel(page).getByRole('button', { name: 'Close details' }).click();
  await wire(page, ['m1', 'data_out'], ['m4', 'data_in']);
  await wire(page, ['m4', 'data_out'], ['m3', 'data_in']);
  await expect(page.locator('[data-edge-id]')).toHaveCount(4);

  await node(page, 'm3').locator('.module-header').click();
  const inputs = panel(page).getByLabel('Inputs');
  await expect(inputs).toHaveValue('all');
  await expect(node(page, 'm3').locator('.module-header')).not.toContainText('⋁ any');
  await inputs.selectOption('any');
  await expect(node(page, 'm3').locator('.module-header')).toContainText('⋁ any');
  await expect(panel(page)).toContainText('It runs on the first value to arrive');
  await saved(page);

  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await runToEnd(page, 'tides');
  await runPanel(page).locator('.run-module-entry[data-module-id="m3"]').click();
  await expect(runPanel(page).getByRole('group', { name: 'Activations' })).toHaveCount(0);
  await expect(runPanel(page).locator('.run-routes')).toContainText('Ignored the value from “Slow draft”');
  expect(errors).toEqual([]);
});
