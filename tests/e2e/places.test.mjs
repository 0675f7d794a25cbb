// End-to-end: the page's places (src/place.rs). From the first screen one click opens each
// place, at a phone's width and a laptop's; a link opens its place, under a sub-path and
// offline; Back returns; what a person did in one place is there when they come back; and a
// fresh visit shows no empty chart frame and next to no button that cannot act. Prints the
// figures the issue asks for (page height per place, words on the first screen, disabled
// buttons and empty frames).
import { test } from "node:test";
import assert from "node:assert/strict";
import { DIST, LabPage, ONE, launch, numberIn, serve, servedApp, until } from "./support.mjs";

const app = servedApp();
const PLACES = ["draw", "train", "runs", "experiments", "handwriting"];
/** A tiny model and a small plan: the runs here train in seconds. */
const SMALL = "?backend=cpu&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32";

/** What a visitor sees of the place shown: its lead, the bar's mark, and whether the place's
 * start is on screen. */
function shown(page) {
  return page.evaluate(() => {
    const main = document.querySelector("main");
    const current = [...document.querySelectorAll("nav.places a[aria-current]")].map((a) => a.getAttribute("href"));
    const lead = document.querySelector('[data-testid="place-lead"]');
    const box = lead?.getBoundingClientRect();
    return {
      place: main?.dataset.place,
      current,
      leadInView: !!box && box.top >= 0 && box.bottom <= window.innerHeight,
    };
  });
}

/** Visible buttons that cannot act, and chart frames with nothing in them, in the place shown. */
function deadAndEmpty(page) {
  return page.evaluate(() => {
    const visible = (node) => {
      const style = getComputedStyle(node);
      const r = node.getBoundingClientRect();
      return style.visibility !== "hidden" && style.display !== "none" && r.width > 0 && r.height > 0;
    };
    const disabled = [...document.querySelectorAll("button:disabled, input:disabled, select:disabled")]
      .filter(visible)
      .map((b) => b.textContent.trim() || b.getAttribute("aria-label") || b.outerHTML.slice(0, 60));
    const empty = [...document.querySelectorAll(".line-chart")]
      .filter(visible)
      .filter((figure) => Number(figure.querySelector("svg")?.dataset.points ?? "0") === 0)
      .map((figure) => figure.querySelector("svg")?.dataset.testid);
    const noData = [...document.querySelectorAll("svg text")].filter(visible).filter((t) => /no data yet/.test(t.textContent)).length;
    return { disabled, empty, noData };
  });
}

/** The page's height in screens, and the words (a letter in them) on the first screen. */
function measure(page) {
  return page.evaluate(() => {
    const height = document.documentElement.scrollHeight / window.innerHeight;
    const words = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      const parent = node.parentElement;
      if (!parent || parent.closest("script, style, [hidden], details:not([open]) > :not(summary)")) continue;
      const style = getComputedStyle(parent);
      if (style.display === "none" || style.visibility === "hidden") continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const r = range.getBoundingClientRect();
      if (r.height === 0 || r.top >= window.innerHeight || r.bottom <= 0) continue;
      words.push(...node.textContent.split(/\s+/).filter((w) => /\p{L}/u.test(w)));
    }
    return { screens: Math.round(height * 10) / 10, words: words.length };
  });
}

