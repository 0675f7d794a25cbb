// End-to-end in Firefox (headless Firefox ESR through puppeteer-core over WebDriver BiDi): the
// release build loads, reads a drawn 1 and 0, trains, pauses and stops, with no uncaught
// error. Firefox on Linux has no WebGPU (no `navigator.gpu`): everything runs on the CPU.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ONE, ZERO, expectReading, oldRun, runDatabase, seedOldStores, until } from "./support.mjs";
import { assertCpuEngineFeatures, browserFeatures, pauseAndResume, placesAndStory, staleTabResumes } from "./engine-lab.mjs";
import { FirefoxLab, servedAppInFirefox } from "./firefox-support.mjs";
import { theExampleOnArrival } from "./arrival.mjs";
import { SHEAR, fineTune, handwriting, teachAll } from "./handwriting-digits.mjs";

const app = servedAppInFirefox();

/**
 * The page's uncaught errors and console errors, none expected. (Its warnings are not
 * asserted: each wasm start logs wasm-bindgen's "using deprecated parameters for the
 * initialization function", from Trunk's worker_loader.js, in Chromium as well.)
 */
function assertNoErrors(lab) {
  assert.deepEqual(lab.errors, [], "no uncaught errors or console errors");
}

test("what Firefox offers the page: no WebGPU; workers in workers, Cache Storage, IndexedDB, Web Locks, service workers, pointer events", async () => {
  const lab = await FirefoxLab.open(app.browser, `${app.server.url}?backend=cpu`);
  const features = await browserFeatures(lab);
  console.log(`Firefox ${await app.browser.version()}: ${JSON.stringify(features)}`);
  // The page's module script ran: the model is ready.
  assertCpuEngineFeatures(features, "Firefox");
  assertNoErrors(lab);
  await lab.close();
});

test("in Firefox as a visitor opens it, at 390 and 1280 px: on the CPU, the pad draws a 3 by itself, and a drawn 1 and 0 read right", async () => {
  for (const [width, height] of [[390, 844], [1280, 800]]) {
    const lab = await FirefoxLab.open(app.browser, app.server.url, { viewport: { width, height } });
    assert.equal(await lab.evaluate(() => innerWidth), width);
    console.log(`# a first look in Firefox at ${width} px, ms after the model was ready: ${JSON.stringify(await theExampleOnArrival(lab))}`);
    await lab.clear();
    assert.match(await lab.backend(), /CPU/);
    // No navigator.gpu: the page does not try WebGPU, so no timing line.
    assert.equal(await lab.count("backend-timings"), 0);

    await expectReading(lab, [ONE], "1");
    await lab.clear();
    await expectReading(lab, [ZERO], "0");
    assert.equal(await lab.count("attention-map"), 1);
    assert.equal(await lab.count("error"), 0);
    assertNoErrors(lab);
    await lab.close();
  }
});

test("in Firefox the page says why it runs on the CPU", async () => {
  const lab = await FirefoxLab.open(app.browser, app.server.url);
  // Said once start-up is done (after the test batch's attention distance).
  const said = await until(() => lab.text("backend-note"), (note) => note !== null, { what: "a note beside the backend", timeout: 60_000 });
  await lab.close();
  assert.equal(said, "On the CPU: this browser has no WebGPU");
});

test("asked for WebGPU, Firefox falls back to the CPU, says why, and still reads digits", async () => {
  const lab = await FirefoxLab.open(app.browser, `${app.server.url}?backend=webgpu`);
  assert.match(await lab.backend(), /CPU/);
  const note = await lab.text("backend-note");
  assert.match(note, /^On the CPU: this browser has no WebGPU$/);
  console.log(`the note in Firefox (${note.length} characters): ${note}`);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  assertNoErrors(lab);
  await lab.close();
});

