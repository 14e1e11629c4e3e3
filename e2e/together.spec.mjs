// Editing together (PRODUCT §3.16), in two browsers (separate contexts, as
// two people's machines) on one graph, and a third with the view link: who
// is here, pointers and selections, every kind of edit appearing in the
// other's canvas, edits at once, one field typed in by both (held by the
// first typist until they pause), undo of one's own, a
// viewer who cannot send, a browser that was offline, a run started by one
// seen live by the other, and two server processes on one PostgreSQL.
import { spawnSync } from 'node:child_process';
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, panel, runPanel, centre } = find;
const { newGraph, drag, runToEnd, ownServer } = act;
const { watchErrors, saved } = check;

/** The graph's edit link, as the Share dialog gives it. */
async function editLink(page, baseURL, id) {
  const token = await page.evaluate((graphId) => localStorage.getItem(`patchbay.edit.${graphId}`), id);
  return `${baseURL}/g/${id}#edit=${token}`;
}

/** A second person, in a browser of their own, on the graph. */
async function secondPerson(browser, address) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(address);
  await expect(page.locator('.access-badge')).toBeVisible();
  return page;
}

const people = (page) => page.getByRole('list', { name: 'People here' }).getByRole('listitem');

test('two editors see each other, their pointers and selections, and every edit the other makes', async ({ page, browser, baseURL }) => {
  const errors = watchErrors(page);
  const id = await newGraph(page);
  const ben = await secondPerson(browser, await editLink(page, baseURL, id));
  const benErrors = watchErrors(ben);
  await expect(ben.locator('.access-badge')).toHaveText('Editing');

  // Who is here: one entry each, you included, on both pages.
  await expect(people(page)).toHaveCount(2);
  await expect(people(page).nth(0)).toHaveText('Editor 1 (you)');
  await expect(people(ben)).toHaveText(['Editor 1', 'Editor 2 (you)']);
  // A name of one's own, kept in the browser, shown to the other.
  await people(page).nth(0).getByRole('button').click();
  await page.getByLabel('Your name').fill('Ana');
  await page.getByLabel('Your name').press('Enter');
  await expect(people(ben).nth(0)).toHaveText('Ana');

  // Ana's pointer over the canvas and her selection, on Ben's canvas.
  const pane = await page.locator('.pane').boundingBox();
  await page.mouse.move(pane.x + 300, pane.y + 300);
  await page.mouse.move(pane.x + 320, pane.y + 310);
  await expect(ben.locator('.peer-pointer')).toHaveText('Ana');
  await node(page, 'm2').locator('.module-header').click();
  await expect(ben.locator('.peer-selection[data-peer="Ana"]')).toHaveCount(1);
  await expect(people(ben).nth(0)).toHaveText('Ana · editing Draft');

  // An add, a move, a cable, a config edit and a re-prompt reorder.
  await page.locator('.palette-item[data-kind="step.agent_task"]').click();
  await expect(ben.locator('[data-node-id]')).toHaveCount(4);
  // A drag: Ben sees the module move before the drop, and where it lands.
  const before = await node(ben, 'm1').boundingBox();
  const grip = await centre(node(page, 'm1').locator('.module-header'));
  await page.mouse.move(grip.x, grip.y);
  await page.mouse.down();
  await page.mouse.move(grip.x, grip.y + 60, { steps: 6 });
  await expect.poll(async () => Math.round((await node(ben, 'm1').boundingBox()).y - before.y)).toBeGreaterThan(30);
  await page.mouse.move(grip.x, grip.y + 120, { steps: 6 });
  await page.mouse.up();
  await expect.poll(async () => Math.round((await node(ben, 'm1').boundingBox()).y - before.y)).toBe(120);
  await page.locator('.pane').focus();
  await node(page, 'm1').locator('.module-header').click();
  await page.keyboard.press('o');
  await page.getByRole('dialog', { name: 'Outputs of Topic' }).locator('[data-port-id="signal_out"]').press('Enter');
  await page.getByRole('dialog', { name: 'Connect to' }).getByRole('button', { name: 'Draft · Start after' }).press('Enter');
  await expect(ben.locator('[data-edge-id]')).toHaveCount(3);
  await node(page, 'm2').locator('.module-header').click();
  await panel(page).getByLabel('Instruction', { exact: true }).fill('Write about tides.');
  await node(ben, 'm2').locator('.module-header').click();
  await expect(panel(ben).getByLabel('Instruction', { exact: true })).toHaveValue('Write about tides.');
  const second = await panel(page).getByLabel('Re-prompt 2', { exact: true }).inputValue();
  await panel(page).getByLabel('Re-prompt 2', { exact: true }).press('Alt+ArrowUp');
  await expect(panel(ben).getByLabel('Re-prompt 1', { exact: true })).toHaveValue(second);
  await saved(page);
  await saved(ben);
  expect(errors).toEqual([]);
  expect(benErrors).toEqual([]);
});