test("from the first screen one click opens each place, at 390 and 1280 px: marked, at its start, and Back returns", async () => {
  for (const [width, height] of [[390, 844], [1280, 800]]) {
    const page = await app.browser.newPage({ viewport: { width, height } });
    const lab = new LabPage(page);
    await lab.open(`${app.server.url}?backend=cpu`);
    assert.deepEqual((await shown(page)).current, ["#draw"], `${width} px: the draw place is marked at first`);
    for (const place of PLACES) {
      const link = lab.byTestId(`nav-${place}`);
      const box = await link.boundingBox();
      assert.ok(box && box.y >= 0 && box.y + box.height <= height, `${width} px: the link to ${place} is on the first screen`);
      await link.click();
      await page.locator(`main[data-place="${place}"]`).waitFor();
      const now = await shown(page);
      assert.deepEqual(now.current, [`#${place}`], `${width} px: ${place} is the one marked`);
      assert.ok(now.leadInView, `${width} px: ${place} opens at its start`);
      assert.equal(new URL(page.url()).hash, `#${place}`);
    }
    // A place not shown costs nothing: every place opened, nothing done in any, and the only
    // worker is the one the model draws in (no explaining, training or measuring worker).
    const roles = page.workers().map((worker) => new URL(worker.url()).searchParams.get("role") ?? new URL(worker.url()).pathname);
    assert.ok(roles.every((role) => role === "draw" || role.endsWith("drawer.js")), `${width} px: workers started: ${roles}`);
    // Back and Forward move between places.
    await page.goBack();
    await page.locator('main[data-place="experiments"]').waitFor();
    await page.goBack();
    await page.locator('main[data-place="runs"]').waitFor();
    await page.goForward();
    await page.locator('main[data-place="experiments"]').waitFor();
    // The keyboard reaches every place: Tab to a link, Enter.
    await page.keyboard.press("Home");
    await lab.byTestId("nav-train").focus();
    await page.keyboard.press("Enter");
    await page.locator('main[data-place="train"]').waitFor();
    await page.close();
  }
});