test("asked for WebGPU, Firefox's note is short and plain", async () => {
  const lab = await FirefoxLab.open(app.browser, `${app.server.url}?backend=webgpu`);
  const note = await lab.text("backend-note");
  await lab.close();
  assert.ok(note.length < 250 && !/\{|Caused by|Backtrace/.test(note), `a short note: ${note}`);
});

test("in Firefox a short run trains in two CPU workers, its loss falls, it pauses, resumes and stops", async () => {
  // No ?backend=: the training worker tries WebGPU, falls back to the CPU and says so. A small
  // ViT (2 layers of 32) so that the loss falls within seconds: 1,875 steps in all.
  const lab = await FirefoxLab.open(app.browser, `${app.server.url}?preset=seed&depth=2&dim=32&heads=4&mlp=64&batch=64&epochs=2&seed=1#train`);
  await lab.click("train-button");
  const step = () => lab.number("training-step");
  await until(step, (s) => s >= 10, { what: "step 10" });
  const early = { loss: await lab.number("train-loss"), points: Number(await lab.attribute("loss-chart", "data-points")) };
  await until(step, (s) => s >= 200, { timeout: 300_000, what: "step 200" });
  const later = { loss: await lab.number("train-loss"), points: Number(await lab.attribute("loss-chart", "data-points")) };
  assert.ok(later.loss < 0.8 * early.loss, `the smoothed loss falls: ${early.loss} → ${later.loss}`);
  assert.ok(later.points > early.points, `the chart grows: ${early.points} → ${later.points} points`);

  // On the CPU, with WebGPU's absence said, in two workers: Firefox runs the helper worker
  // that the training worker starts.
  const status = await lab.textOf(".run-state");
  assert.match(status, /on CPU .*— this browser has no WebGPU/, status);
  await until(() => lab.count("cpu-workers"), (n) => n === 1, { what: "the helper worker training too" });
  const roles = lab.workers.map((url) => new URL(url).searchParams.get("role"));
  assert.ok(roles.includes("train") && roles.includes("helper"), `workers started: ${roles}`);

  await pauseAndResume(lab);

  // Stop: the run ends and is kept in the runs panel (Cache Storage), with no storage problem.
  await lab.click("stop-button");
  await until(() => lab.text("run-state"), (s) => s === "stopped", { what: "stopped" });
  const stoppedAt = await step();
  assert.ok(stoppedAt < 1875, `stopped at step ${stoppedAt}, before the run's end`);
  assert.equal(await lab.count("training-error"), 0);
  await lab.place("runs");
  await until(() => lab.count("run-row"), (n) => n === 1, { what: "a row for the run" });
  assert.equal(await lab.count("runs-error"), 0);
  assertNoErrors(lab);
  await lab.close();
});

test("in Firefox: runs of earlier pages move into the database and continue; a run paused and reloaded at once is offered at its last kept step", async () => {
  const id = 1_733_000_000_456;
  const seeding = await app.browser.newPage();
  await seeding.goto(`${app.server.url}favicon.svg`);
  await seedOldStores(seeding, [{ id, ...(await oldRun(4, 100)) }], null);
  await seeding.close();
  const lab = await FirefoxLab.open(app.browser, `${app.server.url}?backend=cpu&cpu-workers=1&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32&epochs=1#runs`);
  // This Firefox keeps one profile for the file's tests: the earlier test's run is here too.
  const row = `[data-testid="run-row"][data-run="${id}"]`;
  await until(() => lab.countOf(row), (n) => n === 1, { what: "the moved run's row", timeout: 60_000 });
  // Continue opens the training place.
  await lab.clickAt(`${row} [data-testid="continue-run"]`);
  await lab.waitForCss('main[data-place="train"]');
  const step = () => lab.number("training-step");
  await until(step, (s) => s >= 12, { what: "steps past the checkpoint's 10" });
  // The pause's checkpoint held back: the reload comes before it is written, and the run is
  // offered at the checkpoint kept before it (step 10, or an evaluation's since).
  await lab.evaluate(() => { globalThis.vitlabTestSaveDelayMs = 3000; });
  await lab.click("pause-button");
  const kept = (await runDatabase(lab)).checkpoints[id].step;
  await lab.reload();
  await lab.waitFor("model-ready", 120_000);
  await lab.waitFor("resume-saved-button", 30_000);
  assert.match(await lab.text("resume-saved-button"), new RegExp(`step ${kept} of 1000`));
  await lab.click("resume-saved-button");
  await until(step, (s) => s > kept, { what: "steps after the resume" });
  await lab.click("stop-button");
  await until(() => lab.text("run-state"), (s) => s === "stopped", { what: "stopped" });
  await lab.place("runs");
  assert.equal(await lab.countOf(row), 1, "the run, once");
  assert.equal(await lab.count("runs-error"), 0);
  assertNoErrors(lab);
  await lab.close();
});

test("in Firefox digits taught under the prediction join the person's set, which survives a reload", async () => {
  const lab = await FirefoxLab.open(app.browser, `${app.server.url}?backend=cpu`);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  await lab.click("teach-1");
  await lab.clear();
  await lab.stroke(ZERO);
  assert.equal(await lab.settledPrediction(), "0");
  await lab.click("teach-0");
  await until(() => lab.text("teach-said"), (t) => t === "Kept as a 0: 2 in your set.", { what: "the digit kept" });
  const counted = async () => {
    await lab.place("handwriting");
    await lab.waitFor("handwriting-card", 60_000);
    return until(() => lab.attribute("handwriting-count", "data-count"), (c) => c === "2", { what: "2 digits in the set" });
  };
  await counted();
  const read = await until(() => lab.evaluate(() => [...document.querySelectorAll('[data-testid="handwriting-digit"]')].map((d) => d.dataset.read)),
    (r) => r.length === 2 && r.every((d) => /^\d$/.test(d)), { what: "what the model reads in each" });
  assert.deepEqual(read, ["0", "1"], "newest first, read as drawn");
  await lab.reload();
  await lab.waitFor("model-ready", 300_000);
  await counted();
  assertNoErrors(lab);
  await lab.close();
});

test("in Firefox twenty slanted digits drawn and labelled, then fine-tuned on: the held-out ones are read better", async () => {
  const lab = await FirefoxLab.open(app.browser, `${app.server.url}?backend=cpu`);
  await teachAll(lab, handwriting(SHEAR));
  // 500 MNIST digits mixed in, not the card's 2,000: fine-tune.test.mjs holds the default mix
  // to MNIST within a point; here Firefox's workers train it, in a quarter of the steps.
  const { seconds, personal, test: mnist } = await fineTune(lab, { mnist: 500 });
  console.log(`Firefox: fine-tuning ${seconds.toFixed(0)} s; held-out ${personal.before[0]}/10 -> ${personal.after[0]}/10; MNIST ${mnist.before[0]} -> ${mnist.after[0]} of ${mnist.before[1]}`);
  assert.ok(personal.after[0] > personal.before[0], `held out: ${personal.before[0]} -> ${personal.after[0]} of 10`);
  assert.ok(Math.abs(mnist.after[0] - mnist.before[0]) <= mnist.before[1] / 100, "MNIST within a point");
  assertNoErrors(lab);
  await lab.close();
});

test("in Firefox at 390 and 1280 px: one click opens each place, Back returns, a link opens its place, and the story tells a drawn 1", async () => {
  for (const [width, height] of [[390, 844], [1280, 800]]) {
    const lab = await FirefoxLab.open(app.browser, `${app.server.url}?backend=cpu`);
    await lab.page.setViewport({ width, height });
    await placesAndStory(lab, () => lab.page.goBack());
    await lab.goto(`${app.server.url}?backend=cpu#runs`);
    await lab.waitFor("model-ready");
    assert.equal(await lab.evaluate(() => document.querySelector("main")?.dataset.place), "runs");
    assertNoErrors(lab);
    await lab.close();
  }
});

test("in Firefox a stale tab resumes from the other tab's progress, never its own copy", async () => {
  const url = `${app.server.url}?backend=cpu&cpu-workers=1&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32&epochs=50#train`;
  const [a, b] = [await FirefoxLab.open(app.browser, url), await FirefoxLab.open(app.browser, url)];
  await staleTabResumes(a, b);
  await a.click("reset-button");
  assertNoErrors(a);
  assertNoErrors(b);
  await a.close();
  await b.close();
});