test('edits of two modules made at once are both kept, and undo takes back only one\'s own', async ({ page, browser, baseURL }) => {
  const id = await newGraph(page);
  const ben = await secondPerson(browser, await editLink(page, baseURL, id));
  await expect(people(page)).toHaveCount(2);
  await node(page, 'm1').locator('.module-header').click();
  await node(ben, 'm3').locator('.module-header').click();
  await Promise.all([
    panel(page).getByLabel('Label', { exact: true }).fill('Subject'),
    panel(ben).getByLabel('Label', { exact: true }).fill('Essay'),
  ]);
  for (const person of [page, ben]) {
    await expect(node(person, 'm1')).toContainText('Subject');
    await expect(node(person, 'm3')).toContainText('Essay');
  }
  await saved(page);
  await saved(ben);
  // Ben renames the graph after Ana's edit; Ana's undo takes back hers only.
  await ben.getByLabel('Graph name').fill('Tides');
  await expect(page.getByLabel('Graph name')).toHaveValue('Tides');
  await page.locator('.pane').focus();
  await page.keyboard.press('Control+z');
  for (const person of [page, ben]) {
    await expect(node(person, 'm1')).toContainText('Topic');
    await expect(node(person, 'm3')).toContainText('Essay');
    await expect(person.getByLabel('Graph name')).toHaveValue('Tides');
  }
});

test('two people typing in one instruction at once: it stays the first typist\'s, the other is told once and takes back all they typed', async ({ page, browser, baseURL }) => {
  const errors = watchErrors(page);
  const id = await newGraph(page);
  const ben = await secondPerson(browser, await editLink(page, baseURL, id));
  await expect(people(page)).toHaveCount(2);
  const field = (person) => panel(person).getByLabel('Instruction', { exact: true });
  for (const person of [page, ben]) await node(person, 'm2').locator('.module-header').click();
  const before = await field(page).inputValue();
  // Both put the cursor at the end and type twelve characters, a key every
  // 40 ms, at the same moment; each one's first change waits on the way
  // until the other's has been sent too, so that neither has seen the
  // other's typing when they start (as on two real networks).
  let sent = 0;
  let bothSent;
  const both = new Promise((resolve) => { bothSent = resolve; });
  const meet = async (route) => {
    sent += 1;
    if (sent === 2) bothSent();
    await both;
    await route.continue();
  };
  for (const person of [page, ben]) await person.route('**/api/graphs/*/changes', meet, { times: 1 });
  const typed = { ana: ' AAAA from A', ben: ' BBBB from B' };
  await Promise.all([field(page).press('End'), field(ben).press('End')]);
  await Promise.all([
    field(page).pressSequentially(typed.ana, { delay: 40 }),
    field(ben).pressSequentially(typed.ben, { delay: 40 }),
  ]);
  await Promise.all([saved(page), saved(ben)]);
  // Whoever's first keystroke the server took first holds the field: the
  // instruction is theirs, whole, on both pages and on the server.
  const stored = async () => (await (await page.request.get(`${baseURL}/api/graphs/${id}`)).json())
    .modules.find((module) => module.id === 'm2').config.instruction;
  const final = await stored();
  const winner = final === before + typed.ana ? 'ana' : 'ben';
  expect([before + typed.ana, before + typed.ben], 'a mix that nobody wrote').toContain(final);
  const pages = { ana: page, ben };
  const loser = winner === 'ana' ? 'ben' : 'ana';
  for (const person of [page, ben]) await expect(field(person)).toHaveValue(final);
  // The other is told once, with all they had typed kept whole for them.
  await expect(pages[winner].locator('.together-notice')).toHaveCount(0);
  const notice = pages[loser].locator('.together-notice');
  await expect(notice).toHaveCount(1);
  const words = await notice.locator('p').innerText();
  expect(words).toContain('was typing in “Draft” › instruction when you typed there too');
  const kept = /What you had typed is kept here: “(.*)”$/s.exec(words)[1];
  expect(kept.startsWith(before + typed[loser].slice(0, 1)), `kept: ${kept}`).toBe(true);
  expect((before + typed[loser]).startsWith(kept), `kept: ${kept}`).toBe(true);
  // Taken back once the field is free (two seconds after the last key).
  const takeBack = notice.getByRole('button', { name: 'Take yours back' });
  await expect(takeBack).toBeEnabled({ timeout: 5000 });
  await expect(panel(pages[loser]).locator('.field-held')).toHaveCount(0);
  await takeBack.click();
  await expect(notice).toHaveCount(0);
  await saved(pages[loser]);
  for (const person of [page, ben]) await expect(field(person)).toHaveValue(kept);
  expect(await stored()).toBe(kept);
  expect(errors).toEqual([]);
});