test("a link opens its place and brings its part into view, under a sub-path, and offline after one visit", async () => {
  const server = await serve(DIST, { base: "/some/path/" });
  const browser = await launch();
  try {
    const context = await browser.newContext({ serviceWorkers: "allow", viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const lab = new LabPage(page);
    await lab.open(`${server.url}?backend=cpu#train`);
    assert.equal((await shown(page)).place, "train");
    await lab.byTestId("train-button").waitFor();
    // A part: the card is on screen, below the sticky bar.
    await page.goto(`${server.url}?backend=cpu#experiments/heads-matter`);
    const card = lab.byTestId("heads-matter-card");
    await until(async () => {
      const box = await card.boundingBox();
      return box && box.y >= 0 && box.y < 200;
    }, Boolean, { what: "the heads card brought into view", timeout: 60_000 });
    const offline = lab.byTestId("offline");
    await until(() => offline.getAttribute("data-state"), (s) => s === "ready", { what: "kept for offline use", timeout: 300_000 });
    server.cut();
    await page.goto(`${server.url}?backend=cpu#handwriting`);
    await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
    assert.equal((await shown(page)).place, "handwriting");
    await lab.byTestId("handwriting-card").waitFor();
    // An experiment link of before the places (a query, no fragment) still opens the lab.
    await page.goto(`${server.url}?backend=cpu&map=rollout`);
    await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
    assert.equal((await shown(page)).place, "draw");
  } finally {
    await browser.close();
  }
});

test("a drawing, a training run and heads switched off are there again after a round trip through every other place", async () => {
  const page = await app.browser.newPage({ viewport: { width: 1280, height: 800 } });
  const lab = new LabPage(page);
  // Long enough to be under way however slow the round trip.
  await lab.open(`${app.server.url}${SMALL}&epochs=100`);
  await lab.stroke(ONE);
  const before = await lab.settledPrediction();
  const ink = () => page.evaluate(() => {
    const canvas = document.querySelector('[data-testid="draw-canvas"]');
    const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let lit = 0;
    for (let i = 0; i < pixels.length; i += 4) if (pixels[i] > 128) lit += 1;
    return lit;
  });
  const inked = await ink();
  assert.ok(inked > 100, `the stroke is on the pad (${inked} pixels)`);
  await lab.openHeadSwitches();
  await lab.byTestId("switch-heads").click();
  await page.locator('[data-head="1.2"]').click();
  await until(() => lab.byTestId("prediction-card").getAttribute("data-heads-off"), (o) => o === "1.2", { what: "head 1.2 off" });

  await lab.place("train");
  await lab.byTestId("train-button").click();
  await until(() => numberIn(lab, "training-step"), (s) => s >= 2, { what: "training", timeout: 300_000 });
  for (const place of ["runs", "experiments", "handwriting", "draw"]) await lab.place(place);
  assert.equal(await ink(), inked, "the drawing is on the pad as it was");
  assert.equal(await lab.byTestId("prediction").textContent(), before);
  assert.equal(await lab.byTestId("prediction-card").getAttribute("data-heads-off"), "1.2");
  assert.equal(await page.locator('[data-head="1.2"]').getAttribute("aria-pressed"), "true");
  // The run went on meanwhile, and its place shows it as it is.
  assert.equal(await lab.byTestId("nav-train").locator(".running").count(), 1, "the bar marks the run training");
  const left = await numberIn(lab, "training-step").catch(() => NaN);
  assert.ok(Number.isNaN(left), "the training panel is not built while draw is shown");
  await lab.place("train");
  assert.equal(await lab.byTestId("run-state").textContent(), "training");
  await until(() => numberIn(lab, "training-step"), (s) => s >= 4, { what: "the run going on", timeout: 300_000 });
  await lab.byTestId("stop-button").click();
  await page.close();
});

test("a fresh visit: no empty chart frame, at most five buttons that cannot act, and the figures of each place", async () => {
  const figures = {};
  let disabled = 0;
  let empty = 0;
  for (const [width, height] of [[1280, 800], [390, 844]]) {
    const context = await app.browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    const lab = new LabPage(page);
    await lab.open(`${app.server.url}?backend=cpu`);
    // The story comes in once the page has been quiet.
    await lab.byTestId("story").waitFor({ timeout: 60_000 });
    figures[`first screen words at ${width}`] = (await measure(page)).words;
    for (const place of PLACES) {
      await lab.place(place);
      await page.waitForTimeout(500);
      const found = await deadAndEmpty(page);
      if (width === 1280) {
        disabled += found.disabled.length;
        empty += found.empty.length + found.noData;
      }
      assert.deepEqual(found.empty, [], `${width} px, ${place}: empty chart frames`);
      assert.equal(found.noData, 0, `${width} px, ${place}: "no data yet"`);
      figures[`${place} screens at ${width}`] = (await measure(page)).screens;
      figures[`${place} disabled at ${width}`] = found.disabled;
    }
    await context.close();
  }
  console.log(`places: ${JSON.stringify(figures)}`);
  console.log(`a fresh visit, every place at 1280 px: ${disabled} disabled buttons, ${empty} empty chart frames`);
  assert.ok(disabled <= 5, `${disabled} buttons that cannot act: ${JSON.stringify(figures)}`);
  assert.equal(empty, 0);
  assert.ok(figures["first screen words at 1280"] <= 130, `${figures["first screen words at 1280"]} words on the first screen`);
});

test("a place left while its work is in flight drops that work: no error, whatever comes back late", async () => {
  const page = await app.browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  page.on("console", (message) => { if (message.type() === "error") errors.push(`console.error: ${message.text()}`); });
  const lab = new LabPage(page);
  await lab.open(`${app.server.url}?backend=cpu`);
  await lab.stroke(ONE);
  await lab.settledPrediction();
  // Two digits in the set, so that Handwriting reads them in the drawing worker on opening.
  for (const label of ["1", "7"]) {
    await lab.byTestId(`teach-${label}`).click();
    await until(() => lab.byTestId("teach-said").textContent(), (s) => /^Kept/.test(s), { what: "kept" });
  }
  // From at once to past the 300 ms a card waits for a drawing to settle before it asks.
  for (const stay of [0, 150, 350, 500, 700, 900]) {
    // Each place opened and left at once: the explanation, the occlusion readings, the set's
    // reading and the story are asked, and answered after their cards are gone.
    for (const place of ["experiments", "handwriting", "draw", "experiments", "runs", "handwriting", "train", "draw"]) {
      await lab.byTestId(`nav-${place}`).click();
      await page.waitForTimeout(stay);
    }
  }
  await page.waitForTimeout(3000);
  await lab.place("draw");
  await lab.stroke(ONE);
  assert.equal(await lab.settledPrediction(), "1", "the page still reads digits");
  // The set emptied for the tests after this one.
  await lab.place("handwriting");
  await lab.byTestId("handwriting-delete-all").click();
  await lab.byTestId("handwriting-delete-all-confirm").click();
  assert.deepEqual(errors, [], "no error in the page");
  await page.close();
});
