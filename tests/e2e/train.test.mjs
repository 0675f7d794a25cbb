// End-to-end: training in the page (CPU backend, in the worker), against the release build.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LabPage, ONE, VIT, checkpoints, editCheckpoint, numberIn, runDatabase, servedApp, until, watchLongTasks } from "./support.mjs";

const app = servedApp();
/** The heavy workers' script in Chromium, which has relaxed SIMD: `worker_fma`'s, never the plain one. */
const HEAVY_WORKER_JS = /\/worker_fma\.js$/;
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A new page, readied by `prepare(page)`, with the lab open at `query`. */
async function openAt(query, prepare = async () => {}) {
  const page = await app.browser.newPage();
  await prepare(page);
  const lab = new LabPage(page);
  await lab.open(`${app.server.url}${query}`);
  return { page, lab };
}

/** A new page, readied by `prepare(page)`, with the lab open on the CPU backend at `place`. */
async function openOnCpu(prepare = async () => {}, place = "train") {
  return openAt(`?backend=cpu#${place}`, prepare);
}

/** A lab on the CPU whose run trained 5 steps or more and was stopped, so saved. */
async function trainAndStop() {
  const { page, lab } = await openOnCpu();
  await lab.byTestId("train-button").click();
  await until(() => numberIn(lab, "training-step"), (s) => s >= 5, { what: "step 5" });
  await lab.byTestId("stop-button").click();
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "stopped", { what: "stopped" });
  return { page, lab, saved: await numberIn(lab, "training-step") };
}

/**
 * Edits the plan in the checkpoint of the page's tab's run (`sessionStorage`'s `vitlab-run`,
 * its checkpoint in the page's database), as hostile storage might; whether it was there (and
 * at `step`, when given).
 */
async function editTabRunPlan(page, plan, step) {
  const run = await page.evaluate(() => sessionStorage.getItem("vitlab-run"));
  return run !== null && editCheckpoint(page, run, plan, step);
}

/** After a reload, the page offers to resume the run saved at step `saved`. */
async function expectSavedRunAfterReload(page, lab, saved) {
  await page.reload();
  await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
  const resume = lab.byTestId("resume-saved-button");
  await resume.waitFor({ timeout: 30_000 });
  assert.match(await resume.textContent(), new RegExp(`step ${saved} `));
}

test("train, watch the loss fall, pause, resume, use and download the weights, survive a bad upload", async () => {
  const errors = [];
  const { page, lab } = await openOnCpu(async (page) => {
    await watchLongTasks(page);
    page.on("pageerror", (error) => errors.push(error.message));
  }, "draw");
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  const pretrained = await lab.byTestId("model-source").textContent();

  await lab.place("train");
  const trainingStarted = await page.evaluate(() => performance.now());
  await lab.byTestId("train-button").click();
  await until(async () => Number(await lab.byTestId("data-progress").getAttribute("data-value")), (v) => v > 0, { what: "data progress" });
  const step = () => numberIn(lab, "training-step");
  await until(step, (s) => s >= 10, { what: "step 10" });
  const early = { loss: await numberIn(lab, "train-loss"), points: Number(await lab.byTestId("loss-chart").getAttribute("data-points")) };
  await until(step, (s) => s >= 90, { timeout: 300_000, what: "step 90" });
  const later = { loss: await numberIn(lab, "train-loss"), points: Number(await lab.byTestId("loss-chart").getAttribute("data-points")) };
  assert.ok(later.loss < 0.8 * early.loss, `the smoothed loss falls: ${early.loss} → ${later.loss}`);
  assert.ok(later.points > early.points, `the chart grows: ${early.points} → ${later.points} points`);

  // Pause: the step count stands still; resume: it moves again.
  await lab.byTestId("pause-button").click();
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "paused", { what: "paused" });
  const paused = await step();
  await page.waitForTimeout(2000);
  assert.equal(await step(), paused, "no steps while paused");
  await lab.byTestId("pause-button").click();
  await until(step, (s) => s > paused + 3, { what: "steps after resume" });

  // The first evaluation (step 100) fills the test accuracy, the confusion matrix and the gallery.
  const accuracy = await until(() => numberIn(lab, "test-accuracy"), (a) => a > 0, { timeout: 300_000, what: "test accuracy" });
  assert.ok(accuracy > 30 && accuracy <= 100, `test accuracy ${accuracy}%`);
  assert.ok(await lab.byTestId("confusion-matrix").isVisible());

  // The page stayed responsive while the worker trained.
  const longTasks = await page.evaluate((t0) => window.__longTasks.filter((t) => t.start > t0), trainingStarted);
  const worst = Math.max(0, ...longTasks.map((t) => t.duration));
  console.log(`main-thread long tasks while training: ${longTasks.length}, longest ${worst.toFixed(0)} ms`);
  // Training in the page's own thread would block it for whole steps and evaluations.
  assert.ok(worst < 1000, `the page was blocked for ${worst.toFixed(0)} ms while training`);

  assert.ok((await lab.byTestId("mistakes").locator("figure").count()) > 0, "the misclassified digits are shown");

  // From the confusion matrix to the digits, paused so that no new evaluation comes between:
  // a cell shows its own test digits, and one of them goes onto the pad, the draw place shown.
  await lab.byTestId("pause-button").click();
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "paused", { what: "paused" });
  const ones = Number(await lab.byTestId("confusion-cell-1-1").textContent());
  assert.ok(ones > 0, "some 1s read as 1s");
  // The matrix saves as its counts, digits as they are, and as a picture with them written on.
  const [matrixHeader, ...cells] = await lab.savedCsv("confusion-csv");
  assert.deepEqual(matrixHeader, ["true", "predicted", "count"]);
  assert.equal(cells.length, 100);
  assert.equal(Number(cells.find(([t, p]) => t === "1" && p === "1")[2]), ones);
  const total = cells.reduce((sum, row) => sum + Number(row[2]), 0);
  const correct = cells.filter(([t, p]) => t === p).reduce((sum, row) => sum + Number(row[2]), 0);
  const shownAccuracy = await numberIn(lab, "test-accuracy");
  assert.ok(Math.abs((100 * correct) / total - shownAccuracy) < 0.01, `the diagonal is the test accuracy shown (${correct} of ${total}, ${shownAccuracy}%)`);
  const matrix = await lab.savedPicture("confusion-png");
  assert.ok(matrix.png && matrix.width >= 24 + 10 * 40 && matrix.height >= 10 * 40, `${matrix.width}×${matrix.height}`);
  await lab.byTestId("confusion-cell-1-1").click();
  const cell = lab.byTestId("cell-digits");
  await cell.waitFor({ timeout: 30_000 });
  assert.equal(Number(await cell.getAttribute("data-total")), ones);
  assert.equal(await cell.locator("button").count(), Math.min(ones, 32));
  await cell.locator("button").first().click();
  await lab.page.locator('main[data-place="draw"]').waitFor();
  await lab.byTestId("shown-digit").waitFor();
  assert.equal(await lab.byTestId("shown-digit").getAttribute("data-label"), "1");
  assert.notEqual(await lab.settledPrediction(), "–");
  await lab.place("train");
  await lab.byTestId("pause-button").click();

  // Download: a safetensors file of the model in training, with its config.
  const [download] = await Promise.all([page.waitForEvent("download"), lab.byTestId("weights-download").click()]);
  assert.match(download.suggestedFilename(), /\.safetensors$/);
  const bytes = await readFile(await download.path());
  const { header, headerLength } = safetensorsHeader(bytes);
  assert.deepEqual(header["head.weight"].shape, [10, 64]);
  assert.equal(JSON.parse(header.__metadata__["vitlab.config"]).num_classes, 10);
  const dataBytes = Math.max(...Object.values(header).flatMap((t) => t.data_offsets ?? []));
  assert.equal(bytes.length, 8 + headerLength + dataBytes);

  // Draw with these weights: the draw place opens with the model in training.
  await lab.byTestId("use-weights-button").click();
  await lab.page.locator('main[data-place="draw"]').waitFor();
  await until(() => lab.byTestId("model-source").textContent(), (s) => s.startsWith("training run"), { what: "weights in use" });
  await lab.byTestId("model-ready").waitFor();

  // A corrupt upload is refused with a message, and the model in use stays and still works.
  const dir = await mkdtemp(join(tmpdir(), "vitlab-"));
  const corrupt = join(dir, "corrupt.safetensors");
  await writeFile(corrupt, Buffer.from("this is not a safetensors file at all"));
  const inUse = await lab.byTestId("model-source").textContent();
  await lab.place("train");
  await lab.byTestId("weights-upload").setInputFiles(corrupt);
  await lab.byTestId("error").waitFor({ timeout: 30_000 });
  assert.match(await lab.byTestId("error").textContent(), /corrupt\.safetensors was not loaded/);
  await lab.place("draw");
  assert.equal(await lab.byTestId("model-source").textContent(), inUse);
  await lab.stroke(ONE);
  assert.notEqual(await lab.settledPrediction(), "–");
  assert.notEqual(inUse, pretrained);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a paused run survives a reload and resumes where it stopped", async () => {
  const { page, lab } = await openOnCpu();
  await lab.byTestId("train-button").click();
  const step = () => numberIn(lab, "training-step");
  await until(step, (s) => s >= 20, { what: "step 20" });
  await lab.byTestId("pause-button").click();
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "paused", { what: "paused" });
  const paused = await step();

  await page.reload();
  await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
  const resume = lab.byTestId("resume-saved-button");
  await resume.waitFor({ timeout: 30_000 });
  assert.match(await resume.textContent(), new RegExp(`step ${paused} `));
  await resume.click();
  // The charts come back with the run, and steps continue from the saved count, not from 0.
  const first = await until(step, (s) => s > 0, { what: "a step after the resume" });
  assert.ok(first > paused && first <= paused + 20, `the first step after the resume is ${first}, the save's ${paused}`);
  assert.ok(Number(await lab.byTestId("loss-chart").getAttribute("data-points")) >= 2 * paused);
  await lab.byTestId("reset-button").click();
  await page.close();
});

