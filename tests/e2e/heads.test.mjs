// End-to-end: heads switched off. A click in the per-head grid switches a head off (its output
// replaced by its mean over the first test chunk, or by zero) and the prediction follows, as
// the native code reads the same image with the same heads off (`vit classify`); a link keeps
// the heads; "which heads matter", measured in a worker of its own, is `vit ablate`'s table.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LabPage, ONE, VIT, servedApp, until } from "./support.mjs";

const app = servedApp();
const repo = (path) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const WEIGHTS = repo("pretrained/vit-lab.safetensors");

/** `vit classify` of `imageHex` (the model's input, 784 bytes in hex) with the heads `off`
 * (a link's `off`) switched off by `replacement`. */
async function classifiedNatively(imageHex, off, replacement) {
  const image = join(await mkdtemp(join(tmpdir(), "vitlab-heads-")), "input.bin");
  await writeFile(image, Buffer.from(imageHex, "hex"));
  const out = execFileSync(VIT, ["classify", "--weights", WEIGHTS, "--image", image, "--off", off,
    "--replacement", replacement, "--threads", "1", "--json"], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").at(-1));
}

const largestDifference = (a, b) => Math.max(...a.map((v, i) => Math.abs(v - b[i])));

/** The prediction once it has been read with the heads `off` switched off. */
async function readWith(lab, off) {
  const card = lab.byTestId("prediction-card");
  await until(() => card.getAttribute("data-heads-off"), (o) => o === off, { what: `a reading with heads "${off}" off`, timeout: 120_000 });
  await lab.settledPrediction();
  return lab.probabilities();
}

test("a click switches a head off: the prediction follows exactly as the native code reads it, by mean or by zero, a link keeps the heads, and they come back", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  const allOn = await lab.probabilities();
  // The model's input as the lab gives it to the workers (the occlusion card, in the
  // experiments, shows it too).
  await lab.place("experiments");
  const readings = lab.byTestId("occlusion-readings");
  await until(() => readings.getAttribute("data-state"), (s) => s === "ready", { what: "the occlusion card's reading", timeout: 120_000 });
  const image = await readings.getAttribute("data-image");
  assert.equal(image.length, 2 * 784);

  // A click on a head's map shows it large until the grid is told that a click switches off.
  await lab.place("draw");
  await lab.page.locator('[data-head="3.8"]').click();
  assert.equal(await lab.byTestId("heads-off").getAttribute("data-off"), "");
  await lab.openHeadSwitches();
  await lab.byTestId("switch-heads").click();
  await lab.page.locator('[data-head="3.8"]').click();
  await lab.page.locator('[data-head="5.7"]').click();
  assert.equal(await lab.page.locator('[data-head="3.8"]').getAttribute("aria-pressed"), "true");
  const byMean = await readWith(lab, "3.8,5.7");
  assert.match(await lab.byTestId("heads-off").textContent(), /layer 3 head 8, layer 5 head 7 \(each replaced by its mean output\)/);
  assert.match(await lab.byTestId("prediction-heads-off").textContent(), /^With heads switched off: layer 3 head 8, layer 5 head 7/);
  const nativeMean = await classifiedNatively(image, "3.8,5.7", "mean");
  const nativeOn = await classifiedNatively(image, "", "mean");
  assert.ok(largestDifference(allOn, nativeOn.probabilities) <= 1e-5, `every head on: ${allOn} against ${nativeOn.probabilities}`);
  const meanGap = largestDifference(byMean, nativeMean.probabilities);
  assert.ok(meanGap <= 1e-5, `by their means: the page's ${byMean} against vit classify's ${nativeMean.probabilities}`);
  assert.ok(largestDifference(nativeMean.probabilities, nativeOn.probabilities) > 1e-4, "the heads' absence moves the probabilities");

  await lab.byTestId("heads-off-by").selectOption("zero");
  const byZero = await readWith(lab, "3.8,5.7");
  const nativeZero = await classifiedNatively(image, "3.8,5.7", "zero");
  const zeroGap = largestDifference(byZero, nativeZero.probabilities);
  assert.ok(zeroGap <= 1e-5, `by zero: the page's ${byZero} against vit classify's ${nativeZero.probabilities}`);
  assert.ok(largestDifference(nativeZero.probabilities, nativeMean.probabilities) > 1e-4, "zero is not the mean");
  console.log(`layer 3 head 8 and layer 5 head 7 off: the page and vit classify differ by ${meanGap.toExponential(1)} (mean) and ${zeroGap.toExponential(1)} (zero); P(1) ${allOn[1].toFixed(4)} on, ${byMean[1].toFixed(4)} by mean, ${byZero[1].toFixed(4)} by zero`);

  // The link keeps the heads and how they are replaced; opened, it reads the drawing so.
  await lab.place("train");
  const link = lab.byTestId("share-link");
  await link.scrollIntoViewIfNeeded();
  const href = await until(() => link.getAttribute("href"), (h) => h.includes("off="), { what: "the link with heads off" });
  const query = new URLSearchParams(href.slice(1));
  assert.equal(query.get("off"), "3.8,5.7");
  assert.equal(query.get("off-by"), "zero");
  const shared = new LabPage(await app.browser.newPage());
  await shared.open(`${app.server.url}?backend=cpu&off=3.8,5.7&off-by=zero`);
  assert.equal(await shared.byTestId("heads-off").getAttribute("data-off"), "3.8,5.7");
  await shared.stroke(ONE);
  const sharedZero = await readWith(shared, "3.8,5.7");
  assert.ok(largestDifference(sharedZero, byZero) <= 1e-6, "the link's page reads the same drawing the same way");
  await shared.page.close();

  // A click brings a head back; the button brings them all back, to the reading with every head.
  // (The grid, built again with its place, shows a head on a click until told otherwise.)
  await lab.place("draw");
  await lab.openHeadSwitches();
  await lab.byTestId("switch-heads").click();
  await lab.page.locator('[data-head="5.7"]').scrollIntoViewIfNeeded();
  await lab.page.locator('[data-head="5.7"]').click();
  await readWith(lab, "3.8");
  await lab.byTestId("heads-back").click();
  const back = await readWith(lab, "");
  assert.ok(largestDifference(back, allOn) <= 1e-6, "every head back on reads as before");
  assert.equal(await lab.byTestId("prediction-heads-off").count(), 0);
  await lab.page.close();
});

