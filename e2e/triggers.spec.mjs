// The Triggers dialog (PRODUCT §1.5, §6.5), through the UI: a schedule
// shows its next times as its cron is typed, says what is wrong with one
// the server cannot read (and keeps the saved one), and is saved in the
// document; a webhook shows its address and makes its secret once, which a
// program then posts to; pausing is saved; the run history says a webhook
// started the run. A view link has no Triggers button.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { runPanel } = find;
const { newGraph } = act;
const { watchErrors, saved } = check;

async function stored(page, graphId) {
  const response = await page.request.get(`/api/graphs/${graphId}`);
  return (await response.json()).triggers;
}

test('a schedule shows its next times and a webhook its address and secret, and the history says what started a run', async ({ page, browser }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  const graphId = await newGraph(page);
  await page.getByRole('button', { name: 'Triggers', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Triggers' });
  await expect(dialog).toContainText('No triggers yet');

  // A schedule: the next five times as the server reads the cron.
  await dialog.getByRole('button', { name: 'Add a schedule' }).click();
  const schedule = dialog.getByRole('region', { name: 'Schedule schedule-1' });
  await expect(schedule.locator('.trigger-times li')).toHaveCount(5);
  const cron = schedule.locator('input[name=cron]');
  await expect(cron).toHaveValue('0 9 * * MON-FRI');
  await schedule.locator('input[name=timezone]').fill('Europe/Paris');
  await cron.fill('61 * * * *');
  await expect(schedule.getByRole('alert')).toContainText('61');
  await expect(cron).toHaveAttribute('aria-invalid', 'true');
  await cron.fill('*/15 * * * *');
  await expect(schedule.getByRole('alert')).toHaveCount(0);
  await expect(schedule.locator('.trigger-times li').first()).toContainText(/:(00|15|30|45):00 CES?T/);
  await saved(page);
  let triggers = await stored(page, graphId);
  expect(triggers).toEqual([{ id: 'schedule-1', kind: 'schedule', cron: '*/15 * * * *', timezone: 'Europe/Paris', catch_up: 'one' }]);

  // Paused, and the choice for missed ticks, saved with the graph.
  await schedule.getByLabel('Paused').check();
  await schedule.locator('select[name=catch_up]').selectOption('none');
  await saved(page);
  triggers = await stored(page, graphId);
  expect(triggers[0]).toMatchObject({ paused: true, catch_up: 'none' });

  // A webhook: its address, and a secret shown this once.
  await dialog.getByRole('button', { name: 'Add a webhook' }).click();
  const webhook = dialog.locator('section.webhook');
  const address = await webhook.locator('input[name=webhook-address]').inputValue();
  expect(address).toMatch(/\/hooks\/hook-[0-9a-f]{6}$/);
  await webhook.getByRole('button', { name: 'Make a secret' }).click();
  const secret = await webhook.locator('input[name=webhook-secret]').inputValue();
  expect(secret).toMatch(/^pbh_/);
  await expect(webhook.locator('input[name=webhook-example]')).toHaveValue(new RegExp(`curl -X POST .*/hooks/hook-.*${secret}`));
  await expect(webhook.getByRole('button', { name: 'Make a new secret' })).toBeVisible();
  await page.screenshot({ path: 'e2e/test-results/triggers-dialog.png' });

  // A program posts to it; the run history says the webhook started it.
  const delivered = await page.request.post(address, {
    headers: { 'X-Patchbay-Secret': secret, 'Content-Type': 'application/json' },
    data: { subject: 'Printer on fire' },
  });
  expect(delivered.status()).toBe(202);
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(dialog).toBeHidden();
  await page.getByRole('button', { name: 'Runs', exact: true }).click();
  const hookId = address.split('/hooks/')[1];
  await expect(runPanel(page).locator('.history-run .history-started-by')).toHaveText(`by webhook “${hookId}”`);

  // A view link shows no Triggers button.
  const visitor = await browser.newPage();
  await visitor.goto(`/g/${graphId}`);
  await expect(visitor.locator('.access-badge')).toHaveText('View only');
  await expect(visitor.getByRole('button', { name: 'Triggers', exact: true })).toHaveCount(0);
  expect(errors).toEqual([]);
});
