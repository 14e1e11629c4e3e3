// What the browser tests share, in three groups as leptos' e2e fixtures
// have them: `find` says where things are on the page, `act` does what a
// person does, `check` waits for or collects what a test asserts on. A spec
// takes what it needs, e.g. `const { node, panel } = find;`. Helpers that
// one spec alone needs stay in that spec.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from '@playwright/test';

// find

/** The detail panel of the selected module. */
const panel = (page) => page.getByRole('complementary', { name: 'Module details' });
/** A module on the canvas, by id. */
const node = (page, id) => page.locator(`[data-node-id="${id}"]`);
/** A port of a module on the canvas, by module id and port id. */
const port = (page, module, id) => page.locator(`[data-node-id="${module}"] [data-port-id="${id}"]`);
/** The run panel below the canvas. */
const runPanel = (page) => page.getByRole('region', { name: 'Run', exact: true });

/** The id of the graph the page shows, from its address (`/g/{id}`, without `?…` or `#…`). */
function graphId(page) {
  return page.url().split('/g/')[1].split(/[?#]/)[0];
}

/** The centre of what a locator finds, in page coordinates. */
async function centre(locator) {
  const box = await locator.boundingBox();
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

// act

/** Opens a new starter graph this browser can edit; returns its id. */
async function newGraph(page) {
  await page.goto('/new');
  await expect(page.locator('.access-badge')).toHaveText('Editing');
  return graphId(page);
}

/** Pastes the clipboard into a new graph of its own page, at a free spot;
 * gives the page once the pasted modules are drawn beside the starter's
 * three (the first pasted is m4). */
async function pasteInNewGraph(context, modules = 1) {
  const other = await context.newPage();
  await newGraph(other);
  await other.mouse.move(700, 520);
  await other.keyboard.press('Control+v');
  await expect(other.locator('[data-node-id]')).toHaveCount(3 + modules);
  return other;
}

/** Starts a run from the keyboard (Ctrl+Enter, the input, Ctrl+Enter);
 * without `input`, with what the dialog holds (an example's own input). */
async function startRun(page, input) {
  await page.locator('.pane').focus();
  await page.keyboard.press('Control+Enter');
  const dialog = page.getByRole('dialog', { name: 'Run the graph' });
  if (input !== undefined) await dialog.getByLabel('Run input').fill(input);
  await dialog.getByLabel('Run input').press('Control+Enter');
}

/** Runs the graph from the keyboard and waits until the run panel says it
 * completed. */
async function runToEnd(page, input) {
  await startRun(page, input);
  await expect(runPanel(page).locator('.run-status')).toHaveText('Completed', { timeout: 30_000 });
}

/** Drags a cable from an output port's dot to an input port's dot; `from`
 * and `to` are `[module id, port id]`. */
async function wire(page, from, to) {
  const start = await centre(port(page, from[0], from[1]).locator('.port-dot'));
  const end = await centre(port(page, to[0], to[1]).locator('.port-dot'));
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  await page.mouse.move((start.x + end.x) / 2, (start.y + end.y) / 2, { steps: 5 });
  await page.mouse.move(end.x, end.y, { steps: 5 });
  await page.mouse.up();
}

/** Drags a module by its header, by `dx`, `dy` pixels. */
async function drag(page, module, dx, dy) {
  const start = await centre(node(page, module).locator('.module-header'));
  await page.mouse.move(start.x, start.y);
  await page.mouse.down();
  await page.mouse.move(start.x + dx / 2, start.y + dy / 2, { steps: 4 });
  await page.mouse.move(start.x + dx, start.y + dy, { steps: 4 });
  await page.mouse.up();
}

// check

/** Waits until the graph's edits are saved. */
async function saved(page) {
  await expect(page.locator('.save-status')).toHaveText('Saved', { timeout: 10_000 });
}

/** Opens the validation panel (if closed) and returns its findings as
 * `{ code, text }`. */
async function findings(page) {
  const badge = page.locator('.validation-badge');
  if ((await badge.getAttribute('aria-expanded')) !== 'true') await badge.click();
  const list = page.getByRole('region', { name: 'Validation' });
  await expect(list).toBeVisible();
  return list.locator('.finding').evaluateAll((items) => items.map((item) => ({ code: item.dataset.code, text: item.textContent })));
}

/** The codes of the validation findings, as `findings` opens them. */
async function findingCodes(page) {
  return (await findings(page)).map((finding) => finding.code);
}

/**
 * Collects what goes wrong in a page into the list it returns, for
 * `expect(errors).toEqual([])` at the end of a test: by default uncaught
 * errors (e.g. a broken WASM bundle) and console errors. `csp: true` adds
 * Content-Security-Policy reports at any console level; `consoleErrors:
 * false` and `uncaught: false` leave those out, for tests that watch less.
 */
function watchErrors(page, { uncaught = true, consoleErrors = true, csp = false } = {}) {
  const errors = [];
  if (uncaught) page.on('pageerror', (error) => errors.push(error.message));
  if (consoleErrors || csp) {
    page.on('console', (message) => {
      if ((consoleErrors && message.type() === 'error') || (csp && message.text().includes('Content Security Policy'))) {
        errors.push(message.text());
      }
    });
  }
  return errors;
}

/** A server of its own (another operator's switches, another process on
 * one database): on a free port, on a fresh SQLite file unless
 * `databaseUrl` says otherwise; `stop()` ends it. */
async function ownServer({ databaseUrl, args = [] } = {}) {
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address();
      probe.close(() => resolve(free));
    });
  });
  const folder = mkdtempSync(join(tmpdir(), 'patchbay-e2e-'));
  const child = spawn(process.env.PATCHBAY_BINARY, [
    'serve', '--addr', `127.0.0.1:${port}`, '--database-url', databaseUrl ?? `sqlite://${folder}/x.db`,
    '--site-root', process.env.PATCHBAY_SITE_ROOT, ...args,
  ], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 100; tries++) {
    try {
      if ((await fetch(`${base}/api/health`)).ok) break;
    } catch { /* not up yet */ }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { base, stop: () => { child.kill(); rmSync(folder, { recursive: true, force: true }); } };
}

export const find = { panel, node, port, runPanel, graphId, centre };
export const act = { newGraph, pasteInNewGraph, startRun, runToEnd, wire, drag, ownServer };
export const check = { saved, findings, findingCodes, watchErrors };
