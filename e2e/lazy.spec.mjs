// The bundle is split (docs/manual/development.md, Building): the home page is the main module
// and a part of its own; a graph's page is the main module and the page's part (the editor
// and its canvas); what no page shows when it opens — a module's detail
// panel, the run panel, the run, history, share and comparison dialogs — is
// a chunk fetched the first time it is shown. A view link fetches none of
// them; an editor opens each once and it works, with a "Loading…"
// placeholder at most, never an error.
import { test, expect } from '@playwright/test';
import { find, act, check } from './support.mjs';

const { node, panel, runPanel } = find;
const { newGraph, pasteInNewGraph, startRun, runToEnd } = act;
const { watchErrors, saved } = check;

/** The parts (split_…) among chunks' file names, without their hash. */
const parts = (chunks) => chunks.filter((name) => name.startsWith('split_')).map((name) => name.replace(/_\d+\.wasm$/, ''));

/** The chunks of the split bundle a page has asked for, by file name. */
function chunkRequests(page) {
  const chunks = [];
  page.on('request', (request) => {
    const name = new URL(request.url()).pathname.split('/').pop();
    if (/^(split_|chunk_).*\.wasm$/.test(name)) chunks.push(name);
  });
  return chunks;
}

/** Drops the connection for one part's chunk (`split_{part}_…`); returns
 * the page's uncaught errors (a part that cannot be fetched is said, and
 * logged, never thrown). */
async function losePart(page, part) {
  await page.route(new RegExp(`/pkg/split_${part}_\\d+\\.wasm$`), (route) => route.abort());
  return watchErrors(page, { consoleErrors: false });
}

/** Holds back one part's chunk (`split_{part}_…`) until the returned
 * function is called, as a slow network would. */
async function holdPart(page, part) {
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route(new RegExp(`/pkg/split_${part}_\\d+\\.wasm$`), async (route) => {
    await held;
    await route.continue();
  });
  return release;
}

/** The stylesheets a page has asked for, by file name. */
function stylesheetRequests(page) {
  const sheets = [];
  page.on('request', (request) => {
    const name = new URL(request.url()).pathname.split('/').pop();
    if (name.endsWith('.css')) sheets.push(name);
  });
  return sheets;
}

test('the home page is the main module and its own part, and a graph opened from it fetches the page\'s part', async ({ page }) => {
  const errors = watchErrors(page);
  await newGraph(page);
  // The graph's page has fetched all it will (its check comes a moment
  // after it is interactive): what follows is the home page's.
  await page.waitForLoadState('networkidle');
  const chunks = chunkRequests(page);
  const sheets = stylesheetRequests(page);
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Your graphs' })).toBeVisible();
  await page.waitForLoadState('networkidle');
  const line = page.locator('.home-graph').first();
  await expect(line).toBeVisible();
  // Its own part, and nothing another page uses.
  expect(parts(chunks)).toEqual(['split_home_part']);
  expect(chunks.filter((name) => name.startsWith('chunk_'))).toEqual([]);
  // Only the stylesheet of every page; still styled as the home page.
  expect(sheets).toEqual(['app.css']);
  await expect(line.locator('.home-graph-name')).toHaveCSS('font-weight', '600');
  // Opened from the list: the graph's page fetches its part and its
  // stylesheet, then the editor works (and looks like one).
  await line.locator('.home-graph-name').click();
  await expect(node(page, 'm2')).toBeVisible();
  expect(parts(chunks)).toContain('split_page');
  expect(sheets).toContain('editor.css');
  await expect(node(page, 'm2')).toHaveCSS('position', 'absolute');
  await node(page, 'm2').locator('.module-header').click();
  await expect(panel(page).getByLabel('Label')).toHaveValue('Draft');
  expect(errors).toEqual([]);
});

