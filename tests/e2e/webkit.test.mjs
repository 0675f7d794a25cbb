// End-to-end in WebKit, Safari's engine (WebKitGTK's MiniBrowser through WebKitWebDriver, under
// Xvfb): what it offers the page, digits drawn with WebDriver's pointer input, one explaining
// worker however the drawings come, the exports, a run trained, paused, resumed, stopped and
// resumed after a reload, and the page offline after one visit, with no error in the page.
// This WebKit build has WebGPU off: everything runs on the CPU.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DIST, ONE, ZERO, checkpoints, expectReading, serve, until } from "./support.mjs";
import { assertCpuEngineFeatures, browserFeatures, pauseAndResume, placesAndStory, staleTabResumes } from "./engine-lab.mjs";
import { theExampleOnArrival } from "./arrival.mjs";
import { RECORDER, WebKitLab, WebKitWindowLab, launchWebKit, servedAppInWebKit } from "./webkit-support.mjs";

const app = servedAppInWebKit();

/** A "7": a bar and a slanted stem, in pad fractions. */
const SEVEN = [[0.25, 0.2], [0.75, 0.2], [0.42, 0.85]];

async function assertNoErrors(lab) {
  assert.deepEqual((await lab.recorded()).errors, [], "no uncaught errors, rejections or console errors");
}

test("what WebKit offers the page: no WebGPU in this build; workers in workers, Cache Storage, IndexedDB, Web Locks, service workers, pointer events", async () => {
  const lab = await WebKitLab.open(app.browser, `${app.server.url}?backend=cpu`);
  const features = await browserFeatures(lab);
  console.log(`WebKitGTK ${await app.browser.version()}: ${JSON.stringify(features)}`);
  assertCpuEngineFeatures(features, "WebKit");
  await assertNoErrors(lab);
  await lab.close();
});

test("in WebKit as a visitor opens it, on a phone's width and at 1280 px: on the CPU, says why, the pad draws a 3 by itself, and a drawn 1, 0 and 7 read right", async () => {
  // A first look on a phone's width, then the rest at the window's own 1280 px. Asked for
  // 390 px, WebKitGTK's window goes no narrower than its own minimum (447 px here): the page
  // lays it out as a phone's all the same (below 40rem, one column).
  const window = app.browser.driver.manage().window();
  const wide = await window.getRect();
  await window.setRect({ width: 390, height: 844 });
  try {
    const narrow = await WebKitLab.open(app.browser, app.server.url);
    const width = await narrow.evaluate(() => innerWidth);
    assert.ok(width < 640, `a phone's width, not ${width} px`);
    console.log(`# a first look in WebKit at ${width} px, ms after the model was ready: ${JSON.stringify(await theExampleOnArrival(narrow))}`);
    await narrow.close();
  } finally {
    await window.setRect({ width: wide.width, height: wide.height });
  }
  const lab = await WebKitLab.open(app.browser, app.server.url);
  assert.equal(await lab.evaluate(() => innerWidth), 1280);
  console.log(`# a first look in WebKit at 1280 px, ms after the model was ready: ${JSON.stringify(await theExampleOnArrival(lab))}`);
  await lab.clear();
  assert.match(await lab.backend(), /CPU/);
  const note = await until(() => lab.text("backend-note"), (n) => n !== null, { what: "a note beside the backend", timeout: 60_000 });
  assert.equal(note, "On the CPU: this browser has no WebGPU");
  assert.equal(await lab.count("backend-timings"), 0, "no WebGPU to time");

  for (const [strokes, digit] of [[[ONE], "1"], [[ZERO], "0"], [[SEVEN], "7"]]) {
    await expectReading(lab, strokes, digit);
    await lab.clear();
  }
  assert.equal(await lab.count("attention-map"), 1);
  assert.equal(await lab.count("error"), 0);
  await assertNoErrors(lab);
  await lab.close();
});