test("a diverging run stops with a message about the loss", async () => {
  const { page, lab } = await openOnCpu();
  const rate = page.locator('[data-testid="training-panel"] label', { hasText: "Learning rate" }).locator("input");
  await rate.fill("1e30");
  await rate.dispatchEvent("change");
  await lab.byTestId("train-button").click();
  await lab.byTestId("training-error").waitFor({ timeout: 120_000 });
  const error = await lab.byTestId("training-error").textContent();
  assert.match(error, /the loss became (NaN|inf|-inf) at step \d+/i);
  // Nothing was saved before the first step, so no NaN weights stay behind to resume or use.
  assert.match(error, /Nothing was saved/);
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "idle", { what: "idle" });
  assert.equal(await lab.byTestId("use-weights-button").count(), 0);
  assert.equal(await lab.byTestId("weights-download").count(), 0);
  // The page still classifies.
  await lab.place("draw");
  await lab.stroke([[0.5, 0.15], [0.5, 0.85]]);
  assert.notEqual(await lab.settledPrediction(), "–");
  await page.close();
});

/**
 * Serves the data with `manifest` edited by `edit` and each chunk file answered by
 * `answer(file, bytes)` (a Buffer to serve, or null for a 404). The training worker
 * fetches the data, so the routes are the browser context's, which see workers' requests.
 */
async function serveData(page, edit, answer) {
  const base = new URL("mnist/", app.server.url).href;
  const manifest = edit(await (await fetch(new URL("manifest.json", base))).json());
  await page.context().route(`${base}**`, async (route) => {
    const file = new URL(route.request().url()).pathname.split("/").pop();
    if (file === "manifest.json") return route.fulfill({ json: manifest });
    const bytes = await answer(file, Buffer.from(await (await fetch(new URL(file, base))).arrayBuffer()));
    return bytes ? route.fulfill({ body: bytes, contentType: "application/octet-stream" }) : route.fulfill({ status: 404 });
  });
}

test("a damaged chunk is skipped with a warning and training goes on", async () => {
  const { page, lab } = await openOnCpu((page) =>
    serveData(
      page,
      (manifest) => ({ ...manifest, train: manifest.train.slice(0, 2), test: manifest.test.slice(0, 1) }),
      // Every copy of train-000.bin has one flipped byte, so each retry fails its checksum too.
      (file, bytes) => {
        if (file === "train-000.bin") bytes[bytes.length >> 1] ^= 0x40;
        return bytes;
      },
    ),
  );
  await lab.byTestId("train-button").click();
  const warning = page.locator(".notices li.warning", { hasText: "train-000.bin" });
  await warning.waitFor({ timeout: 120_000 });
  assert.match(await warning.textContent(), /Training goes on without this chunk/);
  // The intact chunk trains.
  await until(() => numberIn(lab, "training-step"), (s) => s >= 3, { what: "step 3" });
  assert.equal(await lab.byTestId("training-error").count(), 0);
  await lab.byTestId("reset-button").click();
  await page.close();
});