test('a view link is drawn and hydrated from the main module and the page\'s part, and never fetches what only editors use', async ({ page, browser }) => {
  await newGraph(page);
  const address = page.url().split('#')[0];

  const visitor = await browser.newPage();
  const errors = watchErrors(visitor);
  const chunks = chunkRequests(visitor);
  await visitor.goto(address);
  await expect(visitor.locator('.access-badge')).toHaveText('View only');
  await expect(node(visitor, 'm2')).toBeVisible();
  await visitor.waitForLoadState('networkidle');
  // The editor who made the graph has it open too: who is here is a part of
  // its own, fetched because someone else is (alone, a page never does).
  await expect(visitor.getByRole('list', { name: 'People here' }).getByRole('listitem')).toHaveCount(2);
  // The graph's check, its room and what copies modules come once the
  // page is interactive (the check's badge, who is here and copying are
  // everyone's).
  expect(parts(chunks).sort()).toEqual(['split_check_graph', 'split_clipboard_part', 'split_page', 'split_room_part', 'split_together_part']);
  // Hydrated: the zoom buttons work. A visitor may look at a module's
  // details (that chunk loads), never at what editing needs.
  await visitor.getByRole('button', { name: 'Zoom in' }).click();
  await expect(visitor.locator('.zoom-level')).not.toHaveText('100%');
  await node(visitor, 'm2').locator('.module-header').click();
  await expect(panel(visitor).getByLabel('Label')).toHaveValue('Draft');
  await visitor.getByRole('button', { name: /Fork and run/ }).hover();
  await visitor.getByRole('button', { name: 'Share', exact: true }).hover();
  await visitor.waitForLoadState('networkidle');
  // Pressing Delete asks for an edit: a visitor is told, and nothing editing
  // needs is fetched for it.
  await visitor.locator('.pane').click({ position: { x: 600, y: 30 } });
  await node(visitor, 'm2').locator('.module-header').click();
  await visitor.keyboard.press('Delete');
  await expect(visitor.locator('.toast')).toHaveText('This graph is view only: fork it to edit.');
  await expect(node(visitor, 'm2')).toBeVisible();
  await visitor.waitForLoadState('networkidle');
  for (const editorOnly of ['run_dialog', 'history_dialog', 'run_comparison', 'run_panel', 'palette', 'run_stream', 'decode_link', 'run_page', 'other_page', 'editing_part']) {
    expect(chunks.filter((name) => name.startsWith(`split_${editorOnly}_`)), editorOnly).toEqual([]);
  }
  expect(errors).toEqual([]);
  await visitor.close();
});

test('a page whose part cannot be fetched says so and stays as the server drew it, without a panic', async ({ page, browser }) => {
  await newGraph(page);
  const address = page.url().split('#')[0];

  const visitor = await browser.newPage();
  // The connection drops for the page's part alone.
  const uncaught = await losePart(visitor, 'page');
  await visitor.goto(address);
  await expect(visitor.getByRole('alert')).toHaveText(/code could not be fetched.*Reload the page to try again/);
  // The server's drawing is still there to read.
  await expect(node(visitor, 'm2')).toBeVisible();
  expect(uncaught).toEqual([]);
  await visitor.close();
});

test('the home page whose part cannot be fetched says so and still shows the examples the server drew', async ({ page }) => {
  const uncaught = await losePart(page, 'home_part');
  await page.goto('/');
  await expect(page.getByRole('alert')).toHaveText(/code could not be fetched.*Reload the page to try again/);
  await expect(page.getByRole('link', { name: /New graph/ }).first()).toBeVisible();
  expect(uncaught).toEqual([]);
});

test('a graph whose check cannot be fetched says so once, and the editor goes on working', async ({ page }) => {
  const uncaught = await losePart(page, 'check_graph');
  await newGraph(page);
  await expect(page.locator('.toast')).toContainText('The graph cannot be checked: Part of this page');
  await node(page, 'm2').locator('.module-header').click();
  await expect(panel(page).getByLabel('Label')).toHaveValue('Draft');
  expect(uncaught).toEqual([]);
});

test('a run whose stream\'s part cannot be fetched says it cannot be shown as it happens, and the page goes on', async ({ page }) => {
  const uncaught = await losePart(page, 'run_stream');
  await newGraph(page);
  await startRun(page, 'Why tide tables matter');
  await expect(runPanel(page).locator('.run-error')).toContainText('cannot be shown as it happens');
  await node(page, 'm2').locator('.module-header').click();
  await expect(panel(page).getByLabel('Label')).toHaveValue('Draft');
  expect(uncaught).toEqual([]);
});

test('a reload with a run in the address whose stream\'s part cannot be fetched says the run cannot be shown, and the page goes on', async ({ page }) => {
  await newGraph(page);
  await runToEnd(page, 'Why tide tables matter');
  expect(new URL(page.url()).searchParams.get('run')).toBeTruthy();
  const uncaught = await losePart(page, 'run_stream');
  await page.reload();
  await expect(page.locator('.toast')).toContainText('The run in the address cannot be shown. Part of this page');
  await node(page, 'm2').locator('.module-header').click();
  await expect(panel(page).getByLabel('Label')).toHaveValue('Draft');
  expect(uncaught).toEqual([]);
});