test('a field someone is typing in shows as theirs to the others, read only, until they pause', async ({ page, browser, baseURL }) => {
  const id = await newGraph(page);
  const ben = await secondPerson(browser, await editLink(page, baseURL, id));
  await expect(people(page)).toHaveCount(2);
  const field = (person) => panel(person).getByLabel('Instruction', { exact: true });
  for (const person of [page, ben]) await node(person, 'm2').locator('.module-header').click();
  await field(page).press('End');
  await field(page).pressSequentially(' and more', { delay: 40 });
  // Ben sees Ana's text arrive, the field marked as hers and read only.
  await expect(field(ben)).toHaveValue(/ and more$/);
  await expect(panel(ben).locator('.field-held')).toHaveText('Editor 1 is typing…');
  await expect(field(ben)).toHaveAttribute('readonly', '');
  // What Ben types there goes nowhere, and his panel stays where it is (a
  // space in a read-only field would scroll it away).
  const scrolled = () => panel(ben).evaluate((element) => element.scrollTop);
  const top = await scrolled();
  await field(ben).press('End');
  await ben.keyboard.type('X Y  Z');
  await expect(field(ben)).toHaveValue(/ and more$/);
  expect(await scrolled()).toBe(top);
  // Once she has paused, it is anyone's again.
  await expect(panel(ben).locator('.field-held')).toHaveCount(0, { timeout: 5000 });
  await expect(field(ben)).not.toHaveAttribute('readonly');
  await field(ben).press('End');
  await field(ben).pressSequentially('!');
  await saved(ben);
  await expect(field(page)).toHaveValue(/ and more!$/);
  await expect(page.locator('.together-notice')).toHaveCount(0);
  await expect(ben.locator('.together-notice')).toHaveCount(0);
});

test('a viewer sees edits live and cannot send one, from the page or the API', async ({ page, browser, baseURL }) => {
  const id = await newGraph(page);
  const visitor = await secondPerson(browser, `${baseURL}/g/${id}`);
  await expect(visitor.locator('.access-badge')).toHaveText('View only');
  await expect(people(page)).toHaveText(['Editor 1 (you)', 'Viewer 1 · viewing']);
  await page.getByLabel('Graph name').fill('Shown to the viewer');
  await expect(visitor.getByLabel('Graph name')).toHaveValue('Shown to the viewer');
  await expect(visitor.getByLabel('Graph name')).toBeDisabled();
  // From the API, with the room's connection and a forged token, or none.
  const answers = await visitor.evaluate(async (graphId) => {
    const hello = await new Promise((resolve) => {
      const source = new EventSource(`/api/graphs/${graphId}/room`);
      source.addEventListener('hello', (event) => { source.close(); resolve(JSON.parse(event.data)); });
    });
    const change = { connection: hello.connection, secret: hello.secret, base: hello.revision, edits: [{ set: { path: ['.name'], after: 'Taken over' } }] };
    const send = async (headers) => {
      const reply = await fetch(`/api/graphs/${graphId}/changes`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(change) });
      return [reply.status, (await reply.json()).error.code];
    };
    return [await send({}), await send({ Authorization: 'Bearer forged-forged-forged-forged-forged-forged' })];
  }, id);
  expect(answers).toEqual([[403, 'graph.edit_token_required'], [403, 'graph.edit_token_invalid']]);
  await expect(page.getByLabel('Graph name')).toHaveValue('Shown to the viewer');
});