test("with no training data to be had, the run fails with a message and the page still reads digits", async () => {
  const { page, lab } = await openOnCpu((page) =>
    serveData(
      page,
      (manifest) => ({ ...manifest, train: manifest.train.slice(0, 1), test: manifest.test.slice(0, 1) }),
      (file, bytes) => (file.startsWith("train-") ? null : bytes),
    ),
  );
  await lab.byTestId("train-button").click();
  await lab.byTestId("training-error").waitFor({ timeout: 120_000 });
  assert.match(await lab.byTestId("training-error").textContent(), /None of the training data could be loaded/);
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "idle", { what: "idle" });
  assert.match(await page.locator(".notices li.warning").first().textContent(), /train-000\.bin/);
  // No step taken: the panel is as before a run, with no counters.
  assert.equal(await lab.byTestId("training-step").count(), 0);
  await lab.byTestId("before-a-run").waitFor();
  await lab.place("draw");
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  await page.close();
});

test("Stop saves the run; one that diverges after a save goes back to it, and its weights still read digits", async () => {
  const { page, lab, saved } = await trainAndStop();
  const points = await lab.byTestId("loss-chart").getAttribute("data-points");

  // Stopping saved the run; its learning rate is raised so that the resumed run diverges.
  const tampered = await until(
    () => editTabRunPlan(page, { lr: 1e30 }, saved),
    (done) => done,
    { what: `the save of step ${saved}` },
  );
  assert.ok(tampered);
  await page.reload();
  await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
  await lab.byTestId("resume-saved-button").click();

  await lab.byTestId("training-error").waitFor({ timeout: 120_000 });
  const error = await lab.byTestId("training-error").textContent();
  assert.match(error, /the loss became (NaN|inf|-inf) at step \d+/i);
  assert.match(error, new RegExp(`back at the save from step ${saved}\\b`));
  assert.equal(await lab.byTestId("run-state").textContent(), "failed");
  // The charts went back with the model.
  assert.equal(await lab.byTestId("loss-chart").getAttribute("data-points"), points);
  // Resume goes on from that save (here it diverges again, at its raised rate): it acts, and
  // no "Not resumed" is said.
  await page.evaluate(() => {
    globalThis.sawRunning = false;
    const state = () => document.querySelector('[data-testid="run-state"]')?.textContent;
    new MutationObserver(() => { if (state() === "training") globalThis.sawRunning = true; })
      .observe(document.body, { childList: true, characterData: true, subtree: true });
  });
  await lab.byTestId("pause-button").click();
  await until(() => page.evaluate(() => globalThis.sawRunning), (saw) => saw, { what: "the run resumed" });
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "failed", { what: "the second divergence" });
  assert.match(await lab.byTestId("training-error").textContent(), new RegExp(`back at the save from step ${saved}\\b`));
  assert.doesNotMatch(await page.locator("main").textContent(), /Not resumed/);
  // The weights in the run are the saved ones, not the diverged ones: they give probabilities.
  await lab.byTestId("use-weights-button").click();
  await lab.page.locator('main[data-place="draw"]').waitFor();
  await until(() => lab.byTestId("model-source").textContent(), (s) => s.startsWith("training run"), { what: "weights in use" });
  await lab.stroke(ONE);
  assert.notEqual(await lab.settledPrediction(), "–");
  const probabilities = await lab.probabilities();
  assert.ok(probabilities.every(Number.isFinite), `probabilities ${probabilities}`);
  assert.ok(Math.abs(probabilities.reduce((a, b) => a + b) - 1) < 0.01, `probabilities ${probabilities}`);
  await lab.place("train");
  await lab.byTestId("reset-button").click();
  await page.close();
});

test("a start that fails keeps the saved run; a saved run that cannot run is named and can be discarded", async () => {
  const { page, lab, saved } = await trainAndStop();
  const stopped = await page.evaluate(() => sessionStorage.getItem("vitlab-run"));

  // A new run whose manifest cannot be had (offline, say) must not cost the saved one: a start
  // that never began leaves no run behind, and the tab's run is the stopped one again.
  const manifest = /mnist\/manifest\.json/;
  await page.context().route(manifest, (route) => route.abort());
  await lab.byTestId("train-button").click();
  await lab.byTestId("training-error").waitFor({ timeout: 120_000 });
  await page.context().unroute(manifest);
  // The start's record goes in a transaction of its own once the worker is idle again: a
  // reload within those milliseconds would leave it (on a loaded machine the error shows
  // first), so the reload waits for it.
  await until(async () => Object.keys((await runDatabase(page))?.records ?? {}).length, (n) => n === 1, { what: "the start's record gone" });
  await expectSavedRunAfterReload(page, lab, saved);
  assert.equal(await page.evaluate(() => sessionStorage.getItem("vitlab-run")), stopped);
  await lab.place("runs");
  await until(() => lab.byTestId("run-row").count(), (n) => n > 0, { what: "the runs table" });
  assert.equal(await lab.byTestId("run-row").count(), 1, "no row for the start that never began");

  // A saved plan that could never run (batch size 0) once panicked on every load.
  assert.ok(await editTabRunPlan(page, { batch_size: 0 }));
  await page.reload();
  await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
  await lab.place("train");
  const problem = lab.byTestId("saved-run-problem");
  await problem.waitFor({ timeout: 30_000 });
  assert.match(await problem.textContent(), /cannot be resumed: .*batch size/);
  assert.equal(await lab.byTestId("resume-saved-button").count(), 0);
  await lab.byTestId("discard-saved-button").click();
  await problem.waitFor({ state: "detached", timeout: 10_000 });
  await page.reload();
  await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
  assert.equal(await lab.byTestId("saved-run-problem").count(), 0);
  await lab.place("draw");
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  await page.close();
});

