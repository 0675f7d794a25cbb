// End-to-end: beyond rollout — the gradient relevance (Chefer et al.) and the logit lens,
// computed in a worker of their own on the backend the page draws on, and their CSVs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { LabPage, ONE, servedApp, until } from "./support.mjs";

const app = servedApp();

/** The relevance CSV the page offers now, as numbers by patch, with its class. */
async function relevanceCsv(lab) {
  const [download] = await Promise.all([lab.page.waitForEvent("download"), lab.byTestId("relevance-csv").click()]);
  const [header, ...rows] = (await readFile(await download.path(), "utf8")).trim().split("\n");
  return { header, values: rows.map((row) => Number(row.split(",")[2])) };
}

async function explained(lab, timeout) {
  const card = lab.byTestId("explanations");
  await until(() => card.getAttribute("data-state"), (s) => s === "ready", { what: "an explanation", timeout });
}

async function explainOne(backend, timeout) {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=${backend}`);
  assert.match(await lab.backend(), backend === "cpu" ? /CPU/ : /WebGPU/);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  await explained(lab, timeout);
  assert.equal(await lab.byTestId("relevance-caption").textContent(), "gradient relevance for 1");
  // The lens ends where the model does: the last block reads the prediction.
  const lens = await lab.byTestId("lens-class").allTextContents();
  assert.ok(lens.length >= 1 && lens.every((c) => /^\d$/.test(c)), `lens ${lens}`);
  assert.equal(lens.at(-1), "1");
  const predicted = await relevanceCsv(lab);
  assert.equal(predicted.header, "row,column,relevance for class 1");
  assert.equal(predicted.values.length, 49, "one value per patch of the 7×7 grid");
  assert.ok(predicted.values.every((v) => Number.isFinite(v) && v >= 0), "relevance is a positive part");
  assert.ok(Math.max(...predicted.values) > 0, "something speaks for the 1");

  // Another class: explained again, for that class, with another map.
  await lab.byTestId("relevance-class").selectOption("7");
  await until(() => lab.byTestId("relevance-caption").textContent(), (t) => t === "gradient relevance for 7", { what: "class 7", timeout });
  await explained(lab, timeout);
  const seven = await relevanceCsv(lab);
  assert.equal(seven.header, "row,column,relevance for class 7");
  assert.notDeepEqual(seven.values, predicted.values, "relevance depends on the class");

  const [lensFile] = await Promise.all([lab.page.waitForEvent("download"), lab.byTestId("lens-csv").click()]);
  const lensRows = (await readFile(await lensFile.path(), "utf8")).trim().split("\n");
  assert.equal(lensRows[0], "block,p0,p1,p2,p3,p4,p5,p6,p7,p8,p9");
  assert.equal(lensRows.length, lens.length + 1);
  for (const row of lensRows.slice(1)) {
    const sum = row.split(",").slice(1).map(Number).reduce((a, b) => a + b);
    assert.ok(Math.abs(sum - 1) < 1e-3, `probabilities sum to 1: ${row}`);
  }
  await lab.page.close();
  return predicted.values;
}

test("beyond rollout: gradient relevance for the predicted class and another, and the logit lens, on the CPU and on WebGPU, which agree", async () => {
  const cpu = await explainOne("cpu", 120_000);
  const gpu = await explainOne("webgpu", 300_000);
  const scale = Math.max(...cpu);
  const worst = Math.max(...cpu.map((v, i) => Math.abs(v - gpu[i])));
  console.log(`relevance, CPU against WebGPU: largest difference ${worst.toExponential(2)} of ${scale.toExponential(2)}`);
  assert.ok(worst <= 1e-3 * scale, `CPU and WebGPU relevance agree (${worst} of ${scale})`);
});

test("patches hidden: a click hides one from both models, and the curves of accuracy against patches hidden come from the worker", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  const readings = lab.byTestId("occlusion-readings");
  await until(() => readings.getAttribute("data-state"), (s) => s === "ready", { what: "both models' readings", timeout: 120_000 });
  assert.match(await readings.textContent(), /^0 hidden · ViT reads 1 \(\d+%\) · CNN reads 1 \(\d+%\)$/);
  // The 1 runs down the middle column of the 7×7 grid: hide three of its patches.
  const input = lab.byTestId("occlusion-input");
  await input.scrollIntoViewIfNeeded();
  const box = await input.boundingBox();
  for (const row of [2, 3, 4]) {
    await input.click({ position: { x: (3.5 / 7) * box.width, y: ((row + 0.5) / 7) * box.height } });
  }
  await until(() => readings.textContent(), (t) => /^3 hidden · ViT reads \d \(\d+%\) · CNN reads \d \(\d+%\)$/.test(t), { what: "readings with 3 hidden", timeout: 60_000 });
  await lab.byTestId("occlusion-clear").click();
  await until(() => readings.textContent(), (t) => t.startsWith("0 hidden · ViT reads 1"), { what: "every patch shown again", timeout: 60_000 });

  await lab.byTestId("occlusion-measure").click();
  const chart = lab.byTestId("occlusion-chart");
  await until(async () => Number(await chart.getAttribute("data-points")), (n) => n === 40, { what: "four curves of ten points", timeout: 300_000 });
  const [download] = await Promise.all([lab.page.waitForEvent("download"), lab.byTestId("occlusion-csv").click()]);
  const [header, ...rows] = (await readFile(await download.path(), "utf8")).trim().split("\n");
  assert.equal(header, "fraction hidden,vit random,vit most relevant first,cnn random,cnn most relevant first");
  const table = rows.map((row) => row.split(",").map(Number));
  assert.equal(table.length, 10);
  assert.equal(table[0][1], table[0][2], "nothing hidden, one accuracy per model");
  assert.ok(table[0][1] > 0.9 && table[0][3] > 0.9, `both read the test digits: ${rows[0]}`);
  // A third hidden, most relevant first, costs both models far more than at random.
  assert.ok(table[3][2] + 0.3 < table[3][1] && table[3][4] + 0.2 < table[3][3], `${rows[3]}`);
  console.log(`occlusion in the page (200 test digits, CPU), 30 % hidden: ${rows[3]}`);
  // Every chart offers its numbers; the large attention map its picture and numbers.
  const [chartCsv] = await Promise.all([lab.page.waitForEvent("download"), lab.byTestId("occlusion-chart-csv").click()]);
  const chartRows = (await readFile(await chartCsv.path(), "utf8")).trim().split("\n");
  assert.equal(chartRows[0], "series,% of patches hidden,value");
  assert.equal(chartRows.length, 41);
  assert.match(chartRows[1], /^ViT; random,0,0\.9\d*$/);
  const [mapCsv] = await Promise.all([lab.page.waitForEvent("download"), lab.byTestId("attention-map-csv").click()]);
  const mapRows = (await readFile(await mapCsv.path(), "utf8")).trim().split("\n");
  assert.equal(mapRows[0], "row,column,class token: attention rollout (all layers)");
  assert.equal(mapRows.length, 50);
  const [png] = await Promise.all([lab.page.waitForEvent("download"), lab.byTestId("attention-map-png").click()]);
  const pngBytes = await readFile(await png.path());
  assert.equal(png.suggestedFilename(), "vitlab-attention-map.png");
  assert.deepEqual([...pngBytes.subarray(1, 4)], [0x50, 0x4e, 0x47], "a PNG file");
  await lab.page.close();
});