test("in WebKit one explaining worker serves every drawing, however quickly they come", async () => {
  const lab = await WebKitLab.open(app.browser, `${app.server.url}?backend=cpu`);
  // Drawings that come faster than the worker starts (it loads the worker's wasm): each rests
  // long enough to ask for an explanation, none long enough for its answer.
  for (let i = 0; i < 6; i++) {
    await lab.stroke(i % 2 ? ZERO : ONE);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await lab.clear();
  }
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  await lab.place("experiments");
  await until(() => lab.attribute("explanations", "data-state"), (s) => s === "ready", { what: "an explanation", timeout: 300_000 });
  assert.equal(await lab.text("relevance-caption"), "gradient relevance for 1");
  const roles = await lab.workerRoles();
  console.log(`workers the page started: ${roles.join(", ")}`);
  assert.equal(roles.filter((role) => role === "explain").length, 1, `one explaining worker: ${roles}`);
  await assertNoErrors(lab);
  await lab.close();
});

test("in WebKit the maps and charts save as PNG (the chart through its SVG) and CSV", async () => {
  const lab = await WebKitLab.open(app.browser, `${app.server.url}?backend=cpu`);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  const map = await lab.saved("attention-map-csv");
  const [header, ...rows] = map.bytes.toString("utf8").trim().split("\n");
  assert.equal(map.name, "vitlab-attention-map.csv");
  assert.equal(header, "row,column,class token: attention rollout (all layers)");
  assert.equal(rows.length, 49);

  const picture = async (id) => {
    const { name, bytes } = await lab.saved(id);
    assert.equal(bytes.subarray(1, 4).toString("latin1"), "PNG", `${name} is a PNG`);
    return { name, ...(await lab.evaluate(pngStats, bytes.toString("base64"))) };
  };
  const large = await picture("attention-map-png");
  assert.ok(large.width === 280 && large.distinct > 10, `the large map: ${JSON.stringify(large)}`);
  const failedSaves = () => lab.evaluate(() => [...document.querySelectorAll('[role="status"]')].map((s) => s.textContent).filter((t) => t.startsWith("not saved")));
  assert.deepEqual(await failedSaves(), [], "no save failed");
  // The distance chart, in the experiments, is SVG: drawn into a canvas once its image has
  // loaded (the load event, which Safari needs where `decode()` refuses SVG).
  await lab.place("experiments");
  await lab.waitFor("distance-chart-png");
  const chart = await picture("distance-chart-png");
  assert.ok(chart.width > 200 && chart.distinct > 4, `the distance chart: ${JSON.stringify(chart)}`);
  const distances = (await lab.saved("distance-chart-csv")).bytes.toString("utf8").trim().split("\n");
  assert.equal(distances[0], "series,layer,head,distance_px");
  assert.ok(distances.some((row) => row.startsWith("this drawing,")), "the drawing's distances");
  assert.deepEqual(await failedSaves(), [], "no save failed");
  await assertNoErrors(lab);
  await lab.close();
});

/** Decodes a PNG given as base64 in the page: its size and how many colours it has. */
function pngStats(base64) {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement("canvas");
      [canvas.width, canvas.height] = [image.width, image.height];
      const context = canvas.getContext("2d");
      context.drawImage(image, 0, 0);
      const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
      const distinct = new Set();
      for (let i = 0; i < pixels.length; i += 4) distinct.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
      resolve({ width: image.width, height: image.height, distinct: distinct.size });
    };
    image.onerror = () => reject(new Error("the PNG does not decode"));
    image.src = `data:image/png;base64,${base64}`;
  });
}

