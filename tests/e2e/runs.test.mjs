// End-to-end: a run is never lost and never comes back from the dead. Each case forces its
// window open instead of hoping to land in it: the page's global `vitlabTestSaveDelayMs`
// (which only a test sets) holds every checkpoint back that long before it is written, and
// each case goes round `LOOPS` times (support.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { LOOPS, oldRun, runDatabase, seedOldStores, servedApp, until } from "./support.mjs";
import { LINK, openRunTab, reload, trainTo } from "./run-tabs.mjs";

const app = servedApp();

/** A tab of `context` on the lab, in the training place, each checkpoint held back `delay` ms. */
const openTab = (context, options = {}) => openRunTab(app, context, { query: LINK, ...options });

test("case 1: Pause or Stop, then a reload at once, before the checkpoint is written: the run is offered at its last kept step", async () => {
  const context = await app.browser.newContext();
  const tab = await openTab(context, { delay: 1500 });
  await tab.lab.byTestId("train-button").click();
  const id = await until(tab.run, (run) => run !== null, { what: "the tab's run" });
  assert.ok(Number.isNaN(await tab.step()) || (await tab.step()) < 5, `the tab's run from its Start, not from a save (step ${await tab.step()})`);
  let kept = 0;
  for (let loop = 0; loop < LOOPS; loop++) {
    const at = await trainTo(tab, kept + 3);
    // Odd loops wait for the rest to be kept; even ones reload inside the window.
    const waits = loop % 2 === 1;
    await tab.lab.byTestId(loop % 4 < 2 ? "pause-button" : "stop-button").click();
    if (waits) {
      await until(tab.state, (s) => s === "paused" || s === "stopped", { what: "the rest kept" });
      kept = await tab.step();
    }
    await reload(tab);
    assert.equal(await tab.run(), id, `loop ${loop}: the tab's run survives the reload`);
    const resume = tab.lab.byTestId("resume-saved-button");
    await resume.waitFor({ timeout: 30_000 });
    const offered = Number((await resume.textContent()).match(/step (\d+) /)[1]);
    assert.equal(offered, kept, `loop ${loop}: offered at the last kept step (paused at ${at}, waited: ${waits})`);
    await resume.click();
  }
  const database = await runDatabase(tab.page);
  assert.deepEqual(Object.keys(database.records), [id], "one run, one record");
  await context.close();
});

test("case 2: a run deleted while a save of it is in flight never comes back, in the table, the database or the tab", async () => {
  const context = await app.browser.newContext();
  const tab = await openTab(context, { delay: 1000 });
  const deleted = [];
  for (let loop = 0; loop < LOOPS; loop++) {
    await tab.lab.byTestId("train-button").click();
    await trainTo(tab, 2);
    await tab.lab.place("runs");
    const id = await tab.lab.byTestId("run-row").first().getAttribute("data-run");
    // The pause's checkpoint is on its way; the row is deleted before it lands.
    await tab.lab.place("train");
    await tab.lab.byTestId("pause-button").click();
    await tab.lab.place("runs");
    await tab.row(id).getByRole("button", { name: /^Delete/ }).click();
    await until(() => tab.row(id).count(), (n) => n === 0, { what: "the row gone" });
    assert.equal(await tab.run(), null, `loop ${loop}: the tab let its deleted run go`);
    deleted.push(id);
    // The held-back save lands (and is refused), then a reload.
    await tab.page.waitForTimeout(1500);
    await reload(tab);
    await tab.page.waitForTimeout(500);
    assert.equal(await tab.row(id).count(), 0, `loop ${loop}: no row after a reload`);
    await tab.lab.place("train");
    assert.equal(await tab.lab.byTestId("resume-saved-button").count(), 0, `loop ${loop}: nothing offered to resume`);
    const database = await runDatabase(tab.page);
    for (const gone of deleted) {
      assert.equal(database.records[gone], undefined, `run ${gone} back in the records`);
      assert.equal(database.checkpoints[gone], undefined, `run ${gone}'s checkpoint back`);
      assert.equal(database.weights[gone], undefined, `run ${gone}'s weights back`);
    }
  }
  await context.close();
});

