// A first look at Draw, in any of the three browsers' labs (Playwright's LabPage, puppeteer's
// and WebDriver's EngineLab): without a touch, the pad draws the example three
// (`src/example_digit.rs`) once the model is in, and the prediction, the attention map and the
// story follow it (but "It is a …", which keeps a drawing in the person's set, does not); the
// person's first stroke then takes the pad over.
import assert from "node:assert/strict";
import { ONE, until } from "./support.mjs";

/** The example's digit, as `EXAMPLE_LABEL` says. */
const EXAMPLE = "3";
/** How long each is waited for: a bound for a loaded machine, not a figure (the goal is 3 s
 * after the model is ready; the tests print how long each took). */
export const WAIT_MS = 30_000;

const text = (lab, id) => ("byTestId" in lab ? lab.byTestId(id).textContent() : lab.text(id));
const count = (lab, id) => ("byTestId" in lab ? lab.byTestId(id).count() : lab.count(id));
const attribute = (lab, id, name) => ("byTestId" in lab ? lab.byTestId(id).getAttribute(name) : lab.attribute(id, name));

/** Call it as soon as the lab's model is ready; it returns how long each took after that, in
 * ms, to print. */
export async function theExampleOnArrival(lab) {
  const ready = Date.now();
  const options = (what) => ({ what, every: 50, timeout: WAIT_MS });
  await until(() => text(lab, "prediction"), (digit) => digit === EXAMPLE, options(`the example read as a ${EXAMPLE}, untouched`));
  const prediction_ms = Date.now() - ready;
  await until(() => attribute(lab, "attention-map", "aria-label"), (label) => label !== null && label !== "no drawing yet", options("the example's attention map"));
  const map_ms = Date.now() - ready;
  await until(
    async () => [await count(lab, "story"), await count(lab, "story-empty")],
    ([story, empty]) => story === 1 && empty === 0,
    options("the story telling the example"),
  );
  const story_ms = Date.now() - ready;
  // In Chromium, also since the page's navigation began.
  const since_navigation_ms = "page" in lab ? Math.round(await lab.page.evaluate(() => performance.now())) : undefined;
  // The pad says whose drawing it is until the person's first stroke takes it over: their 1
  // alone, the example and its note gone.
  assert.equal(await count(lab, "example-note"), 1, "the pad says the example is the page's");
  // Nor is it offered to the person's set: "It is a …" comes with their own drawing.
  assert.equal(await count(lab, "teach-3"), 0, "the example offered to keep as the person's");
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1");
  assert.equal(await count(lab, "example-note"), 0, "the person's own drawing carries no note");
  assert.equal(await count(lab, "teach-1"), 1, "the person's drawing offered to keep");
  return { prediction_ms, map_ms, story_ms, since_navigation_ms };
}
