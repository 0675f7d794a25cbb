// End-to-end: the release build in Chromium draws digits and gets them right, on WebGPU
// (SwiftShader here) and on the CPU backend.
import { test } from "node:test";
import assert from "node:assert/strict";
import { GPU_FAULTS, LabPage, ONE, ZERO, expectReading, gpuWorker, prependToWorkers, servedApp, until } from "./support.mjs";
import { WAIT_MS, theExampleOnArrival } from "./arrival.mjs";

const app = servedApp();

for (const width of [390, 1280]) {
  test(`a first look at ${width} px: the pad draws a 3 by itself, the prediction, the map and the story follow it, and a stroke takes over`, async () => {
    const context = await app.browser.newContext({ viewport: { width, height: 800 } });
    const lab = new LabPage(await context.newPage());
    const errors = [];
    lab.page.on("pageerror", (error) => errors.push(error.message));
    await lab.open(`${app.server.url}?backend=cpu`);
    console.log(`# a first look at ${width} px, ms after the model was ready: ${JSON.stringify(await theExampleOnArrival(lab))}`);
    // Draw left and come back to: the person's drawing, and no example again.
    await lab.place("runs");
    await lab.place("draw");
    assert.equal(await lab.settledPrediction(), "1");
    await lab.clear();
    await lab.page.waitForTimeout(2_000);
    assert.equal(await lab.byTestId("prediction").textContent(), "–", "the example is drawn once");
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test("a first look at Experiments: every chart reads the example, Draw then shows it, and a stroke takes over", async () => {
  const lab = new LabPage(await app.browser.newPage({ viewport: { width: 1280, height: 900 } }));
  const errors = [];
  lab.page.on("pageerror", (error) => errors.push(error.message));
  await lab.open(`${app.server.url}?backend=cpu#experiments`);
  const ready = Date.now();
  const within = (what) => ({ what, every: 50, timeout: WAIT_MS });
  await until(() => lab.byTestId("experiments-need-a-digit").count(), (n) => n === 0, within("the example read"));
  // The mean attention distance's filled dots are this drawing's: one per head.
  const dots = lab.page.locator(`[data-testid="distance-chart"] circle:not([fill="none"])`);
  await until(() => dots.count(), (n) => n > 0, within("the example's attention distances"));
  console.log(`# a first look at Experiments: the example's distances ${Date.now() - ready} ms after the model was ready`);
  await lab.place("draw");
  assert.equal(await lab.settledPrediction(), "3");
  assert.equal(await lab.byTestId("example-note").count(), 1, "the pad says the example is the page's");
  assert.equal(await lab.byTestId("teach-3").count(), 0, "the example offered to keep as the person's");
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  assert.equal(await lab.byTestId("example-note").count(), 0);
  assert.deepEqual(errors, []);
  await lab.page.close();
});

test("a test digit taken over the example is offered to keep, as the person's drawing is", async () => {
  const context = await app.browser.newContext();
  const lab = new LabPage(await context.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  await until(() => lab.byTestId("prediction").textContent(), (digit) => digit === "3", { what: "the example read" });
  assert.equal(await lab.byTestId("teach-3").count(), 0, "the example offered to keep");
  await lab.byTestId("random-test-digit").click();
  await lab.byTestId("shown-digit").waitFor();
  await lab.settledPrediction();
  assert.equal(await lab.byTestId("example-note").count(), 0);
  assert.equal(await lab.byTestId("teach-0").count(), 1, "the test digit not offered to keep");
  await context.close();
});

for (const backend of ["cpu", "webgpu"]) {
  test(`draws a 1 and a 0 on ${backend}`, async () => {
    const lab = new LabPage(await app.browser.newPage());
    const errors = [];
    lab.page.on("pageerror", (error) => errors.push(error.message));
    await lab.open(`${app.server.url}?backend=${backend}`);
    assert.match(await lab.backend(), backend === "cpu" ? /CPU/ : /WebGPU/);

    await expectReading(lab, [ONE], "1");
    await lab.clear();
    await expectReading(lab, [ZERO], "0");
    const zero = await lab.probabilities();
    assert.ok(await lab.byTestId("attention-map").isVisible());
    // The heatmap is painted: many colours, where a blank or one-colour canvas has one.
    const colours = await lab.byTestId("attention-map").evaluate((canvas) => {
      const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
      const seen = new Set();
      for (let i = 0; i < data.length; i += 4 * 37) seen.add(data.slice(i, i + 4).join());
      return seen.size;
    });
    assert.ok(colours > 8, `the attention map has ${colours} colours`);
    // Fig. 7's distances for this drawing, in the experiments: one dot per layer and head (6 × 8
    // in the lab model).
    await lab.place("experiments");
    const dots = lab.byTestId("distance-chart").locator('circle[fill="#3b528b"]');
    await until(() => dots.count(), (n) => n === 48, { what: "a dot per layer and head", timeout: 60_000 });

    // A stroke through the 0, then Undo: the same image again, so the same probabilities.
    await lab.place("draw");
    await lab.stroke([[0.2, 0.5], [0.8, 0.5]]);
    await until(() => lab.probabilities(), (p) => p.some((v, d) => Math.abs(v - zero[d]) > 1e-4), { what: "a new reading" });
    await lab.byTestId("undo-button").click();
    const undone = await until(() => lab.probabilities(), (p) => p.every((v, d) => Math.abs(v - zero[d]) < 1e-5), { what: "the 0's probabilities back" });
    assert.equal(await lab.settledPrediction(), "0", `after Undo: ${undone}`);
    assert.deepEqual(errors, []);
    await lab.page.close();
  });
}

test("a random test digit goes to the model as it is, and a drawing takes over again", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  const shown = lab.byTestId("shown-digit");
  let right = 0;
  let previous = null;
  for (let round = 0; round < 5; round++) {
    await lab.byTestId("random-test-digit").click();
    const caption = await until(() => shown.textContent().catch(() => null), (text) => text !== null && text !== previous, { what: "a test digit shown" });
    previous = caption;
    const label = await shown.getAttribute("data-label");
    assert.match(caption, new RegExp(`test digit #\\d+, labelled ${label}`));
    right += (await lab.settledPrediction()) === label ? 1 : 0;
  }
  // The shipped model reads 99 % of MNIST's test digits right.
  assert.ok(right >= 4, `${right} of 5 test digits read right`);
  // The pad shows the digit: its pixels are not all black.
  const lit = await lab.byTestId("draw-canvas").evaluate((canvas) => {
    const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
    let lit = 0;
    for (let i = 0; i < data.length; i += 4) lit += data[i] > 64 ? 1 : 0;
    return lit;
  });
  assert.ok(lit > 1000, `${lit} lit pixels on the pad`);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  assert.equal(await shown.count(), 0, "a drawing replaces the test digit");
  await lab.page.close();
});

test("a missing weights file shows an error, not a broken page", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.page.goto(`${app.server.url}?backend=cpu&weights=pretrained/missing.safetensors`);
  await lab.byTestId("error").waitFor({ timeout: 60_000 });
  assert.match(await lab.byTestId("error").textContent(), /HTTP 404/);
  await lab.page.close();
});

test("the shipped seed-recipe model can replace the default and still reads digits", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  assert.match(await lab.byTestId("model-source").textContent(), /vit-lab/);
  await lab.byTestId("shipped-model").selectOption("pretrained/vit-seed.safetensors.gz");
  await until(() => lab.byTestId("model-source").textContent(), (text) => /vit-seed/.test(text), {
    what: "the seed model in use",
  });
  // The lab is rebuilt for the 4×4 grid; drawing still reads the digit.
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  await lab.byTestId("shipped-model").selectOption("pretrained/vit-lab.safetensors.gz");
  await until(() => lab.byTestId("model-source").textContent(), (text) => /vit-lab/.test(text), {
    what: "the lab model back",
  });
  await lab.page.close();
});

test("the shipped CNN reads digits in the page and shows what it builds in instead of attention", async () => {
  const lab = new LabPage(await app.browser.newPage());
  const errors = [];
  lab.page.on("pageerror", (error) => errors.push(error.message));
  await lab.open(`${app.server.url}?backend=cpu`);
  await lab.byTestId("shipped-model").selectOption("pretrained/cnn-teacher.safetensors.gz");
  await lab.place("experiments");
  await lab.byTestId("cnn-view").waitFor({ timeout: 60_000 });
  assert.match(await lab.byTestId("model-source").textContent(), /cnn-teacher/);
  await lab.place("draw");
  await expectReading(lab, [ONE], "1");
  await lab.clear();
  await expectReading(lab, [ZERO], "0");
  // No attention to show: the CNN's receptive fields (3, 8, 18 px) and its 32 filters instead.
  assert.equal(await lab.byTestId("attention-map").count(), 0);
  await lab.place("experiments");
  const fields = await Promise.all([1, 2, 3].map((l) => lab.byTestId(`receptive-field-${l}`).getAttribute("data-value")));
  assert.deepEqual(fields, ["3", "8", "18"]);
  assert.equal(await lab.byTestId("cnn-view").locator("canvas").count(), 32);
  // The filters as one figure: 32 maps of 3×3 numbers, eight to a row of the picture.
  const [header, ...filters] = await lab.savedCsv("cnn-filters-csv");
  assert.deepEqual(header, ["map", "row", "column", "value"]);
  assert.deepEqual([...new Set(filters.map((row) => row[0]))], [...Array(32).keys()].map((i) => `filter ${i + 1}`));
  assert.equal(filters.length, 32 * 9);
  const picture = await lab.savedPicture("cnn-filters-png");
  assert.ok(picture.png && picture.width === 24 + 8 * 96 + 7 * 10, `${picture.width} px wide`);
  // Back to a ViT: its attention returns.
  await lab.byTestId("shipped-model").selectOption("pretrained/vit-lab.safetensors.gz");
  await lab.byTestId("distance-chart").waitFor({ timeout: 60_000 });
  assert.deepEqual(errors, []);
  await lab.page.close();
});

test("the ViT-against-CNN card charts accuracy against training-set size, with its table", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  await lab.place("experiments");
  const chart = lab.byTestId("data-scaling-chart");
  await chart.scrollIntoViewIfNeeded();
  // Two models at four sizes.
  assert.equal(Number(await chart.getAttribute("data-points")), 8);
  const table = await lab.byTestId("data-scaling-table").textContent();
  for (const size of ["1000", "5000", "15000", "60000"]) assert.match(table, new RegExp(size));
  assert.match(await lab.byTestId("data-scaling-verdict").textContent(), /ViT|CNN/);
  // The CNN's receptive fields, and the lab ViT's distance per layer once measured (3 + 6).
  await until(() => lab.byTestId("receptive-field-chart").getAttribute("data-points"), (n) => Number(n) === 9, {
    what: "both series of the receptive-field chart",
  });
  await lab.page.close();
});

