// A person in the loop (PRODUCT §3.14), through the UI against the real
// server: a coding module run by the built-in simulated ACP agent writes a
// file and runs its tests, and an approval waits for a person. The canvas
// says "Waiting for you", the run panel shows the diff as a diff and the
// test results; the editor approves and only the approved branch runs; an
// approver link opened in a second browser (no edit token there) sends the
// work back with feedback, the agent does it again and the approval asks
// again; a decision that comes second is told who decided first; the home
// page lists the graph as waiting.
import { test, expect } from '@playwright/test';
import { find, check } from './support.mjs';

const { node, runPanel } = find;
const { watchErrors } = check;

const badge = (page, id) => node(page, id).locator('.run-badge');
const decision = (page) => runPanel(page).getByRole('tabpanel', { name: 'Decision' });

const QUESTION = 'Ship the change to hello.txt?';

const module = (id, kind, label, x, y, config = {}) => ({ id, kind, label, position: { x, y }, config });
const cable = (id, from, to) => ({
  id, from: { module: from[0], port: from[1] }, to: { module: to[0], port: to[1] },
});

/** Request → Build (a coding module: writes hello.txt and a test, runs the
 * test) → Review (an approval shown the diff and the test results) →
 * Shipped when approved, Stopped when rejected, back to Build when sent
 * back, Late when nobody decides within the hour. */
function approvalGraph() {
  return {
    name: 'A person approves the change',
    modules: [
      module('m1', 'step.input', 'Request', 40, 160),
      module('m2', 'step.coding', 'Build', 280, 160, {
        instruction: [
          'write hello.txt: Hello from the canvas',
          'write test.sh: grep -q Hello hello.txt && echo "1 passed: hello.txt greets"',
          'run the tests',
        ].join('\n'),
        agents: [{ role: 'builder' }],
        capture_test_results: true,
        // Sent back, the agent takes the feedback as its next turn.
        session_style: 'park',
      }),
      module('m4', 'step.approval', 'Review', 540, 160, { ask: QUESTION, timeout_seconds: 3600 }),
      module('m3', 'step.output', 'Shipped', 800, 60),
      module('m5', 'step.output', 'Stopped', 800, 200),
      module('m6', 'step.output', 'Late', 800, 340),
    ],
    cables: [
      cable('c1', ['m1', 'data_out'], ['m2', 'data_in']),
      cable('c2', ['m2', 'data_out'], ['m4', 'data_in']),
      cable('c3', ['m2', 'diff_out'], ['m4', 'context_in']),
      cable('c4', ['m2', 'test_results_out'], ['m4', 'context_in']),
      cable('c5', ['m4', 'approved_out'], ['m3', 'data_in']),
      cable('c6', ['m4', 'rejected_out'], ['m5', 'data_in']),
      cable('c7', ['m4', 'revise_out'], ['m2', 'data_in']),
      cable('c8', ['m4', 'timeout_out'], ['m6', 'data_in']),
    ],
  };
}

/** Makes the graph on the server and opens it with its edit link; returns
 * its id. */
async function openApprovalGraph(page) {
  const created = await (await page.request.post('/api/graphs', { data: approvalGraph() })).json();
  await page.goto(created.edit_url);
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await expect(node(page, 'm4')).toContainText('Review');
  return created.id;
}

/** Starts a run from the run dialog, as a person does. */
async function startRun(page, text) {
  await page.locator('.pane').focus();
  await page.keyboard.press('Control+Enter');
  const dialog = page.getByRole('dialog', { name: 'Run the graph' });
  await expect(dialog).toBeVisible();
  await dialog.getByLabel('Run input').fill(text);
  await dialog.getByLabel('Run input').press('Control+Enter');
  await expect(dialog).toBeHidden();
}

/** The run's id, from the address the editor keeps it in. */
function runIdOf(page) {
  return new URL(page.url()).searchParams.get('run');
}

