// Notes on the canvas (PRODUCT §1.6), through the UI: a note added by a
// double-click on empty canvas and from the palette, written in Markdown
// and drawn as markup, a script in it kept as text, a link opening in a
// new tab without its opener; moved, resized, coloured and deleted, each
// undone; saved in the document and said in the history; seen live by a
// second editor; and drawn by the server in the page a view link sends,
// before the page is interactive.
import { test, expect } from '@playwright/test';
import { act, check } from './support.mjs';

const { newGraph } = act;
const { watchErrors, saved } = check;

async function storedNotes(page, graphId) {
  const response = await page.request.get(`/api/graphs/${graphId}`);
  return (await response.json()).notes ?? [];
}

test('a note is written in Markdown, drawn safely, moved, resized, coloured, undone and seen by a view link as the server drew it', async ({ page, browser }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  const graphId = await newGraph(page);

  // A double-click on empty canvas adds a note there, open for writing.
  const pane = page.locator('.pane');
  const box = await pane.boundingBox();
  // Below the starter's modules, clear of the minimap.
  await page.mouse.dblclick(box.x + box.width / 2 - 120, box.y + box.height - 330);
  const field = page.getByRole('textbox', { name: 'Note (Markdown)' });
  await expect(field).toBeFocused();
  await field.pressSequentially('# Review loop\n\n- drafts **twice**\n- see [the guide](https://example.com/guide)\n\n<script>window.noted = 1</script><img src=x onerror="window.noted = 2">');
  await page.keyboard.press('Escape');
  const note = page.locator('[data-note-id]');
  await expect(note).toHaveCount(1);
  await expect(note).toBeFocused();
  await expect(note.locator('h3')).toHaveText('Review loop');
  await expect(note.locator('li strong')).toHaveText('twice');
  const link = note.getByRole('link', { name: 'the guide' });
  await expect(link).toHaveAttribute('href', 'https://example.com/guide');
  await expect(link).toHaveAttribute('target', '_blank');
  await expect(link).toHaveAttribute('rel', 'noopener noreferrer');
  // The script and the image are text, not elements.
  await expect(note.locator('script, img')).toHaveCount(0);
  await expect(note).toContainText('<script>window.noted = 1</script>');
  expect(await page.evaluate(() => window.noted)).toBeUndefined();
  await expect(note).toHaveAttribute('aria-label', 'Note: Review loop');
  await saved(page);
  let notes = await storedNotes(page, graphId);
  expect(notes).toHaveLength(1);
  expect(notes[0].text).toContain('# Review loop');
  const noteId = notes[0].id;

  // Dragged by 60, 40 pixels: moved on screen and in the document (by
  // as much at the view's zoom); undone in one step.
  const before = notes[0].position;
  const zoom = parseInt(await page.locator('.zoom-level').textContent(), 10) / 100;
  let at = await note.boundingBox();
  await page.mouse.move(at.x + 40, at.y + 60);
  await page.mouse.down();
  await page.mouse.move(at.x + 70, at.y + 80, { steps: 4 });
  await page.mouse.move(at.x + 100, at.y + 100, { steps: 4 });
  await page.mouse.up();
  const moved = await note.boundingBox();
  expect(Math.round(moved.x - at.x)).toBe(60);
  expect(Math.round(moved.y - at.y)).toBe(40);
  await saved(page);
  notes = await storedNotes(page, graphId);
  expect(Math.abs(notes[0].position.x - (before.x + 60 / zoom))).toBeLessThan(2);
  expect(Math.abs(notes[0].position.y - (before.y + 40 / zoom))).toBeLessThan(2);
  await pane.focus();
  await page.keyboard.press('Control+z');
  await expect.poll(async () => (await storedNotes(page, graphId))[0].position).toEqual(before);

  // Resized from its corner, never below its smallest.
  at = await note.boundingBox();
  const corner = note.locator('.note-resize');
  const cornerBox = await corner.boundingBox();
  await page.mouse.move(cornerBox.x + 7, cornerBox.y + 7);
  await page.mouse.down();
  await page.mouse.move(cornerBox.x - 400, cornerBox.y - 400, { steps: 4 });
  await page.mouse.up();
  await expect.poll(async () => (await storedNotes(page, graphId))[0].size).toEqual({ width: 80, height: 40 });
  await page.keyboard.press('Control+z');

  // From the keyboard: arrows move it, Enter opens it, a colour is chosen.
  await note.focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Shift+ArrowDown');
  await expect(note).toBeFocused();
  await expect
    .poll(async () => (await storedNotes(page, graphId))[0].position)
    .toEqual({ x: before.x + 10, y: before.y + 50 });
  await note.focus();
  await page.keyboard.press('Enter');
  await expect(field).toBeFocused();
  await page.getByRole('button', { name: 'Blue note' }).click();
  await expect(note).toHaveClass(/note-blue/);
  await page.getByRole('button', { name: 'Done' }).click();
  await expect.poll(async () => (await storedNotes(page, graphId))[0].colour).toBe('blue');
  await page.screenshot({ path: 'e2e/test-results/notes-editor.png' });

  // A second editor sees the note written in live.
  const token = await page.evaluate((id) => localStorage.getItem(`patchbay.edit.${id}`), graphId);
  const editLink = `/g/${graphId}#edit=${token}`;
  const otherContext = await browser.newContext();
  const other = await otherContext.newPage();
  await other.goto(editLink);
  await expect(other.locator('.access-badge')).toHaveText('Editing');
  await expect(other.locator(`[data-note-id="${noteId}"] h3`)).toHaveText('Review loop');
  await note.dblclick();
  await field.press('End');
  await field.pressSequentially('\n\nTyped while watched.');
  await expect(other.locator(`[data-note-id="${noteId}"]`)).toContainText('Typed while watched.');
  await page.keyboard.press('Escape');
  await saved(page);

  await otherContext.close();

  // A view link: the note is in the page the server sent.
  const viewer = await browser.newContext({ javaScriptEnabled: false });
  const view = await viewer.newPage();
  await view.goto(`/g/${graphId}`);
  const served = view.locator(`[data-note-id="${noteId}"]`);
  await expect(served.locator('h3')).toHaveText('Review loop');
  await expect(served.getByRole('link', { name: 'the guide' })).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(served.locator('script, img')).toHaveCount(0);
  await viewer.close();

  // Deleted from the keyboard, and back with undo.
  await note.focus();
  await page.keyboard.press('Delete');
  await expect(note).toHaveCount(0);
  await saved(page);
  expect(await storedNotes(page, graphId)).toHaveLength(0);
  await pane.focus();
  await page.keyboard.press('Control+z');
  await expect(page.locator(`[data-note-id="${noteId}"] h3`)).toHaveText('Review loop');
  await saved(page);
  expect(errors).toEqual([]);
});