test("a run saved as a file, moments and all, continues from it after a reset; a damaged one is refused by name", async () => {
  const { page, lab, saved } = await trainAndStop();
  const [download] = await Promise.all([page.waitForEvent("download"), lab.byTestId("run-download").click()]);
  assert.match(download.suggestedFilename(), /^vitlab-run-step-\d+\.ckpt$/);
  const bytes = await readFile(await download.path());
  // One safetensors file: the weights, AdamW's moments under PyTorch's names, the run state.
  const { header, state } = readRunFile(bytes);
  assert.equal(state.step, saved);
  for (const name of ["head.weight", "optimizer.exp_avg.head.weight", "optimizer.exp_avg_sq.head.weight"]) {
    assert.deepEqual(header[name].shape, [10, 64], name);
  }
  assert.ok(JSON.parse(header.__metadata__["vitlab.adam_times"]).every((t) => t === saved));

  // Reset forgets the run; the file brings it back, at its step.
  await lab.byTestId("reset-button").click();
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "idle", { what: "idle" });
  const dir = await mkdtemp(join(tmpdir(), "vitlab-run-"));
  const file = join(dir, "run.ckpt");
  await writeFile(file, bytes);
  await lab.byTestId("run-upload").setInputFiles(file);
  const step = () => numberIn(lab, "training-step");
  const first = await until(step, (s) => s > 0, { timeout: 120_000, what: "a step after the run file" });
  assert.ok(first > saved && first <= saved + 20, `the first step after the run file is ${first}, the file's ${saved}`);
  await lab.byTestId("stop-button").click();
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "stopped", { what: "stopped" });

  // Cut short, the file is named for what it is not, and the page goes on reading digits.
  const damaged = join(dir, "damaged.ckpt");
  await writeFile(damaged, bytes.subarray(0, bytes.length >> 1));
  await lab.byTestId("run-upload").setInputFiles(damaged);
  await lab.byTestId("training-error").waitFor({ timeout: 60_000 });
  assert.match(await lab.byTestId("training-error").textContent(), /run file cannot be resumed/);
  await lab.place("draw");
  await lab.stroke(ONE);
  assert.notEqual(await lab.settledPrediction(), "–");
  await page.close();
});

test("Stop and Reset end a start whose manifest never comes, at once, and the saved run stays", async () => {
  const { page, lab, saved } = await trainAndStop();
  // A server that takes the request and never answers (the fetch would give up after 20 s).
  const manifest = /mnist\/manifest\.json/;
  await page.context().route(manifest, () => {});
  const state = () => lab.byTestId("run-state").textContent();
  for (const button of ["stop-button", "reset-button"]) {
    await lab.byTestId("train-button").click();
    await until(state, (s) => s === "starting", { what: "starting" });
    const pressed = Date.now();
    await lab.byTestId(button).click();
    await until(state, (s) => s === "idle", { timeout: 10_000, what: `idle after ${button}` });
    console.log(`${button} during a stalled start: idle after ${Date.now() - pressed} ms`);
    if (button === "stop-button") {
      // Nothing new was saved: the run saved before is still offered.
      await page.context().unroute(manifest);
      await expectSavedRunAfterReload(page, lab, saved);
      await page.context().route(manifest, () => {});
    }
  }
  await page.context().unroute(manifest);
  await page.close();
});

test("a Stop while the helpers' scripts are still loading ends the start alone: the helpers let go raise nothing that reaches the page", async () => {
  const { page, lab } = await openAt("?backend=cpu&cpu-workers=3#train");
  // The training worker loads its script first (worker_fma.js: Chromium has relaxed SIMD); its
  // two helpers' loads never end, nor does the
  // manifest: the start waits until the Stop ends it, and its helpers with it.
  let loads = 0;
  await page.context().route(HEAVY_WORKER_JS, (route) => (++loads === 1 ? route.continue() : undefined));
  await page.context().route(/mnist\/manifest\.json/, () => {});
  const state = () => lab.byTestId("run-state").textContent();
  await lab.byTestId("train-button").click();
  await until(() => loads, (n) => n >= 3, { what: "both helpers loading" });
  await lab.byTestId("stop-button").click();
  await until(state, (s) => s === "idle", { timeout: 10_000, what: "idle after the Stop" });
  // The helpers' cut loads come after their links are gone: nothing may report them.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  assert.equal(await state(), "idle");
  assert.equal(await lab.byTestId("training-error").count(), 0, await lab.page.locator("body").textContent());
  await page.context().unroute(HEAVY_WORKER_JS);
  await page.context().unroute(/mnist\/manifest\.json/);
  await page.close();
});

/** The losses of a run's first `steps` steps, from the run file it saves on Stop. */
async function lossesOfRun(page, lab, steps) {
  await lab.byTestId("train-button").click();
  await until(() => numberIn(lab, "training-step"), (s) => s >= steps, { timeout: 120_000, what: `step ${steps}` });
  await lab.byTestId("stop-button").click();
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "stopped", { what: "stopped" });
  const [download] = await Promise.all([page.waitForEvent("download"), lab.byTestId("run-download").click()]);
  const { state } = readRunFile(await readFile(await download.path()));
  return state.history.steps.filter((p) => p.step <= steps).map((p) => p.loss);
}

test("an experiment as a link fills the form and the view, and trains the same on the CPU however the data arrives", async () => {
  const link = "?backend=cpu&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32&epochs=1&seed=7&map=layer-2";
  const { page, lab } = await openAt(`${link}#train`);
  assert.equal(await lab.byTestId("plan-depth").inputValue(), "1");
  assert.equal(await lab.byTestId("plan-batch").inputValue(), "32");
  assert.equal(await lab.byTestId("seed-field").inputValue(), "7");
  await lab.place("draw");
  await lab.stroke(ONE);
  await lab.settledPrediction();
  assert.match(await page.locator(".attention-main .caption").textContent(), /layer 2, mean of heads/);
  // The page's own link holds the same experiment.
  await lab.place("train");
  const shared = new URL(await lab.byTestId("share-link").getAttribute("href"), app.server.url).searchParams;
  for (const [key, value] of new URLSearchParams(link)) assert.equal(shared.get(key), value, key);
  assert.equal(shared.get("weights"), "pretrained/vit-lab.safetensors.gz");

  // Chunks join the pass at fixed steps (4, 8, 12): served at once here, and late below.
  const steps = 14;
  const fast = await lossesOfRun(page, lab, steps);
  const slow = await openAt(`${link}#train`, async (page) => {
    await page.context().route(/mnist\/train-0(0[1-9]|[1-9]\d)\.bin$/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue();
    });
  });
  const late = await lossesOfRun(slow.page, slow.lab, steps);
  assert.equal(fast.length, steps);
  assert.deepEqual(late, fast, "the same loss at every step");
  await page.close();
  await slow.page.close();
});