// The GPU runs in a worker of its own: whatever it does, the page carries on on the CPU.
test("a GPU device lost while drawing: the page says so and goes on on the CPU", async () => {
  const context = await app.browser.newContext();
  await prependToWorkers(context, GPU_FAULTS);
  const lab = new LabPage(await context.newPage());
  const errors = [];
  lab.page.on("pageerror", (error) => errors.push(error.message));
  await lab.open(`${app.server.url}?backend=webgpu`);
  assert.match(await lab.backend(), /WebGPU/);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  const pad = lab.byTestId("draw-canvas");
  const padBefore = await pad.boundingBox();

  await gpuWorker(lab.page).evaluate(() => globalThis.__gpuDevices.forEach((device) => device.destroy()));
  await lab.clear();
  await lab.stroke(ZERO);
  await until(() => lab.backend(), (backend) => /CPU/.test(backend), { what: "the CPU taking over" });
  const note = await lab.byTestId("backend-note").textContent();
  assert.match(note, /^Switched to the CPU: the GPU failed/);
  assert.ok(note.length < 250 && !/Caused by|Backtrace/.test(note), `a short note: ${note}`);
  assert.equal(await lab.settledPrediction(), "0");
  assert.deepEqual(await pad.boundingBox(), padBefore, "the note moved the pad under the pen");
  // The test batch for attention distance, if the loss caught it, was measured again on the CPU.
  assert.equal(await lab.byTestId("error").count(), 0);
  await lab.clear();
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  assert.equal(gpuWorker(lab.page), undefined, "the failed GPU worker is ended");
  assert.deepEqual(errors, []);
  await context.close();
});