test("Stop then Reset at once, before the stop is kept: the run stays in the table, the tab lets it go, and nothing of it comes back to the tab", async () => {
  const context = await app.browser.newContext();
  const tab = await openTab(context, { delay: 1000 });
  const runs = [];
  for (let loop = 0; loop < LOOPS; loop++) {
    await tab.lab.place("train");
    await tab.lab.byTestId("train-button").click();
    const id = await until(tab.run, (run) => run !== null && !runs.includes(run), { what: "a new run" });
    runs.push(id);
    await trainTo(tab, 3);
    // The stop's checkpoint is held back; Reset comes before it is kept.
    await tab.lab.byTestId("stop-button").click();
    await tab.lab.byTestId("reset-button").click();
    await until(tab.state, (s) => s === "idle", { what: "idle after the reset" });
    assert.equal(await tab.run(), null, `loop ${loop}: the tab let its run go`);
    assert.equal(await tab.lab.byTestId("training-error").count(), 0, `loop ${loop}: no error`);
    // The held-back stop lands (each write waits a second here, so it may wait its turn
    // behind the record's); the table still has the run and the tab offers nothing to resume,
    // after a reload too.
    await tab.lab.place("runs");
    await until(() => tab.row(id).count(), (n) => n === 1, { what: `run ${id} in the table` });
    await until(async () => (await runDatabase(tab.page)).checkpoints[id]?.step ?? 0, (step) => step >= 3,
      { what: `run ${id}'s stop kept`, timeout: 30_000 });
    await reload(tab);
    assert.equal(await tab.run(), null, `loop ${loop}: no run for the tab after a reload`);
    await tab.lab.place("train");
    assert.equal(await tab.lab.byTestId("resume-saved-button").count(), 0, `loop ${loop}: nothing offered to resume`);
    await tab.lab.place("runs");
    await until(() => tab.row(id).count(), (n) => n === 1, { what: `run ${id} in the table after a reload` });
  }
  const database = await runDatabase(tab.page);
  assert.deepEqual(Object.keys(database.records).sort(), [...runs].sort(), "a record for each run, and no other");
  for (const id of runs) assert.ok(database.checkpoints[id]?.step >= 3, `run ${id} kept at ${database.checkpoints[id]?.step}`);
  await context.close();
});

test("case 3: a stopped or finished run is not locked: another tab continues it at once", async () => {
  const context = await app.browser.newContext();
  // Long enough that the run is not over before its first Stop.
  const query = LINK.replace("epochs=1", "epochs=20");
  const tabs = [await openTab(context, { query }), await openTab(context, { query })];
  await tabs[0].lab.byTestId("train-button").click();
  await trainTo(tabs[0], 2);
  await tabs[0].lab.place("runs");
  const id = await tabs[0].lab.byTestId("run-row").first().getAttribute("data-run");
  await tabs[0].lab.place("train");
  for (let loop = 0; loop < LOOPS; loop++) {
    const [from, to] = [tabs[loop % 2], tabs[(loop + 1) % 2]];
    await from.lab.byTestId("stop-button").click();
    await until(from.state, (s) => s === "stopped", { what: "stopped" });
    const stopped = await from.step();
    await reload(to);
    await to.lab.place("runs");
    // Continue opens the training place.
    await to.row(id).getByTestId("continue-run").click();
    await to.page.locator('main[data-place="train"]').waitFor();
    const first = await trainTo(to, stopped + 1);
    assert.equal(await to.lab.byTestId("training-error").count(), 0, `loop ${loop}: continued without a word of another tab`);
    assert.ok(first > stopped, `loop ${loop}: from its checkpoint (${stopped}), not from 0 (${first})`);
  }
  await context.close();
});

