// End-to-end: the page's geometry, as people see it. In every place at every width from a phone
// to a wide desktop, before a drawing, after one and while training: every card wide enough for
// its content and inside the page, nothing scrolls sideways, no title wraps word by word. With
// SHOTS=1, writes a screenshot of each state, place and width to tests/e2e/output/ for a person
// to look at (325 of them: without them the test took 55 s in the cold suite, with them 95;
// screenshots.mjs takes the ones a change is reviewed by). And the static first screen in index.html (painted before the
// app arrives) lays out as the app's own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { appFirstScreen } from "./make-frame.mjs";
import { LabPage, ONE, numberIn, servedApp, until } from "./support.mjs";

const app = servedApp();
const WIDTHS = [320, 360, 390, 768, 1024, 1280, 1440, 1920, 2560];
/** The places, each with the fewest cards it shows: the draw place's three (the pad, the
 * prediction, the heatmaps), the experiments' five, one in each of the others. */
const PLACES = { draw: 3, train: 1, runs: 1, experiments: 5, handwriting: 1 };
const OUTPUT = fileURLToPath(new URL("output/", import.meta.url));
const SHOTS = process.env.SHOTS === "1";
/** The narrowest a card may be (the prediction's bars); the heatmaps' card holds the large map
 * (280 px) and its padding. The collapse this guards against left the heatmaps 40 px wide. */
const NARROWEST_CARD = 200;
const NARROWEST_HEATMAPS = 300;

/** What the layout shows of itself at the viewport's width. */
function geometry(page) {
  return page.evaluate(() => {
    const box = (node) => {
      const r = node.getBoundingClientRect();
      return { left: Math.round(r.left), right: Math.round(r.right), width: Math.round(r.width), height: Math.round(r.height) };
    };
    const cards = [...document.querySelectorAll(".card")].map((card) => {
      const title = card.querySelector("h2");
      const line = title ? Number.parseFloat(getComputedStyle(title).lineHeight) || 1.2 * Number.parseFloat(getComputedStyle(title).fontSize) : 0;
      return {
        name: title?.textContent ?? card.className,
        ...box(card),
        overflow: card.scrollWidth - card.clientWidth,
        titleLines: title ? Math.round(title.getBoundingClientRect().height / line) : 0,
      };
    });
    const stack = document.querySelector(".heatmaps .stack");
    const heatmaps = document.querySelector(".heatmaps");
    // Boxes inside a card that scroll sideways (the heads' grid and the runs' table once did on
    // a phone): none may have more than it shows.
    const sideways = [...document.querySelectorAll(".card *")]
      .filter((node) => ["auto", "scroll"].includes(getComputedStyle(node).overflowX) && node.clientWidth > 0)
      .filter((node) => node.scrollWidth - node.clientWidth > 1)
      .map((node) => `${node.className || node.tagName}: ${node.scrollWidth - node.clientWidth} px more`);
    return {
      viewport: window.innerWidth,
      sideways,
      pageWidth: document.documentElement.scrollWidth,
      cards,
      stack: stack && box(stack),
      heatmaps: heatmaps && box(heatmaps),
    };
  });
}

function assertHolds(layout, state, place) {
  const at = `${layout.viewport} px, ${state}, ${place}`;
  assert.ok(layout.pageWidth <= layout.viewport, `${at}: the page is ${layout.pageWidth} px wide`);
  assert.ok(layout.cards.length >= PLACES[place], `${at}: ${layout.cards.length} cards`);
  assert.deepEqual(layout.sideways, [], `${at}: boxes that scroll sideways inside a card`);
  const narrowest = Math.min(NARROWEST_CARD, layout.viewport - 40);
  if (layout.heatmaps) {
    const least = Math.min(NARROWEST_HEATMAPS, layout.viewport - 16);
    assert.ok(layout.heatmaps.width >= least, `${at}: the heatmaps' card is ${layout.heatmaps.width} px wide`);
  }
  for (const card of layout.cards) {
    const what = `${at}: "${card.name}" ${JSON.stringify(card)}`;
    assert.ok(card.left >= 0 && card.right <= layout.viewport, `${what} leaves the page`);
    assert.ok(card.width >= narrowest, `${what} is narrower than ${narrowest} px`);
    assert.ok(card.overflow <= 1, `${what}: its content is wider than it`);
    assert.ok(card.titleLines <= 2, `${what}: its title wraps to ${card.titleLines} lines`);
  }
  if (layout.stack) {
    const { stack, heatmaps } = layout;
    assert.ok(stack.left >= heatmaps.left && stack.right <= heatmaps.right, `${at}: the heatmap leaves its card: ${JSON.stringify({ stack, heatmaps })}`);
  }
}

/** Measures and photographs every place at every width in `state`, opening each through the
 * navigation bar. */
async function everyWidth(lab, state) {
  const { page } = lab;
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const place of Object.keys(PLACES)) {
      await lab.place(place);
      // Two frames: the layout has followed the new width and place.
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
      const layout = await geometry(page);
      if (SHOTS) {
        await page.screenshot({ path: `${OUTPUT}layout-${state}-${place}-${width}.png` });
        if (width <= 1024) await page.screenshot({ path: `${OUTPUT}layout-${state}-${place}-${width}-full.png`, fullPage: true });
      }
      assertHolds(layout, state, place);
    }
  }
}