test('the palette adds a note, a view link cannot change one, and the history counts notes', async ({ page, browser }) => {
  const graphId = await newGraph(page);
  await page.locator('#palette-search').fill('note');
  await page.locator('#palette-search').press('Enter');
  const field = page.getByRole('textbox', { name: 'Note (Markdown)' });
  await expect(field).toBeFocused();
  await field.fill('Hand-over: **ask Sam**');
  await page.getByRole('button', { name: 'Done' }).click();
  await expect(page.locator('[data-note-id] strong')).toHaveText('ask Sam');
  await saved(page);

  // History: the save is summed up with its note.
  await page.getByRole('button', { name: 'History' }).click();
  await expect(page.getByRole('dialog', { name: 'History' })).toContainText('1 note added');
  await page.keyboard.press('Escape');

  // A view link shows it and cannot move, write in or delete it.
  const visitorContext = await browser.newContext();
  const visitor = await visitorContext.newPage();
  await visitor.goto(`/g/${graphId}`);
  await expect(visitor.locator('.access-badge')).toHaveText('View only');
  const note = visitor.locator('[data-note-id]');
  await expect(note.locator('strong')).toHaveText('ask Sam');
  await expect(note.locator('.note-resize')).toHaveCount(0);
  await note.dblclick();
  await expect(visitor.getByRole('textbox', { name: 'Note (Markdown)' })).toHaveCount(0);
  await note.focus();
  await visitor.keyboard.press('Delete');
  await expect(note).toHaveCount(1);
  const before = await note.boundingBox();
  await visitor.mouse.move(before.x + 20, before.y + 20);
  await visitor.mouse.down();
  await visitor.mouse.move(before.x + 120, before.y + 120, { steps: 4 });
  await visitor.mouse.up();
  const notes = await storedNotes(page, graphId);
  expect(notes).toHaveLength(1);
  expect(notes[0].text).toBe('Hand-over: **ask Sam**');
  await visitorContext.close();
});

test('a note in hand is copied, pasted where the pointer is with an id of its own, cut, and pasted into another graph', async ({ page, context }) => {
  const errors = watchErrors(page, { consoleErrors: false });
  const graphId = await newGraph(page);
  await page.locator('#palette-search').fill('note');
  await page.locator('#palette-search').press('Enter');
  await page.getByRole('textbox', { name: 'Note (Markdown)' }).fill('Ask **Sam** first');
  await page.getByRole('button', { name: 'Done' }).click();
  const notes = page.locator('[data-note-id]');
  await expect(notes).toHaveCount(1);
  await notes.first().focus();
  await page.keyboard.press('Control+c');

  // Pasted where the pointer is: a second note, the same words and colour.
  const pane = await page.locator('.pane').boundingBox();
  await page.mouse.move(pane.x + 200, pane.y + pane.height - 200);
  await page.keyboard.press('Control+v');
  await expect(notes).toHaveCount(2);
  await expect(notes.locator('strong')).toHaveText(['Sam', 'Sam']);
  await saved(page);
  const stored = await storedNotes(page, graphId);
  expect(stored).toHaveLength(2);
  expect(stored[0].id).not.toBe(stored[1].id);
  expect(stored[1].text).toBe('Ask **Sam** first');

  // Undo takes the paste back; a cut takes the note out.
  await page.keyboard.press('Control+z');
  await expect(notes).toHaveCount(1);
  await notes.first().focus();
  await page.keyboard.press('Control+x');
  await expect(notes).toHaveCount(0);
  await saved(page);
  expect(await storedNotes(page, graphId)).toHaveLength(0);

  // Into another graph, from the same clipboard.
  const other = await context.newPage();
  await newGraph(other);
  await other.mouse.move(700, 520);
  await other.keyboard.press('Control+v');
  await expect(other.locator('[data-note-id] strong')).toHaveText('Sam');
  expect(errors).toEqual([]);
});
