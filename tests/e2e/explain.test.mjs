// End-to-end: beyond rollout — the gradient relevance (Chefer et al.) and the logit lens,
// computed in a worker of their own on the backend the page draws on, and their CSVs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LabPage, ONE, VIT, servedApp, until } from "./support.mjs";

const app = servedApp();

/** The card's two maps as the CSV it offers: rollout's values, and relevance's with its label. */
async function explanationCsv(lab) {
  const [header, ...rows] = await lab.savedCsv("explanation-maps-csv");
  assert.deepEqual(header, ["map", "row", "column", "value"]);
  const relevance = rows.filter(([map]) => map !== "attention rollout");
  return {
    rollout: rows.filter(([map]) => map === "attention rollout").map((row) => Number(row[3])),
    label: [...new Set(relevance.map(([map]) => map))].join(" and "),
    values: relevance.map((row) => Number(row[3])),
  };
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
  await lab.place("experiments");
  await explained(lab, timeout);
  assert.equal(await lab.byTestId("relevance-caption").textContent(), "gradient relevance for 1");
  // The lens ends where the model does: the last block reads the prediction.
  const lens = await lab.byTestId("lens-class").allTextContents();
  assert.ok(lens.length >= 1 && lens.every((c) => /^\d$/.test(c)), `lens ${lens}`);
  assert.equal(lens.at(-1), "1");
  const predicted = await explanationCsv(lab);
  assert.equal(predicted.label, "relevance for class 1");
  assert.equal(predicted.values.length, 49, "one value per patch of the 7×7 grid");
  assert.equal(predicted.rollout.length, 49, "rollout beside it");
  assert.ok(predicted.values.every((v) => Number.isFinite(v) && v >= 0), "relevance is a positive part");
  assert.ok(Math.max(...predicted.values) > 0, "something speaks for the 1");

  // Another class: explained again, for that class, with another map.
  await lab.byTestId("relevance-class").selectOption("7");
  await until(() => lab.byTestId("relevance-caption").textContent(), (t) => t === "gradient relevance for 7", { what: "class 7", timeout });
  await explained(lab, timeout);
  const seven = await explanationCsv(lab);
  assert.equal(seven.label, "relevance for class 7");
  assert.deepEqual(seven.rollout, predicted.rollout, "rollout does not depend on the class");
  assert.notDeepEqual(seven.values, predicted.values, "relevance depends on the class");

  const lensRows = await lab.savedCsv("lens-csv");
  assert.equal(lensRows[0].join(","), "block,p0,p1,p2,p3,p4,p5,p6,p7,p8,p9");
  assert.equal(lensRows.length, lens.length + 1);
  for (const row of lensRows.slice(1)) {
    const sum = row.slice(1).map(Number).reduce((a, b) => a + b);
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

/** `vit hide` on the shipped ViT and CNN: both models' readings of `imageHex` (the model's
 * input, 784 bytes in hex) with the patches `hidden` (comma-separated) hidden. */
async function hiddenNatively(imageHex, hidden) {
  const image = join(await mkdtemp(join(tmpdir(), "vitlab-hide-")), "input.bin");
  await writeFile(image, Buffer.from(imageHex, "hex"));
  const repo = (path) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
  const out = execFileSync(VIT, ["hide", "--vit", repo("pretrained/vit-lab.safetensors"), "--cnn", repo("pretrained/cnn-teacher.safetensors"),
    "--image", image, "--hidden", hidden, "--threads", "1", "--json"], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").at(-1));
}

test("patches hidden: a click hides one from both models, read as the native code reads them, and the curves of accuracy against patches hidden come from the worker", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  await lab.place("experiments");
  const readings = lab.byTestId("occlusion-readings");
  await until(() => readings.getAttribute("data-state"), (s) => s === "ready", { what: "both models' readings", timeout: 120_000 });
  const shown = /^(\d+) hidden · ViT reads (\d) \((\d+)%\) · CNN reads (\d) \((\d+)%\) · ViT with their tokens dropped reads (\d) \((\d+)%\)$/;
  const none = (await readings.textContent()).match(shown);
  assert.ok(none, await readings.textContent());
  assert.deepEqual([none[1], none[2], none[4]], ["0", "1", "1"]);
  assert.deepEqual([none[6], none[7]], [none[2], none[3]], "no token dropped: the ViT as it reads the drawing");
  // The 1 runs down the middle column of the 7×7 grid: hide three of its patches.
  const input = lab.byTestId("occlusion-input");
  await input.scrollIntoViewIfNeeded();
  const box = await input.boundingBox();
  // Every state the line goes through from here: a click's new set is "reading…" until its
  // own answer comes, never the set before's answer beside the new count.
  await readings.evaluate((line) => {
    window.__readings = [];
    new MutationObserver(() => window.__readings.push([line.dataset.state, line.textContent]))
      .observe(line, { attributes: true, childList: true, subtree: true, characterData: true });
  });
  for (const row of [2, 3, 4]) {
    await input.click({ position: { x: (3.5 / 7) * box.width, y: ((row + 0.5) / 7) * box.height } });
  }
  const three = (await until(() => readings.textContent(), (t) => t.match(shown)?.[1] === "3", { what: "readings with 3 hidden", timeout: 60_000 })).match(shown);
  console.log(`three patches of the 1 hidden: ${three[0]}`);
  const seen = await lab.page.evaluate(() => window.__readings);
  for (const hidden of [1, 2, 3]) {
    assert.ok(seen.some(([state, text]) => state === "asking" && text === `${hidden} hidden · reading…`), `${hidden} hidden read afresh: ${JSON.stringify(seen)}`);
  }
  // The worker's readings are the native code's for the same image and hidden set.
  const asked = await readings.evaluate((line) => ({ ...line.dataset }));
  assert.equal(asked.hidden.split(",").length, 3);
  const native = await hiddenNatively(asked.image, asked.hidden);
  const inPage = JSON.parse(asked.comparison);
  let largest = 0;
  for (const model of ["vit", "cnn", "vit_dropped"]) {
    const worst = Math.max(...inPage[model].map((p, i) => Math.abs(p - native.comparison[model][i])));
    assert.ok(worst <= 1e-5, `${model}: the page's probabilities ${inPage[model]} against vit hide's ${native.comparison[model]}`);
    largest = Math.max(largest, worst);
  }
  console.log(`patches ${asked.hidden} hidden: the page and vit hide differ by ${largest.toExponential(1)} at most (ViT ${inPage.vit.map((p) => p.toFixed(4))})`);
  await lab.byTestId("occlusion-clear").click();
  await until(() => readings.textContent(), (t) => t.startsWith("0 hidden · ViT reads 1"), { what: "every patch shown again", timeout: 60_000 });

  // Before a first measurement the chart's empty state offers it.
  await lab.byTestId("occlusion-measure").click();
  const chart = lab.byTestId("occlusion-chart");
  await until(async () => Number(await chart.getAttribute("data-points")), (n) => n === 60, { what: "six curves of ten points", timeout: 300_000 });
  const [header, ...rows] = await lab.savedCsv("occlusion-csv");
  assert.equal(header.join(","), "fraction hidden,vit random,vit most relevant first,cnn random,cnn most relevant first,vit tokens dropped random,vit tokens dropped most relevant first");
  const table = rows.map((row) => row.map(Number));
  assert.equal(table.length, 10);
  assert.equal(table[0][1], table[0][2], "nothing hidden, one accuracy per model");
  assert.ok(table[0][1] > 0.9 && table[0][3] > 0.9, `both read the test digits: ${rows[0]}`);
  // A third hidden, most relevant first, costs both models far more than at random.
  assert.ok(table[3][2] + 0.3 < table[3][1] && table[3][4] + 0.2 < table[3][3], `${rows[3]}`);
  // Tokens dropped: none dropped is the ViT as it is; the most relevant third costs more.
  assert.equal(table[0][5], table[0][1]);
  assert.ok(table[3][6] < table[3][5], `${rows[3]}`);
  console.log(`occlusion in the page (200 test digits, CPU), 30 % hidden: ${rows[3]}`);
  // The chart saves as numbers and as a picture drawn in the page's colours (1080 px wide).
  const chartRows = await lab.savedCsv("occlusion-chart-csv");
  assert.deepEqual(chartRows[0], ["series", "% of patches hidden", "value"]);
  assert.equal(chartRows.length, 61);
  assert.match(chartRows[1].join(","), /^ViT; random,0,0\.9\d*$/);
  const colours = await lab.byTestId("occlusion-chart").locator("polyline.series").evaluateAll((lines) => lines.map((l) => getComputedStyle(l).stroke));
  const models = [...new Set(colours)];
  assert.equal(models.length, 3, `the ViT's colour, the CNN's and the ViT's with tokens dropped: ${colours}`);
  const picture = await lab.savedPicture("occlusion-chart-png", [...models, "rgb(0, 0, 0)"]);
  assert.ok(picture.png && picture.name === "vitlab-occlusion-chart.png");
  assert.equal(picture.width, 1080);
  const black = picture.counts.pop();
  assert.ok(picture.counts.every((n) => n > 100), `every curve drawn in its colour: ${picture.counts} pixels`);
  // Unstyled SVG would fill each polyline black: the page's styles came with the picture.
  assert.ok(black < 100, `${black} black pixels`);
  await lab.page.close();
});

test("every map and chart of the lab saves as a PNG and its numbers as a CSV, which agree with the page", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  // Nothing drawn, nothing to save: the drawing's figures wait for one.
  assert.ok(await lab.byTestId("attention-maps-png").isHidden());
  await lab.place("experiments");
  assert.ok(await lab.byTestId("explanation-maps-csv").isHidden());
  await lab.place("draw");
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  await lab.place("experiments");
  await explained(lab, 120_000);
  await lab.place("draw");
  assert.ok(await lab.byTestId("attention-maps-png").isVisible());
  const values = (rows, map) => rows.filter((row) => row[0] === map).map((row) => Number(row[3]));

  // The large map (rollout unless another is picked): picture and numbers.
  const [mapHeader, ...mapRows] = await lab.savedCsv("attention-map-csv");
  assert.deepEqual(mapHeader, ["row", "column", "class token: attention rollout (all layers)"]);
  assert.equal(mapRows.length, 49);
  const large = await lab.savedPicture("attention-map-png");
  assert.ok(large.png && large.name === "vitlab-attention-map.png" && large.width === 280 && large.distinct > 10);

  // Every layer's and head's map and rollout, as one figure; its rollout is the large map's.
  const [sheetHeader, ...sheetRows] = await lab.savedCsv("attention-maps-csv");
  assert.deepEqual(sheetHeader, ["map", "row", "column", "value"]);
  const maps = [...new Set(sheetRows.map((row) => row[0]))];
  const heads = maps.filter((m) => /^layer 1; head \d+$/.test(m)).length;
  const depth = maps.filter((m) => /^layer \d+; mean of heads$/.test(m)).length;
  assert.ok(heads >= 2 && depth >= 2, `${depth} layers of ${heads} heads`);
  assert.equal(maps.length, depth * (heads + 1) + 1);
  assert.equal(sheetRows.length, 49 * maps.length);
  assert.deepEqual(values(sheetRows, "attention rollout (all layers)"), mapRows.map((row) => Number(row[2])));
  const sheet = await lab.savedPicture("attention-maps-png");
  // Tiles of 96 px, 10 apart, 12 px margins: one column per head and one for the mean.
  assert.equal(sheet.width, 24 + 96 * (heads + 1) + 10 * heads);
  assert.ok(sheet.distinct > 50, `a heat map's many colours (${sheet.distinct})`);

  // Fig. 7, in the experiments: each patch's position embedding is most like itself (cosine 1).
  await lab.place("experiments");
  const [, ...similarity] = await lab.savedCsv("position-similarity-csv");
  assert.equal(similarity.length, 49 * 49);
  for (const patch of [0, 24, 48]) {
    const row = Math.floor(patch / 7) + 1;
    const column = (patch % 7) + 1;
    const own = values(similarity, `patch (${row}; ${column})`);
    assert.equal(own.length, 49);
    assert.ok(Math.abs(own[patch] - 1) < 1e-4 && Math.max(...own) === own[patch], `patch ${patch} is most like itself`);
  }
  assert.ok((await lab.savedPicture("position-similarity-png")).png);
  const [, ...filters] = await lab.savedCsv("filters-csv");
  const components = [...new Set(filters.map((row) => row[0]))];
  assert.ok(components.length >= 1 && components.every((c) => /^PC\d+ · \d+%$/.test(c)), `${components}`);
  assert.equal(filters.length, components.length * 16, "one value per pixel of a 4×4 patch");

  // Mean attention distance: one per layer and head for the drawing, in pixels, drawn in the
  // chart's colour for the drawing.
  const [distanceHeader, ...distances] = await lab.savedCsv("distance-chart-csv");
  assert.deepEqual(distanceHeader, ["series", "layer", "head", "distance_px"]);
  const drawing = distances.filter((row) => row[0] === "this drawing");
  assert.equal(drawing.length, depth * heads);
  assert.ok(drawing.every((row) => Number(row[3]) >= 0 && Number(row[3]) <= 40), "distances within the image");
  const dot = await lab.byTestId("distance-chart").locator('circle:not([fill="none"])').first().evaluate((c) => getComputedStyle(c).fill);
  const distanceChart = await lab.savedPicture("distance-chart-png", [dot]);
  assert.ok(distanceChart.png && distanceChart.counts[0] > 100, `the drawing's dots (${distanceChart.counts})`);

  // Beyond rollout: both maps as one figure.
  const explanation = await lab.savedPicture("explanation-maps-png");
  // Two tiles, or wider where the title needs it.
  assert.ok(explanation.png && explanation.width >= 24 + 2 * 96 + 10 && explanation.distinct > 20);

  // A browser that cannot make the picture: no file, and the page says so beside the buttons.
  await lab.page.evaluate(() => {
    HTMLCanvasElement.prototype.toDataURL = () => {
      throw new DOMException("refused", "SecurityError");
    };
  });
  const filtersPng = lab.byTestId("filters-png");
  await filtersPng.click();
  // Beside the button clicked, and only there.
  const status = filtersPng.locator("xpath=following-sibling::*[1]");
  assert.equal(await status.getAttribute("role"), "status");
  await until(() => status.textContent(), (t) => t.startsWith("not saved"), { what: "a message for the failed save", timeout: 5_000 });
  assert.equal(await lab.byTestId("filters-csv").locator("xpath=following-sibling::*[1]").textContent(), "", "the CSV beside it was not asked for");
  await lab.page.close();
});