/**
 * Trains the plan of `query` to its end on the CPU. The run file's tensors (weights and AdamW
 * moments, byte for byte), the loss of every step, the step at which the page first said more
 * than one worker trains (null if it never did), the most workers it said, and how many at the
 * end.
 */
async function finishedRun(query, prepare = async () => {}) {
  const { page, lab } = await openAt(`${query}#train`, prepare);
  await lab.byTestId("train-button").click();
  let sharedFrom = null;
  let mostWorkers = 1;
  await until(
    async () => {
      const workers = await lab.cpuWorkers();
      if (sharedFrom === null && workers > 1) sharedFrom = await numberIn(lab, "training-step");
      mostWorkers = Math.max(mostWorkers, workers);
      return lab.byTestId("run-state").textContent();
    },
    (state) => state === "finished",
    { timeout: 300_000, every: 100, what: "the run's end" },
  );
  const [download] = await Promise.all([page.waitForEvent("download"), lab.byTestId("run-download").click()]);
  const run = readRunFile(await readFile(await download.path()));
  const notices = await page.locator(".notices li").allTextContents();
  const workersAtEnd = await lab.cpuWorkers();
  await page.close();
  return { ...run, sharedFrom, mostWorkers, workersAtEnd, notices };
}

/** A safetensors file's header (its JSON, parsed) and the header's length in bytes. */
function safetensorsHeader(bytes) {
  const headerLength = Number(bytes.readBigUInt64LE(0));
  return { header: JSON.parse(bytes.subarray(8, 8 + headerLength).toString()), headerLength };
}

/**
 * A run file (the page's "Save the run" or `vit train`'s OUT.ckpt): its header, its tensors'
 * bytes, its tensors by name as floats, its state (plan, counters, history) and every step's
 * loss.
 */
function readRunFile(bytes) {
  const { header, headerLength } = safetensorsHeader(bytes);
  const tensors = bytes.subarray(8 + headerLength);
  const state = JSON.parse(header.__metadata__["vitlab.session"]);
  const floats = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === "__metadata__" || entry.dtype !== "F32") continue;
    const [start, end] = entry.data_offsets;
    const copy = Uint8Array.from(tensors.subarray(start, end));
    floats[name] = new Float32Array(copy.buffer);
  }
  return { header, tensors, floats, state, losses: state.history.steps.map((p) => p.loss) };
}

/** `vit train`'s options for `plan` (a ViT's), one thread, the repository's chunks. */
function cliOptionsFor(plan) {
  const vit = plan.config;
  const options = {
    "--preset": "seed", "--patch-size": vit.patch_size, "--dim": vit.dim, "--depth": vit.depth, "--heads": vit.heads,
    "--mlp-dim": vit.mlp_dim, "--dropout": vit.dropout, "--epochs": plan.epochs, "--batch-size": plan.batch_size,
    "--lr": plan.lr, "--weight-decay": plan.weight_decay, "--label-smoothing": plan.label_smoothing, "--seed": plan.seed,
    "--threads": 1, "--data": join(ROOT, "www", "mnist"),
  };
  if (plan.warmup_epochs !== null && plan.warmup_epochs !== undefined) options["--warmup-epochs"] = plan.warmup_epochs;
  if (plan.train_limit) options["--limit"] = plan.train_limit;
  return [...Object.entries(options).flatMap(([key, value]) => [key, String(value)]), ...(plan.augment ? ["--augment"] : [])];
}

/** The largest absolute difference between two equally long lists of numbers. */
function largestDifference(a, b) {
  assert.equal(a.length, b.length);
  return a.reduce((most, value, i) => Math.max(most, Math.abs(value - b[i])), 0);
}

test("three CPU workers (the worker and two helpers) train the run one trains, bit for bit, the page says so, and a helper that dies costs nothing", async () => {
  // 100 steps of the seed preset, each of 8 shards: the helpers (wasm instances of their own)
  // are ready long before. Three workers on this 2-core machine show that the shards' sum does
  // not depend on who computed what, not a gain.
  const link = "?backend=cpu&preset=seed&batch=64&epochs=1&images=6400&seed=3";
  const three = await finishedRun(`${link}&cpu-workers=3`);
  const one = await finishedRun(`${link}&cpu-workers=1`);
  assert.equal(one.sharedFrom, null, "?cpu-workers=1 trains in one worker");
  assert.ok(three.sharedFrom !== null && three.sharedFrom < 80, `the helpers took part from step ${three.sharedFrom}`);
  assert.equal(three.mostWorkers, 3, "the panel says three workers train");
  assert.equal(three.losses.length, 100);
  assert.deepEqual(three.losses, one.losses, "the same loss at every step");
  assert.ok(three.tensors.equals(one.tensors), "the same weights and moments, byte for byte");

  // A helper that closes itself mid-run answers nothing: the worker waits out the deadline,
  // says so, and computes that helper's shards from then on while the other helper goes on,
  // with the same results. (Playwright does not see a nested worker's own script, only what
  // it imports: on the CPU the training worker loads worker_fma.js first, its helpers after.)
  const dying = await finishedRun(`${link}&cpu-workers=3`, async (page) => {
    let loads = 0;
    await page.context().route(HEAVY_WORKER_JS, async (route) => {
      if (++loads !== 3) return route.continue();
      const script = await (await route.fetch()).text();
      await route.fulfill({ contentType: "text/javascript", body: `${script}\nsetTimeout(() => close(), 2500);` });
    });
  });
  assert.equal(dying.mostWorkers, 3, "both helpers took part before one closed");
  assert.equal(dying.workersAtEnd, 2, "the worker and the other helper at the end");
  assert.ok(dying.notices.some((n) => /helper CPU worker stopped \(no answer within \d+ s\)/.test(n)), dying.notices.join(" | "));
  assert.deepEqual(dying.losses, one.losses);
  assert.ok(dying.tensors.equals(one.tensors), "the same weights and moments, byte for byte");
});