test("case 4: two tabs that start in the same millisecond train two runs", async () => {
  const context = await app.browser.newContext();
  // Both tabs' clocks stand still at one millisecond: ids that were times would be one.
  const frozen = (page) => page.addInitScript(() => { Date.now = () => 1_764_000_000_000; });
  const tabs = [await openTab(context, { prepare: frozen }), await openTab(context, { prepare: frozen })];
  const ids = new Set();
  for (let loop = 0; loop < LOOPS; loop++) {
    await Promise.all(tabs.map((tab) => tab.lab.byTestId("train-button").click()));
    const runs = await Promise.all(tabs.map((tab) => until(tab.run, (run) => run !== null, { what: "a run" })));
    assert.notEqual(runs[0], runs[1], `loop ${loop}: two runs, two ids`);
    for (const run of runs) {
      assert.ok(!ids.has(run), `loop ${loop}: id ${run} given before`);
      ids.add(run);
    }
    await Promise.all(tabs.map((tab) => trainTo(tab, 1)));
    await Promise.all(tabs.map((tab) => tab.lab.byTestId("reset-button").click()));
  }
  const database = await runDatabase(tabs[0].page);
  assert.equal(Object.keys(database.records).length, 2 * LOOPS, "a record for each run");
  await context.close();
});

test("runs kept by earlier pages move into the database once, each with its checkpoint, and continue", async () => {
  const context = await app.browser.newContext();
  const [first, second, legacy] = [await oldRun(1), await oldRun(2), await oldRun(3)];
  const ids = [1_733_000_000_000, 1_733_000_000_123];
  const seeding = await context.newPage();
  await seeding.goto(`${app.server.url}favicon.svg`);
  await seedOldStores(seeding, [{ id: ids[0], ...first }, { id: ids[1], ...second }], legacy);
  await seeding.close();
  const tab = await openTab(context);
  await tab.lab.place("runs");
  const rows = tab.lab.byTestId("run-row");
  await until(() => rows.count(), (n) => n === 3, { what: "the two runs and the older page's one" });
  const database = await runDatabase(tab.page);
  const seeds = Object.values(database.checkpoints).map((c) => c.seed).sort();
  assert.deepEqual(seeds, [1, 2, 3], "each run with its own checkpoint");
  for (const id of ids) {
    assert.equal(database.checkpoints[id].step, 10);
    assert.ok(database.weights[id] > 0, `run ${id}'s weights`);
  }
  // The old stores go once the move has committed.
  assert.deepEqual(await tab.page.evaluate(async () => [await caches.has("vitlab-runs-v1"), await caches.has("vitlab-training-v1")]), [false, false]);
  // Each continues from its checkpoint, at step 10, to its end at step 20.
  await tab.row(ids[1]).getByTestId("continue-run").click();
  await tab.page.locator('main[data-place="train"]').waitFor();
  await until(tab.state, (s) => s === "finished", { what: "the run's end" });
  assert.equal(await tab.step(), 20);
  assert.equal(await tab.run(), String(ids[1]));
  const kept = await runDatabase(tab.page);
  assert.equal(kept.checkpoints[ids[1]].step, 20, "its end kept");
  assert.equal(kept.checkpoints[ids[0]].step, 10, "the other run untouched");
  // A second load moves nothing again.
  await reload(tab);
  await tab.lab.place("runs");
  await until(() => rows.count(), (n) => n === 3, { what: "still three runs" });
  await context.close();
});