test("in WebKit a short run trains in two CPU workers, its loss falls, it pauses, resumes, stops, and a paused run resumes after a reload", async () => {
  // No ?backend=: the training worker tries WebGPU, falls back to the CPU and says so. A small
  // ViT (2 layers of 32) so that the loss falls within seconds, and a run that cannot end while
  // the test runs: this WebKit says 4 cores or more on 2, so four CPU workers share them with the
  // page, which then hears of the steps (and sends a Pause or a Stop) seconds late, while the
  // run takes hundreds of steps a second; two epochs (1,876 steps) ended before the Stop.
  const lab = await WebKitLab.open(app.browser, `${app.server.url}?preset=seed&depth=2&dim=32&heads=4&mlp=64&batch=64&epochs=200&seed=1#train`);
  await lab.click("train-button");
  const step = () => lab.number("training-step");
  await until(step, (s) => s >= 10, { what: "step 10", timeout: 300_000 });
  const early = await lab.number("train-loss");
  await until(step, (s) => s >= 200, { timeout: 300_000, what: "step 200" });
  const later = await lab.number("train-loss");
  assert.ok(later < 0.8 * early, `the smoothed loss falls: ${early} → ${later}`);
  const status = await lab.textOf(".run-state");
  assert.match(status, /on CPU .*— this browser has no WebGPU/, status);
  await until(() => lab.count("cpu-workers"), (n) => n === 1, { what: "the helper worker training too" });
  assert.ok((await lab.workerRoles()).includes("train"));
  // This WebKit has no relaxed SIMD: the plain worker, never the one with fused multiply-adds.
  const scripts = await lab.workerScripts();
  assert.ok(scripts.includes("worker_loader.js") && !scripts.includes("worker_fma_loader.js"), scripts.join(", "));

  await pauseAndResume(lab);
  await assertNoErrors(lab);

  // Paused again and reloaded: the run is offered where it was kept, and goes on from there.
  await lab.click("pause-button");
  await until(() => lab.text("run-state"), (s) => s === "paused", { what: "paused" });
  const newestStep = async () => Math.max(...Object.values(await checkpoints(lab)).map((c) => c.step));
  const kept = await until(newestStep, (s) => s > 0, { what: "the pause's checkpoint" });
  await lab.reload();
  await lab.waitFor("model-ready", 120_000);
  await lab.waitFor("resume-saved-button", 30_000);
  assert.match(await lab.text("resume-saved-button"), new RegExp(`step ${kept} of 187600\\)`));
  await lab.click("resume-saved-button");
  await until(step, (s) => s > kept, { what: "steps after the resume", timeout: 300_000 });
  await lab.click("stop-button");
  await until(() => lab.text("run-state"), (s) => s === "stopped", { what: "stopped" });
  assert.equal(await lab.count("training-error"), 0);
  await lab.place("runs");
  await until(() => lab.count("run-row"), (n) => n >= 1, { what: "a row for the run" });
  assert.equal(await lab.count("runs-error"), 0);
  await assertNoErrors(lab);
  await lab.close();
});

test("in WebKit, after one visit, with the network gone, the page reloads and reads digits", async () => {
  const server = await serve(DIST, { headScript: RECORDER });
  const browser = await launchWebKit();
  try {
    const lab = await WebKitLab.open(browser, `${server.url}?backend=cpu`);
    await until(() => lab.attribute("offline", "data-state"), (s) => s === "ready", { what: "kept for offline use", timeout: 300_000 });
    assert.match(await lab.text("offline"), /Works offline/);
    server.cut();
    await assert.rejects(fetch(server.url), "the server is gone");
    await lab.reload();
    await lab.waitFor("model-ready", 120_000);
    await lab.stroke(ONE);
    assert.equal(await lab.settledPrediction(), "1");
    await assertNoErrors(lab);
  } finally {
    await browser.close();
    server.close();
  }
});

test("in WebKit the places open from the bar, Back returns, and the story tells a drawn 1, with no error in the page", async () => {
  const lab = await WebKitLab.open(app.browser, `${app.server.url}?backend=cpu`);
  await placesAndStory(lab, () => lab.driver.navigate().back());
  await assertNoErrors(lab);
  await lab.close();
});

test("in WebKit a stale tab resumes from the other tab's progress, never its own copy", async () => {
  const url = `${app.server.url}?backend=cpu&cpu-workers=1&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32&epochs=50#train`;
  await WebKitLab.open(app.browser, url);
  const a = await WebKitWindowLab.current(app.browser);
  const b = await WebKitWindowLab.openWindow(app.browser, url);
  await staleTabResumes(a, b);
  await a.click("reset-button");
  await assertNoErrors(a);
  await assertNoErrors(b);
  await b.closeWindow(a);
  await a.close();
});