test('a graph whose room\'s part cannot be fetched says so, and the page goes on working', async ({ page }) => {
  const uncaught = await losePart(page, 'room_part');
  await newGraph(page);
  await expect(page.locator('.toast')).toContainText('What others do here cannot be shown');
  await page.getByRole('button', { name: 'Zoom in' }).click();
  await expect(page.locator('.zoom-level')).not.toHaveText('100%');
  expect(uncaught).toEqual([]);
});

test('edits asked for before the editing part has arrived wait for it, and are made in the order asked', async ({ page }) => {
  const errors = watchErrors(page);
  const release = await holdPart(page, 'editing_part');
  await newGraph(page);
  // A new name typed key by key (an edit a key), then a module deleted.
  const name = page.getByLabel('Graph name');
  await name.fill('');
  await name.pressSequentially('Tide');
  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await node(page, 'm3').locator('.module-header').click();
  await page.keyboard.press('Delete');
  // Nothing is lost while the part is on its way: the edits wait.
  await expect(node(page, 'm3')).toBeVisible();
  await expect(page.locator('.save-status')).toHaveText('Saved');
  release();
  await expect(node(page, 'm3')).toHaveCount(0);
  await saved(page);
  // In order: the undo takes back the deletion, then the name a key at a
  // time (typing one field is one step).
  await page.keyboard.press('Control+z');
  await expect(node(page, 'm3')).toBeVisible();
  await expect(name).toHaveValue('Tide');
  await saved(page);
  await page.reload();
  await expect(page.getByLabel('Graph name')).toHaveValue('Tide');
  await expect(node(page, 'm3')).toBeVisible();
  expect(errors).toEqual([]);
});

test('an editing part that cannot be fetched says so once, and the edits wait for it', async ({ page }) => {
  const uncaught = await losePart(page, 'editing_part');
  await newGraph(page);
  await expect(page.locator('.toast')).toContainText('The graph cannot be edited: Part of this page');
  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await node(page, 'm3').locator('.module-header').click();
  await page.keyboard.press('Delete');
  await expect(node(page, 'm3')).toBeVisible();
  // The connection is back: the next edit fetches the part, and both are made.
  await page.unroute(new RegExp('/pkg/split_editing_part_\\d+\\.wasm$'));
  await node(page, 'm2').locator('.module-header').click();
  await page.keyboard.press('Delete');
  await expect(node(page, 'm3')).toHaveCount(0);
  await expect(node(page, 'm2')).toHaveCount(0);
  await saved(page);
  // The app did not stop: the canvas still zooms.
  await page.getByRole('button', { name: 'Zoom in' }).click();
  await expect(page.locator('.zoom-level')).not.toHaveText('100%');
  expect(uncaught).toEqual([]);
});

test('a cut made before its part has arrived copies when it arrives, and only then deletes', async ({ page, context }) => {
  const errors = watchErrors(page);
  const release = await holdPart(page, 'clipboard_part');
  await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  await page.keyboard.press('Control+x');
  // Nothing is deleted before it is on the clipboard.
  await expect(node(page, 'm2')).toBeVisible();
  release();
  await expect(node(page, 'm2')).toHaveCount(0);

  const other = await pasteInNewGraph(context);
  await expect(node(other, 'm4')).toContainText('Draft');
  expect(errors).toEqual([]);
});

test('a visitor\'s cut on a view link copies the module and deletes nothing', async ({ page, browser }) => {
  await newGraph(page);
  const address = page.url().split('#')[0];
  const visitorContext = await browser.newContext();
  const visitor = await visitorContext.newPage();
  const errors = watchErrors(visitor);
  await visitor.goto(address);
  await expect(visitor.locator('.access-badge')).toHaveText('View only');
  await node(visitor, 'm2').locator('.module-header').click();
  await visitor.keyboard.press('Control+x');
  await expect(visitor.locator('.toast')).toHaveText('This graph is view only: fork it to edit.');
  await expect(node(visitor, 'm2')).toBeVisible();
  // What was copied pastes into a graph of the visitor's own.
  const own = await pasteInNewGraph(visitorContext);
  await expect(node(own, 'm4')).toContainText('Draft');
  // The graph they only look at is as it was, on the server too.
  await page.reload();
  await expect(node(page, 'm2')).toBeVisible();
  expect(errors).toEqual([]);
  await visitorContext.close();
});