test("shaders the GPU rejects at start-up: the page starts on the CPU and says why, even when the GPU's error comes late", async () => {
  const context = await app.browser.newContext();
  // The rejection reaches CubeCL's handler 5 s late: only the warm-up's own error scope can
  // tell the page before it calls WebGPU good.
  await prependToWorkers(context, "globalThis.__rejectShaders = true; globalThis.__lateErrorsMs = 5000;", GPU_FAULTS);
  const lab = new LabPage(await context.newPage());
  const errors = [];
  lab.page.on("pageerror", (error) => errors.push(error.message));
  await lab.open(`${app.server.url}?backend=webgpu`);
  const note = lab.byTestId("backend-note");
  assert.match(await lab.backend(), /CPU/);
  assert.match(await note.textContent(), /^On the CPU: WebGPU failed \(.*rejected/);
  // Past the late error: still the start-up's note, never a switch after the fact.
  await lab.page.waitForTimeout(6_000);
  assert.match(await lab.backend(), /CPU/);
  assert.doesNotMatch(await note.textContent(), /Switched/);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  assert.deepEqual(errors, []);
  await context.close();
});

test("without ?backend= the page starts on the CPU at once, times WebGPU, and keeps the faster", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(app.server.url);
  assert.match(await lab.backend(), /CPU/, "ready on the CPU before WebGPU is tried");
  const timings = await until(() => lab.byTestId("backend-timings").textContent().catch(() => ""), (text) => /→/.test(text), {
    timeout: 300_000,
    what: "both backends timed",
  });
  const [, gpu, cpu] = timings.match(/WebGPU ([\d.]+) ms, CPU ([\d.]+) ms/).map(Number);
  const faster = gpu < cpu ? /WebGPU/ : /CPU/;
  assert.match(await lab.backend(), faster, timings);
  assert.match(timings, faster);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  await lab.page.close();
});