test("in every place at every width from 320 to 2560 px, before a drawing, after one and while training, every card holds its content", async () => {
  await mkdir(OUTPUT, { recursive: true });
  for (const colorScheme of ["light", "dark"]) {
    const context = await app.browser.newContext({ colorScheme, viewport: { width: 1440, height: 900 } });
    const lab = new LabPage(await context.newPage());
    await lab.open(`${app.server.url}?backend=cpu&preset=seed&depth=1&dim=32&heads=4&mlp=64&batch=32`);
    await everyWidth(lab, `${colorScheme}-start`);
    await lab.page.setViewportSize({ width: 1440, height: 900 });
    await lab.place("draw");
    await lab.stroke(ONE);
    await lab.settledPrediction();
    // The explanation fills in once the drawing settles: the card that once squeezed the rest.
    await lab.place("experiments");
    await until(() => lab.byTestId("explanations").getAttribute("data-state"), (s) => s === "ready", { what: "the explanation", timeout: 180_000 });
    await everyWidth(lab, `${colorScheme}-drawn`);
    if (colorScheme === "light") {
      // Started in the training place; the others visited while it trains.
      await lab.page.setViewportSize({ width: 1440, height: 900 });
      await lab.place("train");
      await lab.byTestId("train-button").click();
      await until(() => numberIn(lab, "training-step"), (s) => s >= 3, { what: "training", timeout: 300_000 });
      await everyWidth(lab, `${colorScheme}-training`);
      await lab.place("train");
      await lab.byTestId("stop-button").click();
    }
    await context.close();
  }
});

/** The boxes of the first screen's landmarks. */
function landmarks(page) {
  return page.evaluate(() =>
    Object.fromEntries(
      ["header h1", ".tagline", "nav.places", ".model-source", ".lab .draw", ".lab .pad", ".lab .prediction", ".lab .heatmaps", ".heatmaps .stack", ".heatmaps .map-multiples"].map((selector) => {
        const node = document.querySelector(selector);
        if (!node) return [selector, null];
        const r = node.getBoundingClientRect();
        return [selector, [r.left, r.top, r.width, r.height].map(Math.round)];
      }),
    ),
  );
}

test("index.html's static first screen, painted before the app arrives, lays out as the app's own", async () => {
  for (const width of [360, 1440]) {
    const viewport = { width, height: 900 };
    const appContext = await app.browser.newContext({ viewport });
    const page = await appContext.newPage();
    await appFirstScreen(page, app.server.url);
    const theApp = await landmarks(page);
    // The page as painted before its binary arrives: its script held back, so the frame stays.
    const staticContext = await app.browser.newContext({ viewport });
    const staticPage = await staticContext.newPage();
    await staticPage.route(/\/vitlab-[0-9a-f]+\.js$/, (route) => route.abort());
    await staticPage.goto(app.server.url);
    const theFrame = await landmarks(staticPage);
    for (const [selector, box] of Object.entries(theApp)) {
      assert.ok(box, `${width} px: the app has no ${selector}`);
      const framed = theFrame[selector];
      assert.ok(framed, `${width} px: index.html's frame has no ${selector}: run tests/e2e/make-frame.mjs`);
      const off = Math.max(...box.map((v, i) => Math.abs(v - framed[i])));
      assert.ok(off <= 2, `${width} px: ${selector} is at ${framed} in index.html, ${box} in the app: run tests/e2e/make-frame.mjs`);
    }
    await appContext.close();
    await staticContext.close();
  }
});

test("the first load builds the first screen only: the story comes at once when the visitor scrolls toward it, or after the page has been quiet", async () => {
  const context = await app.browser.newContext({ viewport: { width: 390, height: 800 } });
  const lab = new LabPage(await context.newPage());
  await lab.open(`${app.server.url}?backend=cpu`);
  const built = () => lab.page.evaluate(() => ({
    story: !!document.querySelector('[data-testid="story"]'),
    training: !!document.querySelector('[data-testid="train-button"]'),
  }));
  assert.deepEqual(await built(), { story: false, training: false }, "nothing below the first screen right after the model is in");
  const scrolled = Date.now();
  await lab.page.mouse.wheel(0, 2000);
  await until(built, (parts) => parts.story, { what: "the story, after a scroll", timeout: 60_000 });
  // The quiet path waits 2 s after the model is in (REVEAL_QUIET_MS): coming sooner, it came
  // for the scroll.
  const after = Date.now() - scrolled;
  console.log(`# the story ${after} ms after the scroll`);
  assert.ok(after < 1_800, `the story took ${after} ms after the scroll`);
  await context.close();

  // Never scrolled: it comes anyway once the page has been quiet, for a reader or a keyboard;
  // the training panel, in another place, does not.
  const still = await app.browser.newContext({ viewport: { width: 390, height: 800 } });
  const quiet = new LabPage(await still.newPage());
  await quiet.open(`${app.server.url}?backend=cpu`);
  await quiet.byTestId("story").waitFor({ state: "attached", timeout: 60_000 });
  assert.equal(await quiet.byTestId("train-button").count(), 0, "the training panel is in another place");
  assert.equal(await quiet.page.evaluate(() => window.scrollY), 0, "nobody scrolled");
  await still.close();
});