test('a run waits at an approval: the badge, the diff and the tests in the panel, and Approve from the editor runs only the approved branch', async ({ page }) => {
  test.setTimeout(90_000);
  const errors = watchErrors(page, { consoleErrors: false });
  await openApprovalGraph(page);
  await startRun(page, 'a greeting');

  // The canvas says who is waited for.
  await expect(badge(page, 'm4')).toHaveText('✋ Waiting for you', { timeout: 45_000 });
  await expect(node(page, 'm4')).toHaveClass(/run-waiting/);
  await expect(badge(page, 'm3')).toHaveText('not reached');
  const panel = runPanel(page);
  await expect(panel.locator('.run-status')).toHaveText('Waiting for a person');

  // The panel opens on the question, with the diff rendered as a diff.
  await expect(panel.getByRole('tab', { name: 'Decision' })).toHaveAttribute('aria-selected', 'true');
  const asked = decision(page);
  await expect(asked.locator('.decision-asked')).toHaveText(QUESTION);
  await expect(asked.locator('.decision-deadline')).toContainText('Times out at');
  const diff = asked.getByRole('region', { name: 'From “Build” · Diff' });
  await expect(diff.locator('.diff-path').first()).toHaveText('hello.txt');
  const added = diff.locator('.diff-line.added', { hasText: '+Hello from the canvas' });
  await expect(added).toHaveCount(1);
  // Coloured as an added line, unlike the hunk header above it.
  await expect(added).toHaveCSS('background-color', 'rgb(27, 51, 38)');
  await expect(diff.locator('.diff-line.hunk').first()).toContainText('@@');
  const tests = asked.getByRole('region', { name: 'From “Build” · Test results' });
  await expect(tests.locator('.tests-verdict')).toHaveText('✓ Tests passed (exit code 0)');
  await expect(tests.locator('.tests-output')).toContainText('1 passed: hello.txt greets');
  // The value passed on is the agents' reply, and may be edited.
  const value = asked.getByLabel(/The value it passes on when approved/);
  await expect(value).toHaveValue(/builder/);

  // Approve, from the keyboard: the decision is said, and only the
  // approved branch runs.
  await asked.getByRole('button', { name: 'Approve', exact: true }).focus();
  await page.keyboard.press('Enter');
  await expect(asked.locator('.decision-outcome-line')).toContainText('Approved by the editor');
  await expect(badge(page, 'm3')).toContainText('✓');
  await expect(panel.locator('.run-status')).toHaveText('Completed');
  // Rejected and Late never ran.
  for (const other of ['m5', 'm6']) {
    await expect(badge(page, other)).toHaveCount(0);
    await expect(node(page, other)).not.toHaveClass(/run-done/);
  }
  await expect(badge(page, 'm4')).toContainText('✓');
  // What the agent said reached the approved branch.
  await panel.locator('.run-module-entry[data-module-id="m3"]').click();
  await expect(panel.locator('.run-output')).toContainText('builder');
  expect(errors).toEqual([]);
});