test("the page's worker (wasm, its own matrix product, a helper) and `vit train` (native, gemm) train one plan to the same losses and weights within float rounding", async () => {
  assert.ok(existsSync(VIT), `${VIT} is built by cargo test --release first`);
  // 20 steps of a small one-block model with the lab recipe's every part: patch 4,
  // augmentation, dropout, AdamW's weight decay, label smoothing, warm-up and cosine decay.
  const page = await finishedRun("?backend=cpu&preset=lab&depth=1&dim=32&heads=4&mlp=64&batch=32&epochs=2&images=320&seed=11");
  const plan = page.state.plan;
  assert.ok(plan.augment && plan.config.dropout > 0 && plan.label_smoothing > 0 && plan.weight_decay > 0, JSON.stringify(plan));
  const dir = await mkdtemp(join(tmpdir(), "vitlab-both-"));
  const out = join(dir, "native.safetensors");
  execFileSync(VIT, ["train", ...cliOptionsFor(plan), "--out", out], { stdio: ["ignore", "ignore", "inherit"] });
  const native = readRunFile(await readFile(`${out}.ckpt`));
  // One plan: only where each evaluates differs (the page on its first 1,000 test digits).
  const training = ({ eval_images, eval_every, ...rest }) => rest;
  assert.deepEqual(training(native.state.plan), training(plan), "the same plan");
  assert.equal(page.losses.length, 20);
  assert.equal(native.losses.length, 20);
  const lossGap = largestDifference(page.losses, native.losses);
  let weightGap = 0;
  for (const [name, values] of Object.entries(native.floats)) {
    assert.ok(page.floats[name], `the page's run file has ${name}`);
    weightGap = Math.max(weightGap, largestDifference(page.floats[name], values));
  }
  assert.deepEqual(Object.keys(page.floats).sort(), Object.keys(native.floats).sort(), "the same tensors");
  console.log(`page vs vit train, 20 steps: largest loss difference ${lossGap.toExponential(2)}, largest weight or moment difference ${weightGap.toExponential(2)}`);
  // The two sum their products in another order (wasm SIMD128 panels, gemm's tiles), so the
  // last bits differ; a different batch, augmentation, dropout mask or schedule would move the
  // loss by 1e-2 or more.
  assert.ok(lossGap < 1e-4, `losses differ by ${lossGap}`);
  assert.ok(weightGap < 1e-4, `weights or moments differ by ${weightGap}`);
});

test("a link's bad values are named and ignored, and the form keeps its own", async () => {
  const { page, lab } = await openAt(`?backend=cpu&depth=abc&lr=1e999&map=head-99-1&seed=${"9".repeat(300)}`);
  const message = await lab.byTestId("error").textContent();
  for (const named of ["depth=abc", "lr=1e999", "map=head-99-1", "seed=9999"]) assert.ok(message.includes(named), `${named} in: ${message}`);
  assert.ok(message.length < 600, `a ${message.length}-character message`);
  await lab.place("train");
  assert.equal(await lab.byTestId("plan-depth").inputValue(), "6", "the seed preset's depth");
  // A map the model does not have is named once the model is in.
  await lab.page.goto(`${app.server.url}?backend=cpu&map=head-7-1`);
  await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
  await until(() => lab.byTestId("error").textContent(), (text) => /map=head-7-1: the model has 6 layers/.test(text), { what: "the map named" });
  // The message floats over the page: dismissing it moves nothing (a pad that moved mid-stroke
  // would draw where the pen is not).
  const pad = lab.byTestId("draw-canvas");
  const padBefore = await pad.boundingBox();
  await lab.byTestId("error").getByRole("button", { name: "Dismiss" }).click();
  assert.equal(await lab.byTestId("error").count(), 0);
  assert.deepEqual(await pad.boundingBox(), padBefore);
  await page.close();
});

