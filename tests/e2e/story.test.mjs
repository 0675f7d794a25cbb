// End-to-end: "How the ViT reads your digit". The story's numbers are the model's: for the
// input the page gave the model, the patch count, the token of the patch shown and every row
// of the logit lens are what `vit classify --story` computes natively (to 1e-4), for both
// shipped ViTs; it follows the pen; a CNN's story says what a CNN has instead; the arrow keys
// step through it and a link opens a step.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LabPage, ONE, VIT, ZERO, servedApp, until } from "./support.mjs";

const app = servedApp();
const repo = (path) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

/** `vit classify --story` of `imageHex` (784 bytes in hex) with `weights`. */
async function toldNatively(imageHex, weights) {
  const image = join(await mkdtemp(join(tmpdir(), "vitlab-story-")), "input.bin");
  await writeFile(image, Buffer.from(imageHex, "hex"));
  const out = execFileSync(VIT, ["classify", "--weights", repo(weights), "--image", image, "--story", "--threads", "1", "--json"], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").at(-1)).story;
}

const numbers = (text) => text.split(",").map(Number);
const largestDifference = (a, b) => Math.max(...a.map((v, i) => Math.abs(v - b[i])));

/** Opens step `step` (its data-step) by its tab. */
async function step(lab, name) {
  await lab.page.locator(`[role="tab"][data-step="${name}"]`).click();
  await until(() => lab.byTestId("story").getAttribute("data-step"), (s) => s === name, { what: `step ${name}` });
}

/** The story's numbers as the page shows them, once it has been told for the newest reading. */
async function shownStory(lab) {
  await until(() => lab.page.locator(".story-panel").getAttribute("data-ready"), (r) => r === "true", { what: "the story told", timeout: 120_000 });
  await step(lab, "input");
  const image = await lab.page.locator("[data-image]").getAttribute("data-image");
  await step(lab, "patches");
  const patches = Number(await lab.page.locator("[data-patches]").getAttribute("data-patches"));
  await step(lab, "tokens");
  const token = lab.byTestId("story-token");
  await until(() => token.getAttribute("data-values"), (v) => v.length > 0, { what: "a token" });
  const patch = Number(await token.getAttribute("data-patch"));
  const values = numbers(await token.getAttribute("data-values"));
  await step(lab, "lens");
  const rows = await lab.byTestId("story-lens-row").evaluateAll((rows) => rows.map((r) => r.dataset.values));
  return { image, patches, patch, token: values, lens: rows.map(numbers) };
}

test("the story's patch count, token and logit lens are the native code's for the same input, for both shipped ViTs", async () => {
  const lab = new LabPage(await app.browser.newPage({ viewport: { width: 1280, height: 900 } }));
  await lab.open(`${app.server.url}?backend=cpu#draw/input`);
  await lab.byTestId("story").waitFor({ timeout: 60_000 });
  // With the pad cleared (the example a first look draws gone, or never begun), the story
  // says what fills it, and offers the one action that does.
  await lab.clear();
  await lab.byTestId("story-empty").waitFor();
  await lab.stroke(ONE);
  await lab.settledPrediction();
  // The page's addresses (the site serves its models gzip-compressed); `vit` reads the plain files.
  for (const [weights, grid] of [["pretrained/vit-lab.safetensors.gz", 7], ["pretrained/vit-seed.safetensors.gz", 4]]) {
    if (!weights.endsWith("vit-lab.safetensors.gz")) {
      await lab.byTestId("shipped-model").selectOption(weights);
      await until(() => lab.byTestId("model-source").textContent(), (s) => s === weights, { what: weights, timeout: 120_000 });
      await lab.settledPrediction();
    }
    const page = await shownStory(lab);
    const native = await toldNatively(page.image, weights.replace(/\.gz$/, ""));
    assert.equal(page.patches, grid * grid, `${weights}: patches`);
    assert.equal(native.patches, page.patches);
    const tokenGap = largestDifference(page.token, native.tokens[page.patch]);
    assert.equal(page.token.length, native.tokens[page.patch].length);
    assert.ok(tokenGap <= 1e-4, `${weights}: patch ${page.patch}'s token differs by ${tokenGap}`);
    assert.equal(page.lens.length, native.lens.length);
    const lensGap = Math.max(...page.lens.map((row, i) => largestDifference(row, native.lens[i])));
    assert.ok(lensGap <= 1e-4, `${weights}: the lens differs by ${lensGap}`);
    console.log(`${weights}: ${page.patches} patches; patch ${page.patch}'s token within ${tokenGap.toExponential(1)}, the lens within ${lensGap.toExponential(1)} of vit classify --story`);
  }
  // The CNN's story says what a CNN has instead.
  await lab.byTestId("shipped-model").selectOption("pretrained/cnn-teacher.safetensors.gz");
  await lab.byTestId("story-cnn").waitFor({ timeout: 120_000 });
  await step(lab, "attention");
  assert.match(await lab.page.locator(".story-panel").textContent(), /no attention/);
  await lab.page.close();
});

test("the story follows the pen, the arrow keys step through it, and a link opens a step", async () => {
  const lab = new LabPage(await app.browser.newPage({ viewport: { width: 390, height: 844 } }));
  await lab.open(`${app.server.url}?backend=cpu#draw/lens`);
  await lab.byTestId("story").waitFor({ timeout: 60_000 });
  assert.equal(await lab.byTestId("story").getAttribute("data-step"), "lens", "the link's step");
  await lab.stroke(ONE);
  await lab.settledPrediction();
  const first = await shownStory(lab);
  await lab.clear();
  await lab.stroke(ZERO);
  assert.equal(await lab.settledPrediction(), "0");
  const second = await shownStory(lab);
  assert.notEqual(second.image, first.image, "the story is of the new drawing");
  assert.notDeepEqual(second.lens.at(-1), first.lens.at(-1));
  // Keyboard: from the chosen tab, the arrows, Home and End.
  await lab.page.locator('[role="tab"][aria-selected="true"]').focus();
  await lab.page.keyboard.press("ArrowRight");
  assert.equal(await lab.byTestId("story").getAttribute("data-step"), "head");
  await lab.page.keyboard.press("Home");
  assert.equal(await lab.byTestId("story").getAttribute("data-step"), "input");
  await lab.page.keyboard.press("ArrowRight");
  assert.equal(await lab.byTestId("story").getAttribute("data-step"), "patches");
  assert.equal(await lab.page.evaluate(() => document.activeElement.dataset.step), "patches", "the focus moves with the step");
  assert.equal(new URL(lab.page.url()).hash, "#draw/patches", "the address names the step");
  // Nothing in a card scrolls sideways at a phone's width.
  const overflow = await lab.page.evaluate(() => [...document.querySelectorAll(".card")].map((c) => c.scrollWidth - c.clientWidth));
  assert.ok(overflow.every((o) => o <= 1), `cards wider than their content: ${overflow}`);
  await lab.page.close();
});