test('an approver link in a second browser sends the work back with feedback, and the agent does it again', async ({ page, browser }) => {
  test.setTimeout(150_000);
  const errors = watchErrors(page, { consoleErrors: false });
  const graphId = await openApprovalGraph(page);
  await startRun(page, 'a greeting');
  await expect(badge(page, 'm4')).toHaveText('✋ Waiting for you', { timeout: 45_000 });
  const runId = runIdOf(page);

  // The home page says the graph waits, and links to the run.
  const home = await page.context().newPage();
  await home.goto('/');
  const line = home.locator(`.home-graph[data-graph-id="${graphId}"]`);
  const waiting = line.getByRole('link', { name: '✋ Waiting for you' });
  await expect(waiting).toHaveAttribute('href', `/g/${graphId}/runs/${runId}`);
  await home.close();

  // The editor makes an approver link for someone else.
  await decision(page).getByRole('button', { name: 'Make an approver link' }).click();
  const linkField = decision(page).getByRole('textbox', { name: 'Approver link' });
  await expect(linkField).toHaveValue(new RegExp(`/g/${graphId}/runs/${runId}#approve=`));
  const link = await linkField.inputValue();

  // A second browser, with no edit token: the run, read-only, and the
  // decision.
  const approverContext = await browser.newContext();
  const approver = await approverContext.newPage();
  const approverErrors = watchErrors(approver, { consoleErrors: false });
  await approver.goto(link);
  await expect(approver.locator('.access-badge')).toHaveText('Approver link');
  // The token left the address (it never went to the server in it).
  await expect(approver).not.toHaveURL(/approve=/);
  expect(await approver.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('patchbay.edit.')))).toEqual([]);
  await expect(badge(approver, 'm4')).toHaveText('✋ Waiting for you');
  await expect(decision(approver).locator('.decision-asked')).toHaveText(QUESTION);
  await expect(decision(approver).locator('.diff-line.added', { hasText: '+Hello from the canvas' })).toHaveCount(1);
  // Nothing but the decision: no run, save, cancel or link controls.
  await expect(approver.locator('.run-button')).toHaveCount(0);
  await expect(approver.getByRole('button', { name: 'Cancel run' })).toHaveCount(0);
  await expect(approver.locator('.save-status')).toHaveText('View only');
  await expect(approver.locator('.palette')).toHaveCount(0);
  await expect(approver.getByRole('button', { name: 'Make an approver link' })).toHaveCount(0);

  // Sending back needs feedback.
  const form = decision(approver);
  await form.getByRole('button', { name: 'Send back' }).click();
  await expect(form.getByRole('alert')).toHaveText('Say what to do again: sending it back needs feedback.');
  const feedback = form.getByLabel(/Feedback/);
  await expect(feedback).toBeFocused();
  await feedback.fill('write notes.txt: Keep the greeting short.');
  await form.getByRole('button', { name: 'Send back' }).click();
  await expect(form.locator('.decision-outcome-line')).toContainText('Sent back by an approver link');

  // The agent is prompted again with the feedback, and the approval asks
  // again, in both browsers.
  await expect(badge(approver, 'm4')).toHaveText('✋ Waiting for you', { timeout: 45_000 });
  await expect(decision(approver).locator('.diff-line.added', { hasText: '+Keep the greeting short.' })).toHaveCount(1, { timeout: 15_000 });
  await expect(runPanel(approver).getByRole('button', { name: 'Round 2' })).toHaveAttribute('aria-pressed', 'true');
  // In the session it worked in: its second turn there.
  await expect(decision(approver).getByRole('region', { name: 'From “Build” · Output' })).toContainText('Simulated agent, turn 2.');
  await expect(badge(page, 'm4')).toHaveText('✋ Waiting for you');
  await expect(badge(page, 'm3')).toHaveText('not reached');
  await runPanel(page).locator('.run-module-entry[data-module-id="m2"]').click();
  await runPanel(page).getByRole('tab', { name: 'Transcript' }).click();
  await expect(runPanel(page).locator('.run-output')).toContainText('Keep the greeting short.');

  // A page of the approver's that stopped hearing the run (its event
  // stream cut) still shows the question; the editor decides first, and
  // that page is told who did.
  const stale = await approverContext.newPage();
  await stale.route('**/api/runs/*/events', (route) => route.abort());
  await stale.goto(`/g/${graphId}/runs/${runId}`);
  await expect(stale.locator('.access-badge')).toHaveText('Approver link');
  await expect(decision(stale).locator('.diff-line.added', { hasText: '+Keep the greeting short.' })).toHaveCount(1);
  await runPanel(page).locator('.run-module-entry[data-module-id="m4"]').click();
  await decision(page).getByRole('button', { name: 'Approve', exact: true }).click();
  await expect(decision(page).locator('.decision-outcome-line')).toContainText('Approved by the editor');
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed');
  await decision(stale).getByRole('button', { name: 'Approve', exact: true }).click();
  await expect(decision(stale).locator('.decision-late')).toHaveText('Someone already decided:');
  await expect(decision(stale).locator('.decision-outcome-line')).toContainText('Approved by the editor');
  await expect(badge(approver, 'm3')).toContainText('✓');

  await approverContext.close();
  expect(errors).toEqual([]);
  expect(approverErrors).toEqual([]);
});