test('a cut whose part cannot be fetched says nothing was copied, and deletes nothing', async ({ page }) => {
  const uncaught = await losePart(page, 'clipboard_part');
  await newGraph(page);
  await page.waitForLoadState('networkidle');
  await node(page, 'm2').locator('.module-header').click();
  await page.keyboard.press('Control+x');
  await expect(page.locator('.toast')).toContainText('Nothing was copied. Part of this page\'s code could not be fetched');
  await expect(node(page, 'm2')).toBeVisible();
  // The connection is back: the next cut fetches the part, and cuts.
  await page.unroute(new RegExp('/pkg/split_clipboard_part_\\d+\\.wasm$'));
  await page.keyboard.press('Control+x');
  await expect(node(page, 'm2')).toHaveCount(0);
  expect(uncaught).toEqual([]);
});

test('a self-contained link whose decoder cannot be fetched says so in the page\'s place', async ({ page }) => {
  const uncaught = await losePart(page, 'decode_link');
  await page.goto('/open#graph=not-a-graph');
  // With its decoder, this link would be refused as unreadable instead.
  await expect(page.getByRole('heading', { name: 'This link cannot be opened' })).toBeVisible();
  await expect(page.locator('main.not-found')).toContainText('code could not be fetched');
  expect(uncaught).toEqual([]);
});

test('a panel whose part cannot be fetched says so in its place, and the rest of the page goes on working', async ({ page }) => {
  const uncaught = await losePart(page, 'side_panel');
  await newGraph(page);
  await node(page, 'm2').locator('.module-header').click();
  await expect(page.getByRole('alert')).toHaveText(/code could not be fetched.*Reload the page to try again/);
  // The app did not stop: the canvas still zooms.
  await page.getByRole('button', { name: 'Zoom in' }).click();
  await expect(page.locator('.zoom-level')).not.toHaveText('100%');
  expect(uncaught).toEqual([]);
});

test('a fork whose part cannot be fetched says so and leaves the page as it was; the next try forks', async ({ page, browser }) => {
  await newGraph(page);
  const address = page.url().split('#')[0];
  const visitor = await browser.newPage();
  const uncaught = await losePart(visitor, 'transfer_part');
  await visitor.goto(address);
  await expect(visitor.locator('.access-badge')).toHaveText('View only');
  await visitor.waitForLoadState('networkidle');
  await visitor.getByRole('button', { name: 'Fork to edit' }).click();
  await expect(visitor.locator('.toast')).toContainText('That could not be done. Part of this page\'s code could not be fetched');
  expect(visitor.url()).toBe(address);
  await visitor.unrouteAll();
  await visitor.getByRole('button', { name: 'Fork to edit' }).click();
  // The copy opens with its edit token, which the page takes out of the
  // address at once.
  await expect(visitor).toHaveURL((url) => url.pathname.startsWith('/g/') && url.href.split('#')[0] !== address);
  await expect(visitor.locator('.access-badge')).toHaveText('Editing');
  expect(uncaught).toEqual([]);
  await visitor.close();
});

