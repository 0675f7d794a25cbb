// End-to-end: the page on a phone (360 px, touch), in a dark room, and to a screen reader, by
// axe-core's rules. Against the release build.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { LabPage, numberIn, servedApp, until } from "./support.mjs";

const axeSource = await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const app = servedApp();

/** axe-core's serious and critical violations on the page as it is, one line each. */
async function seriousViolations(page) {
  // Once a page: another place is shown in the same document.
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(axeSource);
  const { violations } = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ["violations"] }));
  return violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.length} × ${v.nodes[0]?.target.join(" ")}: ${v.nodes[0]?.failureSummary?.split("\n").slice(1).join(" ")}`);
}

/** A stroke drawn with a finger, through Chromium's touch events. */
async function touchStroke(page, testId, points) {
  const box = await page.locator(`[data-testid="${testId}"]`).boundingBox();
  const cdp = await page.context().newCDPSession(page);
  const at = ([x, y]) => ({ x: box.x + x * box.width, y: box.y + y * box.height });
  const [first, ...rest] = points.map(at);
  await cdp.send("Input.dispatchTouchEvent", { type: "touchStart", touchPoints: [first] });
  for (const point of rest) await cdp.send("Input.dispatchTouchEvent", { type: "touchMove", touchPoints: [point] });
  await cdp.send("Input.dispatchTouchEvent", { type: "touchEnd", touchPoints: [] });
}

for (const colorScheme of ["light", "dark"]) {
  test(`axe-core finds no serious or critical violations, ${colorScheme}, after drawing and training`, async () => {
    const context = await app.browser.newContext({ colorScheme });
    const lab = new LabPage(await context.newPage());
    await lab.open(`${app.server.url}?backend=cpu&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32`);
    await lab.stroke([[0.5, 0.15], [0.5, 0.85]]);
    await lab.settledPrediction();
    await lab.place("train");
    await lab.byTestId("train-button").click();
    await until(() => numberIn(lab, "training-step"), (s) => s >= 101, { timeout: 300_000, what: "an evaluation" });
    await lab.byTestId("stop-button").click();
    await lab.byTestId("confusion-cell-1-1").click();
    await lab.byTestId("cell-digits").waitFor();
    // Every place, each as the drawing and the run left it: the training place first.
    const violations = [];
    for (const place of ["train", "draw", "runs", "experiments", "handwriting"]) {
      await lab.place(place);
      violations.push(...(await seriousViolations(lab.page)).map((v) => `${place}: ${v}`));
    }
    console.log(`axe-core, ${colorScheme}: ${violations.length} serious or critical`);
    assert.deepEqual(violations, []);
    await context.close();
  });
}

test("on a 360-px phone with touch: the pad fills the width, nothing scrolls sideways, a finger draws and trains", async () => {
  const context = await app.browser.newContext({ viewport: { width: 360, height: 740 }, hasTouch: true, isMobile: true, deviceScaleFactor: 2 });
  const page = await context.newPage();
  const lab = new LabPage(page);
  await lab.open(`${app.server.url}?backend=cpu&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32`);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 360, `the page is ${width} px wide`);
  const pad = await lab.byTestId("draw-canvas").boundingBox();
  assert.ok(pad.width >= 300 && pad.x + pad.width <= 360, `the pad: ${JSON.stringify(pad)}`);
  const scrolled = await page.evaluate(() => window.scrollY);
  await touchStroke(page, "draw-canvas", [[0.5, 0.15], [0.5, 0.35], [0.5, 0.55], [0.5, 0.85]]);
  assert.equal(await lab.settledPrediction(), "1");
  assert.equal(await page.evaluate(() => window.scrollY), scrolled, "drawing does not scroll the page");
  // The panels stack: the prediction under the pad.
  const prediction = await lab.byTestId("prediction-card").boundingBox();
  assert.ok(prediction.y >= pad.y + pad.height, "the prediction under the pad");
  // One tap, straight after the quick stroke, opens the training place: the pad keeps its
  // touches from becoming a fling whose stopping would take this tap. Another trains.
  await lab.byTestId("nav-train").tap();
  await page.locator('main[data-place="train"]').waitFor();
  await lab.byTestId("train-button").tap();
  await until(() => numberIn(lab, "training-step"), (s) => s >= 3, { timeout: 120_000, what: "step 3" });
  await lab.byTestId("stop-button").tap();
  await context.close();
});

/** Presses `key` (Tab, or Shift+Tab to go back) until the focus is on an element matching
 * `selector`; fails past `most`. */
async function tabTo(page, selector, key = "Tab", most = 300) {
  for (let presses = 0; presses < most; presses++) {
    await page.keyboard.press(key);
    if (await page.evaluate((s) => document.activeElement?.matches(s), selector)) return;
  }
  throw new Error(`${selector} is not reached by Tab`);
}

test("by keyboard alone: a test digit into the model, another map, a run started and stopped", async () => {
  const lab = new LabPage(await app.browser.newPage());
  await lab.open(`${app.server.url}?backend=cpu&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32`);
  await tabTo(lab.page, '[data-testid="random-test-digit"]');
  await lab.page.keyboard.press("Enter");
  await lab.byTestId("shown-digit").waitFor();
  assert.notEqual(await lab.settledPrediction(), "–");
  await tabTo(lab.page, ".thumb");
  await lab.page.keyboard.press("Enter");
  await until(() => lab.page.locator(".attention-main .caption").textContent(), (t) => /layer 1, mean of heads/.test(t), { what: "the map chosen" });
  // Back up to the navigation bar, to the training place.
  await tabTo(lab.page, '[data-testid="nav-train"]', "Shift+Tab");
  await lab.page.keyboard.press("Enter");
  await lab.page.locator('main[data-place="train"]').waitFor();
  await tabTo(lab.page, '[data-testid="train-button"]');
  await lab.page.keyboard.press("Enter");
  await until(() => numberIn(lab, "training-step"), (s) => s >= 2, { timeout: 120_000, what: "step 2" });
  await tabTo(lab.page, '[data-testid="stop-button"]');
  await lab.page.keyboard.press("Enter");
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "stopped", { what: "stopped" });
  await lab.page.close();
});