/** Request → Review (an approval) → Shipped when approved, Stopped when
 * rejected: a person's decision and nothing else. */
function lightApprovalGraph() {
  return {
    name: 'Approve or reject',
    modules: [
      module('m1', 'step.input', 'Request', 40, 160),
      module('m4', 'step.approval', 'Review', 300, 160, { ask: QUESTION }),
      module('m3', 'step.output', 'Shipped', 560, 60),
      module('m5', 'step.output', 'Stopped', 560, 260),
    ],
    cables: [
      cable('c1', ['m1', 'data_out'], ['m4', 'data_in']),
      cable('c5', ['m4', 'approved_out'], ['m3', 'data_in']),
      cable('c6', ['m4', 'rejected_out'], ['m5', 'data_in']),
    ],
  };
}

test('a graph opened from the home page while its run waits opens that run\'s decision, and a rejection says rejected everywhere, with no tick', async ({ page }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  const created = await (await page.request.post('/api/graphs', { data: lightApprovalGraph() })).json();
  await page.goto(created.edit_url);
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await startRun(page, 'a greeting');
  await expect(badge(page, 'm4')).toHaveText('✋ Waiting for you');
  const runId = runIdOf(page);

  // From the home page, by the graph's name: the editor opens on the
  // waiting run's decision.
  await page.goto('/');
  const line = page.locator(`.home-graph[data-graph-id="${created.id}"]`);
  await expect(line.getByRole('link', { name: '✋ Waiting for you' })).toBeVisible();
  const name = line.locator('.home-graph-name');
  await expect(name).toHaveAttribute('href', `/g/${created.id}?run=${runId}`);
  await name.click();
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  await expect(runPanel(page).getByRole('tab', { name: 'Decision' })).toHaveAttribute('aria-selected', 'true');
  await expect(decision(page).locator('.decision-asked')).toHaveText(QUESTION);
  // Opened by its plain address (a bookmark), the same.
  await page.goto(`/g/${created.id}`);
  await expect(decision(page).locator('.decision-asked')).toHaveText(QUESTION);
  await expect(page).toHaveURL(new RegExp(`run=${runId}`));

  // Rejected: the module says so, amber, with no tick, live…
  const form = decision(page);
  await form.getByLabel(/Feedback/).fill('Not this one');
  await form.getByRole('button', { name: 'Reject' }).click();
  await expect(form.locator('.decision-outcome-line')).toContainText('Rejected by the editor');
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed');
  const says = async () => {
    await expect(badge(page, 'm4')).toHaveText(/^⊘ Rejected/);
    await expect(node(page, 'm4')).toHaveClass(/run-rejected/);
    await expect(node(page, 'm4')).not.toHaveClass(/run-done/);
    const entry = runPanel(page).locator('.run-module-entry[data-module-id="m4"]');
    await expect(entry).toContainText('Rejected');
    await expect(entry).not.toContainText('✓');
    await expect(badge(page, 'm5')).toContainText('✓');
  };
  await says();
  // …and after a reload, from the record.
  await page.reload();
  await says();
  // Decided, the home page no longer says it waits, once back on it.
  await page.goto('/');
  await expect(page.locator(`.home-graph[data-graph-id="${created.id}"]`).getByRole('link', { name: '✋ Waiting for you' })).toHaveCount(0);
  expect(errors).toEqual([]);
});