test("runs are kept, compared, loaded and deleted across reloads; storage that refuses harms no run", async () => {
  const link = "?backend=cpu&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32&epochs=1";
  const { page, lab } = await openAt(`${link}&seed=1#train`);
  const rows = lab.byTestId("run-row");
  const runFor = async (steps) => {
    await lab.byTestId("train-button").click();
    await until(() => numberIn(lab, "training-step"), (s) => s >= steps, { timeout: 120_000, what: `step ${steps}` });
    await lab.byTestId("stop-button").click();
    await until(() => lab.byTestId("run-state").textContent(), (s) => s === "stopped", { what: "stopped" });
  };
  await runFor(5);
  await lab.place("runs");
  await until(() => rows.count(), (n) => n === 1, { what: "a row for the run" });
  await lab.place("train");
  await lab.byTestId("seed-field").fill("2");
  await lab.byTestId("seed-field").press("Tab");
  await runFor(5);
  await lab.place("runs");
  await until(() => rows.count(), (n) => n === 2, { what: "a row for each run" });
  // The weights are kept at the stop: the row offers to draw with them.
  const useWeights = (row) => row.getByRole("button", { name: /^Draw with it/ });
  await until(() => useWeights(rows.first()).count(), (n) => n === 1, { what: "weights kept" });
  assert.match(await rows.first().textContent(), /seed 2/);
  // Ticked, their curves overlay: one line each.
  for (const box of await lab.byTestId("runs-table").locator('input[type="checkbox"]').all()) await box.check();
  await until(() => lab.byTestId("compare-chart").locator("polyline").count(), (n) => n === 2, { what: "two curves" });
  assert.ok(Number(await lab.byTestId("compare-chart").getAttribute("data-points")) >= 10);
  await useWeights(rows.first()).click();
  await lab.page.locator('main[data-place="draw"]').waitFor();
  await until(() => lab.byTestId("model-source").textContent(), (s) => /^run #\d{4}/.test(s), { what: "a run's weights in use" });
  // Kept across a reload; one deleted stays deleted.
  await page.reload();
  await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
  await lab.place("runs");
  await until(() => rows.count(), (n) => n === 2, { what: "both rows after a reload" });
  const kept = (await runDatabase(page)).bytes;
  console.log(`runs storage for two runs: ${JSON.stringify(kept)} bytes`);
  assert.ok(kept.checkpoints > 0 && kept.weights > 0, JSON.stringify(kept));
  await lab.byTestId("runs-space").waitFor();
  assert.match(await lab.byTestId("runs-space").textContent(), /This page keeps [\d.]+ [MG]B of the [\d.]+ [MG]B the browser allows it/);
  await rows.first().getByRole("button", { name: /^Delete/ }).click();
  await until(() => rows.count(), (n) => n === 1, { what: "one row after a delete" });
  // The row goes only once the storage has let the run go: a reload at once keeps it gone.
  await page.reload();
  await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
  await until(() => rows.count(), (n) => n === 1, { what: "one row after a delete and a reload" });
  assert.match(await rows.first().textContent(), /seed 1/);
  await page.close();

  // A browser that refuses the runs' storage: the panel says so, and training goes on.
  const refused = await openAt(`${link}#runs`, (page) =>
    page.addInitScript(() => {
      const open = IDBFactory.prototype.open;
      IDBFactory.prototype.open = function (name, version) {
        if (name === "vitlab-runs") throw new DOMException("refused", "SecurityError");
        return open.call(this, name, version);
      };
    }));
  await refused.lab.byTestId("runs-error").waitFor({ timeout: 30_000 });
  await refused.lab.place("train");
  await refused.lab.byTestId("train-button").click();
  await until(() => numberIn(refused.lab, "training-step"), (s) => s >= 5, { timeout: 120_000, what: "steps without storage" });
  await refused.lab.place("runs");
  assert.match(await refused.lab.byTestId("runs-error").textContent(), /runs are not kept/);
  await refused.lab.place("train");
  await refused.lab.byTestId("stop-button").click();
  await refused.page.close();
});

test("attention as it learns: the probes' maps at each evaluation, to scrub and play, replayed after a reload", async () => {
  const { page, lab } = await openAt("?backend=cpu&preset=seed&depth=2&dim=32&heads=4&mlp=64&batch=32&epochs=1&seed=3");
  await lab.stroke(ONE);
  await lab.settledPrediction();
  await lab.place("train");
  await lab.byTestId("train-button").click();
  const slider = lab.byTestId("attention-timeline");
  await until(async () => Number((await slider.getAttribute("max").catch(() => null)) ?? -1), (max) => max >= 2, { timeout: 300_000, what: "three evaluations" });
  await lab.byTestId("stop-button").click();
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "stopped", { what: "stopped" });
  const evaluations = Number(await slider.getAttribute("max")) + 1;
  const panel = page.locator('[data-testid="training-panel"] .timeline');
  // Four test digits and the drawing, each with its rollout and one map per layer.
  assert.equal(await panel.locator(".timeline-probe").count(), 5);
  assert.equal(await panel.locator(".timeline-probe").first().locator("canvas").count(), 2 + 2);
  const rollout = () => panel.locator('canvas[title="rollout"]').first().getAttribute("aria-label");
  const distances = () => lab.byTestId("attention-timeline-distance").getAttribute("aria-label");
  const newest = { rollout: await rollout(), distances: await distances() };
  // Scrubbed to the first evaluation: its step, and other maps and distances.
  await slider.evaluate((input) => {
    input.value = "0";
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
  assert.equal(await slider.getAttribute("data-step"), "100");
  assert.notEqual(await rollout(), newest.rollout, "the maps move with the timeline");
  assert.notEqual(await distances(), newest.distances, "Fig. 7's distances move with it");
  // The evaluation shown saves as one figure: a row per probe and the drawing, as on screen.
  const [, ...figure] = await lab.savedCsv("attention-timeline-maps-csv");
  const maps = [...new Set(figure.map((row) => row[0]))];
  const perRow = (name) => [name, `${name} · rollout`, `${name} · layer 1`, `${name} · layer 2`];
  assert.deepEqual(maps, [1, 2, 3, 4].map((p) => perRow(`probe ${p}`)).flat().concat(perRow("drawing")));
  const shownRollout = await rollout();
  const savedRollout = figure.filter((row) => row[0] === "probe 1 · rollout").map((row) => Number(row[3]));
  assert.equal(savedRollout.length, 16, "the first probe's rollout over the 4×4 grid");
  assert.match(shownRollout, new RegExp(`from ${Math.min(...savedRollout).toFixed(3)} to ${Math.max(...savedRollout).toFixed(3)}`));
  assert.ok((await lab.savedPicture("attention-timeline-maps-png")).width >= 24 + 4 * 96 + 3 * 10, "four tiles a row");
  // Play goes through to the newest.
  await lab.byTestId("attention-timeline-play").click();
  await until(() => slider.getAttribute("data-step"), (step) => Number(step) >= 100 * evaluations, { what: "played to the newest" });
  assert.equal(await rollout(), newest.rollout);
  // Kept with the run: after a reload the runs table replays it.
  await page.reload();
  await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
  await lab.place("runs");
  const row = lab.byTestId("run-row").first();
  await row.getByRole("button", { name: /^Replay attention/ }).click();
  const replay = lab.byTestId("replay-timeline");
  await replay.waitFor();
  assert.equal(Number(await replay.getAttribute("max")) + 1, evaluations);
  assert.equal(await page.locator('[data-testid="runs-panel"] .timeline-probe').count(), 5);
  await page.close();
});

test("a CNN trained here on 200 images joins the ViT-against-CNN chart as a point of its own", async () => {
  const errors = [];
  const { page, lab } = await openAt("?backend=cpu&preset=cnn&images=200&epochs=1&batch=32#train", async (page) => {
    page.on("pageerror", (error) => errors.push(error.message));
  });
  assert.equal(await lab.byTestId("plan-training-images").inputValue(), "200");
  // No ViT sizes for a CNN.
  assert.equal(await lab.byTestId("plan-depth").inputValue(), "");
  // The chart is in the experiments.
  await lab.place("experiments");
  const chart = lab.byTestId("data-scaling-chart");
  const before = Number(await chart.getAttribute("data-points"));
  await lab.place("train");
  await lab.byTestId("train-button").click();
  // 200 images in batches of 32: 7 steps, then the run ends on its own.
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "finished", { timeout: 300_000, what: "the run finished" });
  assert.equal(await numberIn(lab, "training-step"), 7);
  await lab.place("experiments");
  await until(() => chart.getAttribute("data-points"), (n) => Number(n) === before + 1, { what: "the run's point on the chart" });
  assert.match(await chart.locator("..").textContent(), /CNN runs here/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("two tabs train and save at once: each keeps its own run, a reload resumes its own, and the table continues either", async () => {
  const context = await app.browser.newContext();
  const open = async (seed) => {
    const page = await context.newPage();
    const lab = new LabPage(page);
    await lab.open(`${app.server.url}?backend=cpu&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32&epochs=1&seed=${seed}#train`);
    return { page, lab, run: () => page.evaluate(() => sessionStorage.getItem("vitlab-run")) };
  };
  const a = await open(1);
  const b = await open(2);
  const step = (tab) => numberIn(tab.lab, "training-step");
  const stop = async (tab) => {
    await tab.lab.byTestId("stop-button").click();
    await until(() => tab.lab.byTestId("run-state").textContent(), (s) => s === "stopped", { what: "stopped" });
    return step(tab);
  };
  // Both train at once; each pauses (a save) while the other trains.
  await a.lab.byTestId("train-button").click();
  await b.lab.byTestId("train-button").click();
  await until(() => step(a), (s) => s >= 5, { what: "tab A at step 5" });
  await a.lab.byTestId("pause-button").click();
  await until(() => a.lab.byTestId("run-state").textContent(), (s) => s === "paused", { what: "A paused" });
  await until(() => step(b), (s) => s >= 5, { what: "tab B at step 5" });
  await b.lab.byTestId("pause-button").click();
  await until(() => b.lab.byTestId("run-state").textContent(), (s) => s === "paused", { what: "B paused" });
  await a.lab.byTestId("pause-button").click();
  const savedA = await (async () => {
    await until(() => step(a), (s) => s >= 8, { what: "tab A on to step 8" });
    return stop(a);
  })();
  await b.lab.byTestId("pause-button").click();
  await until(() => step(b), (s) => s >= savedA + 6, { what: `tab B past step ${savedA + 6}` });
  const savedB = await stop(b);

  // Two runs, two checkpoints, each with its own plan and step.
  const [runA, runB] = [await a.run(), await b.run()];
  assert.ok(runA && runB && runA !== runB, `each tab its own run: ${runA}, ${runB}`);
  const kept = await until(() => checkpoints(a.page), (c) => c[runA]?.step === savedA && c[runB]?.step === savedB, { what: "both checkpoints" });
  assert.deepEqual(kept, { [runA]: { step: savedA, seed: 1 }, [runB]: { step: savedB, seed: 2 } });

  // A reload offers each tab its own run.
  await expectSavedRunAfterReload(a.page, a.lab, savedA);
  await expectSavedRunAfterReload(b.page, b.lab, savedB);

  // Tab A resumes its own run, in its own record, from its own step.
  await a.lab.byTestId("resume-saved-button").click();
  await until(() => a.lab.byTestId("run-state").textContent(), (s) => s === "training", { what: "A resumed" });
  // While tab A trains it, tab B is told so instead of continuing A's run from the table (which
  // opens the training place).
  await b.lab.place("runs");
  await b.page.locator(`[data-testid="run-row"][data-run="${runA}"]`).getByTestId("continue-run").click();
  await b.page.locator('main[data-place="train"]').waitFor();
  await until(() => b.lab.byTestId("training-error").textContent(), (t) => /being trained in another tab/.test(t), { what: "B told that A trains it" });
  assert.equal(await b.lab.byTestId("run-state").textContent(), "idle");
  const stoppedA = await stop(a);
  assert.ok(stoppedA >= savedA);
  const after = await until(() => checkpoints(a.page), (c) => c[runA]?.step === stoppedA, { what: "A's new save" });
  assert.deepEqual(after, { [runA]: { step: stoppedA, seed: 1 }, [runB]: { step: savedB, seed: 2 } }, "A's plan goes on; B's checkpoint untouched");

  // Tab B lets its run go; the table continues it, from its checkpoint. (Reset is offered once
  // the tab has a run under way or a worker: B resumes its saved run first.)
  await b.lab.byTestId("resume-saved-button").click();
  await until(() => b.lab.byTestId("run-state").textContent(), (s) => s === "training", { what: "B resumed" });
  await b.lab.byTestId("reset-button").click();
  await until(() => b.lab.byTestId("run-state").textContent(), (s) => s === "idle", { what: "B idle" });
  assert.equal(await b.run(), null);
  await b.lab.place("runs");
  const rows = b.lab.byTestId("run-row");
  await until(() => rows.count(), (n) => n === 2, { what: "both runs in the table" });
  const rowB = b.lab.page.locator(`[data-testid="run-row"][data-run="${runB}"]`);
  const rowA = b.lab.page.locator(`[data-testid="run-row"][data-run="${runA}"]`);
  assert.ok(await rowA.getByTestId("continue-run").isEnabled(), "A's run can be continued from the table");
  await rowB.getByTestId("continue-run").click();
  await b.page.locator('main[data-place="train"]').waitFor();
  await until(() => b.lab.byTestId("run-state").textContent(), (s) => s === "training", { what: "B continued" });
  const firstStep = await until(() => step(b), (s) => s > 0, { what: "B's first step" });
  assert.ok(firstStep > savedB, `B goes on from its own step ${savedB} (first shown: ${firstStep})`);
  assert.equal(await b.run(), runB, "B's run is the tab's again");
  await stop(b);
  await b.lab.place("runs");
  await until(() => rows.count(), (n) => n === 2, { what: "no third row" });
  await context.close();
});

test("a worker of another build (a new version deployed under an open page) is never run: the page says to reload", async () => {
  // On 8dd4619 an old page ran whatever worker the host now served under the same name, and
  // its greeting said nothing of its version. Here the heavy workers' scripts answer as a
  // worker of another build would: with their greeting alone.
  const other = `self.postMessage(JSON.stringify({ Listening: { build: "another-build" } }));`;
  const { page, lab } = await openOnCpu(async (page) => {
    await page.route(/\/worker(_fma)?_loader\.js/, (route) => route.fulfill({ contentType: "text/javascript", body: other }));
  });
  await lab.byTestId("train-button").click();
  const error = await until(() => lab.byTestId("training-error").textContent(), (t) => /./.test(t ?? ""), { what: "the refusal" });
  assert.match(error, /from another version of vitlab: reload the page/);
  assert.equal(await lab.byTestId("run-state").textContent(), "failed");
  await page.close();
});