test("which heads matter: the table measured in the card's own worker is vit ablate's on the same test digits", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  await lab.place("experiments");
  const card = lab.byTestId("heads-matter-card");
  await card.scrollIntoViewIfNeeded();
  await lab.byTestId("heads-matter-images").selectOption("100");
  const started = Date.now();
  await lab.byTestId("heads-matter-measure").click();
  const state = lab.byTestId("heads-matter");
  await until(() => state.getAttribute("data-state"), (s) => s === "ready" || s === "failed", { what: "the table", timeout: 600_000 });
  assert.equal(await state.getAttribute("data-state"), "ready");
  const took = (Date.now() - started) / 1000;
  const { bytes } = await lab.saved("heads-matter-csv");
  const inPage = bytes.toString("utf8").trim();
  const csv = join(await mkdtemp(join(tmpdir(), "vitlab-ablate-")), "ablate.csv");
  execFileSync(VIT, ["ablate", "--weights", WEIGHTS, "--images", "100", "--mean-images", "2500", "--csv", csv, "--threads", "1"], { stdio: ["ignore", "ignore", "inherit"] });
  const native = (await readFile(csv, "utf8")).trim();
  assert.equal(inPage.split("\n").length, 1 + 6 * 8, "a row per head of the 6 × 8");
  assert.equal(inPage, native, "the page's CSV is vit ablate's");
  assert.match(await lab.byTestId("heads-matter-caption").textContent(), /^100 test digits, \d+\.\d% with every head/);
  const picture = await lab.savedPicture("heads-matter-png");
  assert.ok(picture.png && picture.width > 200 && picture.distinct > 20, `a picture of the table: ${JSON.stringify(picture)}`);
  // A cell switches its head off in the lab.
  await lab.page.locator(".heat-table .cell").nth(2 * 8 + 7).click();
  await lab.place("draw");
  assert.equal(await lab.byTestId("heads-off").getAttribute("data-off"), "3.8");
  console.log(`which heads matter on 100 test digits: measured in the page in ${took.toFixed(1)} s, CSV equal to vit ablate's`);
  await lab.page.close();
});