test("a save that hits the storage quota says so, and the run's last checkpoint stays whole", async () => {
  const context = await app.browser.newContext();
  // The browser's refusal of a full disk, at a checkpoint's write once a test says so: the
  // record written before it in the same transaction must not land either. (Chromium's
  // DevTools quota override does not reach a database that exists already: measured here.)
  const full = (page) => page.addInitScript(() => {
    const put = IDBObjectStore.prototype.put;
    IDBObjectStore.prototype.put = function (value, key) {
      if (globalThis.vitlabTestFull && this.name === "checkpoints") throw new DOMException("The quota has been exceeded.", "QuotaExceededError");
      return put.call(this, value, key);
    };
  });
  const tab = await openTab(context, { prepare: full });
  await tab.lab.byTestId("train-button").click();
  await trainTo(tab, 3);
  await tab.lab.byTestId("pause-button").click();
  await until(tab.state, (s) => s === "paused", { what: "paused" });
  const kept = await tab.step();
  const id = await tab.run();
  assert.equal((await runDatabase(tab.page)).checkpoints[id].step, kept);
  await tab.page.evaluate(() => { globalThis.vitlabTestFull = true; });
  await tab.lab.byTestId("pause-button").click();
  await trainTo(tab, kept + 3);
  await tab.lab.byTestId("pause-button").click();
  await until(tab.state, (s) => s === "paused", { what: "paused again" });
  await tab.lab.place("runs");
  const error = await until(() => tab.lab.byTestId("runs-error").textContent().catch(() => ""), (t) => /full/.test(t), { what: "the quota said" });
  assert.match(error, /storage for this page is full: this save was not kept, the run's last one still is/);
  const database = await runDatabase(tab.page);
  assert.equal(database.checkpoints[id].step, kept, "the last checkpoint whole");
  assert.equal(database.records[id].step, kept, "the record as it was kept with its checkpoint");
  // With room again, the next rest is kept.
  await tab.page.evaluate(() => { globalThis.vitlabTestFull = false; });
  await tab.lab.place("train");
  await tab.lab.byTestId("pause-button").click();
  const more = await trainTo(tab, kept + 6);
  await tab.lab.byTestId("stop-button").click();
  await until(tab.state, (s) => s === "stopped", { what: "stopped" });
  assert.ok((await runDatabase(tab.page)).checkpoints[id].step >= more);
  await tab.lab.place("runs");
  assert.equal(await tab.lab.byTestId("runs-error").count(), 0, "the problem goes once a save is kept");
  await context.close();
});

test("case 5: a stale tab resumes from another tab's progress, never its own copy; a stale save is refused and said", async () => {
  const context = await app.browser.newContext();
  // Long enough that no run ends while the case runs.
  const query = LINK.replace("epochs=1", "epochs=50");
  const [a, b] = [await openTab(context, { query }), await openTab(context, { query })];
  for (let loop = 0; loop < LOOPS; loop++) {
    // 1. A trains and stops.
    await a.lab.place("train");
    await a.lab.byTestId("train-button").click();
    await trainTo(a, 3);
    await a.lab.byTestId("stop-button").click();
    await until(a.state, (s) => s === "stopped", { what: `loop ${loop}: A stopped` });
    const run = await a.run();
    const stoppedAt = (await checkpointsOf(a))[run].step;
    // 2. B continues it from the table (read again: A started it after B's was), trains
    // further, and stops.
    await reload(b);
    await b.lab.place("runs");
    await b.row(run).getByTestId("continue-run").click();
    await b.lab.place("train");
    await trainTo(b, stoppedAt + 20);
    await b.lab.byTestId("stop-button").click();
    await until(b.state, (s) => s === "stopped", { what: `loop ${loop}: B stopped` });
    const byB = (await checkpointsOf(b))[run].step;
    assert.ok(byB >= stoppedAt + 20, `loop ${loop}: B kept ${byB}`);
    // 3. A, still open, resumes: from B's checkpoint, and says so.
    await a.lab.byTestId("pause-button").click();
    await until(a.step, (s) => s > byB, { what: `loop ${loop}: A going on past B's step ${byB}` });
    const said = await a.lab.page.locator(".notices").textContent();
    assert.match(said, /was continued in another tab meanwhile: it goes on from there/);
    // 4. A's next save continues B's progress: the run never goes back.
    await a.lab.byTestId("stop-button").click();
    await until(a.state, (s) => s === "stopped", { what: `loop ${loop}: A stopped again` });
    const last = (await checkpointsOf(a))[run].step;
    assert.ok(last > byB, `loop ${loop}: kept at ${last} after B's ${byB}`);
    await a.lab.byTestId("reset-button").click();
    await b.lab.byTestId("reset-button").click();
  }
  // A save from a stale copy (its lock lost: a browser without Web Locks) is refused by the
  // store itself, and the tab stops and says where the run went on.
  const noLocks = (page) => page.addInitScript(() => Object.defineProperty(navigator, "locks", { value: undefined }));
  const [c, d] = [await openTab(context, { query, prepare: noLocks }), await openTab(context, { query, prepare: noLocks })];
  await c.lab.byTestId("train-button").click();
  await trainTo(c, 3);
  const run = await c.run();
  await reload(d);
  await d.lab.place("runs");
  await d.row(run).getByTestId("continue-run").click();
  // D trains a little and pauses. Its copy is the stale one instead where C kept an evaluation
  // after D read the run and before D's first keeping (a window that load widens to seconds):
  // then D is refused and C goes on.
  const told = (tab) => tab.page.evaluate(() => document.querySelector('[data-testid="training-error"]')?.textContent ?? "");
  const dOn = async () => (await told(d)) !== "" || ((await d.state()) === "training" && (await d.step()) >= 5);
  await until(dOn, (on) => on, { what: "D at step 5, or told its copy is stale" });
  if ((await told(d)) === "") {
    await d.lab.byTestId("pause-button").click();
    await until(async () => (await told(d)) !== "" || (await d.state()) === "paused", (on) => on, { what: "D paused, or told" });
  }
  const [stale, fresh] = (await told(d)) === "" ? [c, d] : [d, c];
  if (stale === c) {
    // C's next keeping (its pause, unless an evaluation came first) is refused.
    const pause = c.lab.byTestId("pause-button");
    if (await pause.count()) await pause.click().catch(() => {});
  }
  const error = await until(() => told(stale), (t) => t.length > 0, { what: "the stale tab told" });
  assert.match(error, /^Run #\d{4} was continued in another tab \(step \d+\): this tab stopped; Continue from the table goes on from there\.$/);
  assert.equal(await stale.run(), null, "the stale tab let its copy go");
  assert.equal(await fresh.run(), run, "the other tab keeps the run");
  assert.equal(await told(fresh), "", "the other tab goes on without a word");
  await context.close();
});

/** Each run's checkpoint in the tab's database: its step and seed. */
async function checkpointsOf(tab) {
  return (await runDatabase(tab.page)).checkpoints;
}

test("the move of earlier pages' runs happens once: two tabs loading at once, and a load after a crash between the move and the old stores' deletion", async () => {
  const [first, second, legacy] = [await oldRun(4), await oldRun(5), await oldRun(6)];
  const ids = [1_733_000_000_001, 1_733_000_000_202];
  for (let loop = 0; loop < LOOPS; loop++) {
    const context = await app.browser.newContext();
    const seed = async () => {
      const page = await context.newPage();
      await page.goto(`${app.server.url}favicon.svg`);
      await seedOldStores(page, [{ id: ids[0], ...first }, { id: ids[1], ...second }], legacy);
      await page.close();
    };
    await seed();
    // Two tabs load at once: each run moves in once.
    const tabs = await Promise.all([openTab(context), openTab(context)]);
    const moved = await runDatabase(tabs[0].page);
    assert.equal(Object.keys(moved.records).length, 3, `loop ${loop}: the two runs and the older page's one, once each: ${Object.keys(moved.records)}`);
    // One is deleted; then the old stores are back, as a crash between the move's commit and
    // their deletion would leave them: a load moves nothing again.
    const gone = ids[loop % 2];
    await tabs[1].lab.place("runs");
    await tabs[1].row(gone).getByRole("button", { name: /^Delete run/ }).click();
    await until(() => tabs[1].row(gone).count(), (n) => n === 0, { what: `loop ${loop}: deleted` });
    await seed();
    await reload(tabs[0]);
    const again = await runDatabase(tabs[0].page);
    assert.equal(again.records[gone], undefined, `loop ${loop}: the deleted run stays deleted`);
    assert.equal(Object.keys(again.records).length, 2, `loop ${loop}: nothing moved twice`);
    assert.deepEqual(await tabs[0].page.evaluate(async () => [await caches.has("vitlab-runs-v1"), await caches.has("vitlab-training-v1")]), [false, false], `loop ${loop}: the old stores went`);
    await context.close();
  }
});