test('a browser that was offline sends its edits when it is back, merged with what others did meanwhile', async ({ page, browser, baseURL }) => {
  const id = await newGraph(page);
  const ben = await secondPerson(browser, await editLink(page, baseURL, id));
  await expect(people(page)).toHaveCount(2);
  // The panel's code is fetched first: offline, nothing can be.
  await node(ben, 'm3').locator('.module-header').click();
  await expect(panel(ben).getByLabel('Label', { exact: true })).toBeVisible();
  await ben.context().setOffline(true);
  await panel(ben).getByLabel('Label', { exact: true }).fill('Written offline');
  await expect(ben.locator('.save-status')).toContainText('Offline');
  await node(page, 'm1').locator('.module-header').click();
  await panel(page).getByLabel('Label', { exact: true }).fill('Written meanwhile');
  await saved(page);
  await ben.context().setOffline(false);
  for (const person of [page, ben]) {
    await expect(node(person, 'm3')).toContainText('Written offline', { timeout: 15_000 });
    await expect(node(person, 'm1')).toContainText('Written meanwhile', { timeout: 15_000 });
  }
  await saved(ben);
});

test('a run one editor starts shows live on the other\'s canvas', async ({ page, browser, baseURL }) => {
  const id = await newGraph(page);
  const ben = await secondPerson(browser, await editLink(page, baseURL, id));
  await expect(people(page)).toHaveCount(2);
  await runToEnd(page, 'Tides');
  await expect(runPanel(ben).locator('.run-status')).toHaveText('Completed', { timeout: 30_000 });
  await expect(node(ben, 'm2').locator('.run-badge')).toBeVisible();
});

test('editors on two server processes on one PostgreSQL see each other and each other\'s edits', async ({ page, browser }) => {
  const admin = process.env.PATCHBAY_TEST_POSTGRES_URL;
  test.skip(!admin, 'no PostgreSQL here (scripts/test sets PATCHBAY_TEST_POSTGRES_URL)');
  const name = `patchbay_test_e2e_${Date.now()}`; // cleared by the next scripts/test
  const made = spawnSync('psql', [admin, '-q', '-c', `CREATE DATABASE ${name}`], { encoding: 'utf8' });
  expect(made.status, made.stderr).toBe(0);
  const databaseUrl = admin.replace(/\/[^/]*$/, `/${name}`);
  // One after the other: the first applies the migrations.
  const first = await ownServer({ databaseUrl });
  const second = await ownServer({ databaseUrl });
  try {
    await page.goto(`${first.base}/new`);
    await expect(page.locator('.access-badge')).toHaveText('Editing');
    const id = page.url().split('/g/')[1].split(/[?#]/)[0];
    const ben = await secondPerson(browser, await editLink(page, second.base, id));
    await expect(people(page)).toHaveCount(2);
    await expect(people(ben)).toHaveCount(2);
    await node(page, 'm1').locator('.module-header').click();
    await panel(page).getByLabel('Label', { exact: true }).fill('From the first process');
    await expect(node(ben, 'm1')).toContainText('From the first process');
    const before = await node(page, 'm3').boundingBox();
    await drag(ben, 'm3', 0, 100);
    await expect.poll(async () => Math.round((await node(page, 'm3').boundingBox()).y - before.y)).toBe(100);
  } finally {
    first.stop();
    second.stop();
  }
});