test('each lazily loaded part loads once when first shown and works', async ({ page }) => {
  const errors = watchErrors(page);
  const chunks = chunkRequests(page);
  await newGraph(page);
  await page.waitForLoadState('networkidle');
  // An editor's first screen has the palette, a chunk of its own; the
  // graph's check, its room, what edits it and what copies modules come
  // once the page is interactive.
  expect(parts(chunks).sort()).toEqual(['split_check_graph', 'split_clipboard_part', 'split_editing_part', 'split_page', 'split_palette', 'split_room_part']);
  await expect(page.getByLabel('Search module kinds')).toBeVisible();

  // The validation findings, the shortcut list, a module's menu (in the
  // main module), then a cable's panel (a chunk, the module panel's).
  await page.locator('.validation-badge').click();
  await expect(page.getByRole('region', { name: 'Validation' })).toContainText('No problems');
  await page.locator('.validation-badge').click();
  await page.locator('.pane').click({ position: { x: 600, y: 30 } });
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible();
  await page.keyboard.press('Escape');
  await node(page, 'm3').click({ button: 'right' });
  await expect(page.getByRole('menu')).toBeVisible();
  await page.keyboard.press('Escape');
  await node(page, 'm2').locator('.module-header').click();
  await panel(page).getByRole('group', { name: 'Cables' }).getByRole('button', { name: '“Topic” · Input → Data' }).click();
  await expect(page.getByRole('complementary', { name: 'Cable details' }).getByRole('button', { name: 'Remove cable' })).toBeEnabled();

  expect(chunks.some((name) => name.startsWith('split_side_panel_'))).toBe(true);
  await node(page, 'm2').locator('.module-header').click();
  await expect(panel(page).getByLabel('Label')).toHaveValue('Draft');

  // The run dialog, then the run panel the run opens. Its chunk is on its
  // way as soon as the pointer is on ▶ Run, before the click.
  await page.locator('.run-button').hover();
  await expect.poll(() => chunks.some((name) => name.startsWith('split_run_dialog_'))).toBe(true);
  await page.locator('.run-button').click();
  const dialog = page.getByRole('dialog', { name: 'Run the graph' });
  await dialog.getByLabel('Run input').fill('Why tide tables matter');
  await dialog.getByRole('button', { name: /Start run/ }).click();
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 30000 });
  expect(chunks.some((name) => name.startsWith('split_run_dialog_'))).toBe(true);
  expect(chunks.some((name) => name.startsWith('split_run_panel_'))).toBe(true);

  // A second run, and the two compared from the run panel's history.
  await startRun(page);
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 30000 });
  await runPanel(page).getByRole('button', { name: 'History' }).click();
  // The list loads after the panel opens: wait for both runs before ticking.
  await expect(runPanel(page).getByRole('checkbox')).toHaveCount(2);
  for (const box of await runPanel(page).getByRole('checkbox').all()) await box.check();
  await runPanel(page).getByRole('button', { name: 'Compare the two runs' }).click();
  const compared = page.getByRole('dialog', { name: 'Compare runs' });
  await expect(compared).toContainText('modules differ');
  await compared.getByRole('button', { name: 'Close' }).click();

  // The graph's history, the Share and the Triggers dialogs.
  await page.getByRole('banner').getByRole('button', { name: 'History', exact: true }).click();
  const history = page.getByRole('dialog', { name: 'History' });
  await expect(history.locator('.revision').first()).toBeVisible();
  await history.getByRole('button', { name: 'Close' }).click();
  await page.getByRole('banner').getByRole('button', { name: 'Share', exact: true }).click();
  const share = page.getByRole('dialog', { name: 'Share' });
  await expect(share.getByRole('textbox').first()).toHaveValue(/\/g\//);
  await share.getByRole('button', { name: 'Close' }).click();
  await page.getByRole('banner').getByRole('button', { name: 'Triggers', exact: true }).click();
  const triggers = page.getByRole('dialog', { name: 'Triggers' });
  await expect(triggers.getByRole('button', { name: 'Add a schedule' })).toBeVisible();
  await triggers.getByRole('button', { name: 'Close' }).click();

  // Export writes the graph out as a file: copying out and in (export,
  // import, fork) is a part fetched at the click.
  const download = page.waitForEvent('download');
  await page.getByRole('banner').getByRole('button', { name: 'Export', exact: true }).click();
  expect((await download).suggestedFilename()).toBe('Draft_ review_ finalize.patchbay.json');

  for (const part of ['run_comparison', 'history_dialog', 'share_dialog', 'triggers_dialog', 'transfer_part']) {
    expect(chunks.some((name) => name.startsWith(`split_${part}_`)), part).toBe(true);
  }
  // Each chunk is fetched once: a part shown again comes from memory.
  expect(new Set(chunks).size).toBe(chunks.length);
  expect(errors).toEqual([]);
});

test('a recorded run opens its run panel once the page is in the browser', async ({ page }) => {
  const errors = watchErrors(page);
  await newGraph(page);
  await runToEnd(page, 'Why tide tables matter');
  const runId = await runPanel(page).locator('.run-id').textContent();
  const graph = page.url().split('/g/')[1].split(/[?#]/)[0];

  const chunks = chunkRequests(page);
  await page.goto(`/g/${graph}/runs/${runId}`);
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed');
  await expect(node(page, 'm2').locator('.run-badge')).toContainText('✓');
  // Its own part (reading a run's record), not a graph page's.
  expect(parts(chunks)).toContain('split_run_page');
  expect(parts(chunks)).not.toContain('split_page');
  expect(errors).toEqual([]);
});

test('a recorded run whose part cannot be fetched says so and stays as the server drew it', async ({ page }) => {
  await newGraph(page);
  await runToEnd(page, 'Why tide tables matter');
  const runId = await runPanel(page).locator('.run-id').textContent();
  const graph = page.url().split('/g/')[1].split(/[?#]/)[0];

  const uncaught = await losePart(page, 'run_page');
  await page.goto(`/g/${graph}/runs/${runId}`);
  await expect(page.getByRole('alert')).toHaveText(/code could not be fetched.*Reload the page to try again/);
  // The server drew the run's end state: the module's badge is there.
  await expect(node(page, 'm2').locator('.run-badge')).toContainText('✓');
  expect(uncaught).toEqual([]);
});
