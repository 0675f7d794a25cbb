// The lab's page object for the engines playwright-core cannot drive with Debian's own build
// (Firefox ESR through puppeteer-core, WebKitGTK through a W3C WebDriver client): everything
// said through a handful of primitives each driver supplies, so that one test reads the same
// in every engine. Chromium's tests use support.mjs's `LabPage`, on playwright's locators.

import assert from "node:assert/strict";
import { until } from "./support.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const selector = (id) => `[data-testid="${id}"]`;

/**
 * The lab through its data-testid hooks. A driver's subclass supplies:
 * - `evaluate(fn, ...args)`: `fn(...args)` run in the page, its promise awaited;
 * - `clickAt(css)`: a real click (the driver's input, not a synthetic event) on the element;
 * - `drag(points)`: the primary button pressed at the first point, moved through the others
 *   and released, in viewport pixels, with the driver's pointer input;
 * - `goto(url)`, `reload()` and `close()`.
 */
export class EngineLab {
  async waitFor(id, timeout = 60_000) {
    await this.waitForCss(selector(id), timeout);
  }
  /** Waits until `css` matches an element. */
  async waitForCss(css, timeout = 60_000) {
    const deadline = Date.now() + timeout;
    while (Date.now() < deadline) {
      if (await this.countOf(css)) return;
      await sleep(100);
    }
    throw new Error(`no ${css} within ${timeout} ms`);
  }
  /** How many elements carry the testid. */
  async count(id) {
    return this.countOf(selector(id));
  }
  /** How many elements `css` matches. */
  async countOf(css) {
    return this.evaluate((css) => document.querySelectorAll(css).length, css);
  }
  /** The element's text, or null when there is none. */
  async text(id) {
    return this.textOf(selector(id));
  }
  /** The text of the first element `css` matches, or null when there is none. */
  async textOf(css) {
    return this.evaluate((css) => document.querySelector(css)?.textContent ?? null, css);
  }
  async attribute(id, name) {
    return this.evaluate((css, name) => document.querySelector(css)?.getAttribute(name) ?? null, selector(id), name);
  }
  /** The element's text as a number (NaN for "–"), as support.mjs's `numberIn`. */
  async number(id) {
    return Number.parseFloat((await this.text(id) ?? "").replace("%", ""));
  }
  /** Clicks the element once it is there (the parts below the first screen come a little after
   * the model), as playwright's locators wait. */
  async click(id) {
    await this.waitFor(id);
    await this.clickAt(selector(id));
  }
  async backend() {
    return this.text("backend");
  }
  /** Opens a place through the navigation bar, as a person would, and waits until it is shown
   * (as `LabPage.place`). */
  async place(name) {
    // A build from before the places (VITLAB_DIST at an older commit, to show a new test
    // failing there) has every card on its one page: nothing to open.
    if (!(await this.countOf(selector("places")))) return;
    await this.click(`nav-${name}`);
    await this.waitForCss(`main[data-place="${name}"]`);
  }
  /** Opens the head switches (a <details>) if they are closed (as `LabPage.openHeadSwitches`). */
  async openHeadSwitches() {
    const open = `${selector("head-switches")}[open]`;
    if (!(await this.countOf(open))) await this.clickAt(`${selector("head-switches")} summary`);
    await this.waitForCss(open);
  }
  /** The pad scrolled into view, and a point in pad fractions (0..1) to viewport pixels (as
   * `LabPage.padToViewport`, rounded: WebDriver's pointer takes whole pixels). */
  async padToViewport() {
    await this.waitFor("draw-canvas");
    const box = await this.evaluate((css) => {
      const pad = document.querySelector(css);
      pad.scrollIntoView({ block: "center" });
      const { x, y, width, height } = pad.getBoundingClientRect();
      return { x, y, width, height };
    }, selector("draw-canvas"));
    return ([x, y]) => [Math.round(box.x + x * box.width), Math.round(box.y + y * box.height)];
  }
  /** Draws each polyline of `lines` in turn, straight from point to point, the pad's box read
   * once (as `LabPage.drawLines`). */
  async drawLines(lines) {
    const at = await this.padToViewport();
    for (const line of lines) await this.drag(line.map(at));
  }
  /** Draws a polyline given in pad fractions (0..1), as `LabPage.stroke`. */
  async stroke(points) {
    const at = await this.padToViewport();
    // Four steps between points, as the Chromium tests' mouse moves.
    const path = [];
    points.map(at).forEach((point, i, all) => {
      if (i === 0) return path.push(point);
      const [px, py] = all[i - 1];
      for (let s = 1; s <= 4; s++) path.push([Math.round(px + ((point[0] - px) * s) / 4), Math.round(py + ((point[1] - py) * s) / 4)]);
    });
    await this.drag(path);
  }
  async clear() {
    await this.click("clear-button");
  }
  /** As `LabPage.settledPrediction`: idle twice in a row, 300 ms apart, with a prediction. */
  async settledPrediction(timeout = 120_000) {
    const deadline = Date.now() + timeout;
    let last = null;
    while (Date.now() < deadline) {
      const busy = await this.attribute("prediction-card", "data-busy");
      const text = await this.text("prediction");
      if (busy === "false" && text !== "–" && text === last) return text;
      last = busy === "false" ? text : null;
      await sleep(300);
    }
    throw new Error(`no settled prediction within ${timeout} ms (last: ${last})`);
  }
  async probabilities() {
    return this.evaluate(() =>
      [...Array(10).keys()].map((d) => Number(document.querySelector(`[data-testid="probability-${d}"]`)?.getAttribute("data-value"))));
  }
}

/**
 * [`EngineLab`] on a page with the calls playwright's and puppeteer's pages share (`click`,
 * `mouse`, `goto`, `reload`, `close`, and puppeteer's `evaluate(fn, ...args)`).
 */
export class PageLab extends EngineLab {
  constructor(page) {
    super();
    this.page = page;
  }
  async evaluate(fn, ...args) {
    return this.page.evaluate(fn, ...args);
  }
  async clickAt(css) {
    await this.page.click(css);
  }
  async drag([first, ...rest]) {
    await this.page.mouse.move(...first);
    await this.page.mouse.down();
    for (const point of rest) await this.page.mouse.move(...point);
    await this.page.mouse.up();
  }
  async goto(url) {
    await this.page.goto(url);
  }
  async reload() {
    await this.page.reload();
  }
  async close() {
    await this.page.close();
  }
}

/**
 * What this browser offers the page, asked in the page and in a worker it starts (neither
 * puppeteer's BiDi nor WebDriver classic can evaluate in a worker's realm, so the worker
 * reports by message), including whether that worker can start a worker of its own, as the
 * training worker starts its helper.
 */
export async function browserFeatures(lab) {
  return lab.evaluate(async () => {
    const probe = () => ({
      webgpu: typeof navigator.gpu !== "undefined" && navigator.gpu !== null,
      caches: typeof caches !== "undefined",
      indexedDB: typeof indexedDB !== "undefined",
      webLocks: typeof navigator.locks?.request === "function",
      offscreenCanvas: typeof OffscreenCanvas === "function",
      worker: typeof Worker === "function",
      hardwareConcurrency: navigator.hardwareConcurrency,
      secure: isSecureContext,
    });
    const source = `
      const probe = ${probe.toString()};
      const report = probe();
      const nested = new Worker(URL.createObjectURL(new Blob(["postMessage(42)"], { type: "text/javascript" })));
      const timer = setTimeout(() => postMessage({ ...report, nestedWorker: false }), 5000);
      nested.onmessage = (event) => { clearTimeout(timer); postMessage({ ...report, nestedWorker: event.data === 42 }); };
      nested.onerror = () => { clearTimeout(timer); postMessage({ ...report, nestedWorker: false }); };
    `;
    const worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })));
    const inWorker = await new Promise((resolve, reject) => {
      worker.onmessage = (event) => resolve(event.data);
      worker.onerror = (event) => reject(new Error(event.message));
    });
    worker.terminate();
    let cacheStorage;
    try {
      const cache = await caches.open("vitlab-feature-probe");
      await cache.put("/probe", new Response("ok"));
      cacheStorage = (await (await cache.match("/probe")).text()) === "ok";
      await caches.delete("vitlab-feature-probe");
    } catch (error) {
      cacheStorage = `refused: ${error}`;
    }
    let webLocks;
    try {
      webLocks = await navigator.locks.request("vitlab-feature-probe", { ifAvailable: true }, (lock) => lock !== null);
    } catch (error) {
      webLocks = `refused: ${error}`;
    }
    return {
      page: {
        ...probe(),
        cacheStorage,
        webLocks,
        serviceWorker: typeof navigator.serviceWorker?.register === "function",
        pointerEvents: typeof PointerEvent === "function",
        setPointerCapture: typeof Element.prototype.setPointerCapture === "function",
        longTasks: PerformanceObserver.supportedEntryTypes.includes("longtask"),
        crossOriginIsolated,
      },
      worker: inWorker,
    };
  });
}

/**
 * Asserts what the page needs of an engine without WebGPU ([`browserFeatures`]' report): its
 * CPU fallback runs, a worker starts a worker, Cache Storage, IndexedDB, Web Locks, service
 * workers and pointer events.
 */
export function assertCpuEngineFeatures(features, engine) {
  assert.equal(features.page.webgpu, false, `WebGPU in this ${engine}: the page's CPU fallback is what runs here`);
  assert.equal(features.worker.webgpu, false);
  assert.equal(features.worker.nestedWorker, true, "a worker starts a worker (the training worker's helper)");
  assert.equal(features.page.cacheStorage, true, "Cache Storage on http://127.0.0.1 (the data's chunks, offline)");
  assert.equal(features.worker.caches, true, "Cache Storage in a worker (the training worker's chunks)");
  assert.equal(features.page.indexedDB && features.worker.indexedDB, true, "IndexedDB (the runs)");
  assert.equal(features.page.webLocks, true, "Web Locks (a run trains in one tab only)");
  assert.equal(features.page.serviceWorker, true, "service workers (offline)");
  assert.equal(features.page.pointerEvents && features.page.setPointerCapture, true, "pointer events (the pad)");
}

/** Pause: the step count stands still; resume: it moves again. */
export async function pauseAndResume(lab) {
  const step = () => lab.number("training-step");
  await lab.click("pause-button");
  await until(() => lab.text("run-state"), (s) => s === "paused", { what: "paused" });
  const paused = await step();
  await sleep(1500);
  assert.equal(await step(), paused, "no steps while paused");
  await lab.click("pause-button");
  await until(step, (s) => s > paused + 10, { what: "steps after resume" });
}

/** The places, in the navigation bar's order. */
export const PLACES = ["draw", "train", "runs", "experiments", "handwriting"];

/**
 * The places and the story as a visitor meets them, in any engine: one click on the bar opens
 * each place, marked and at its start; Back returns; a drawn 1 gets its story (the patches of
 * the model in use and a token of its patch), and the arrow keys step through it. `back` is
 * the driver's Back.
 */
export async function placesAndStory(lab, back) {
  for (const place of PLACES) {
    await lab.place(place);
    const current = await lab.evaluate(() => [...document.querySelectorAll("nav.places a[aria-current]")].map((a) => a.getAttribute("href")));
    assert.deepEqual(current, [`#${place}`], `${place} is the one marked`);
    assert.ok(await lab.count("place-lead"), `${place} opens with its sentence`);
  }
  await back();
  await lab.waitForCss('main[data-place="experiments"]');
  await lab.place("draw");
  await lab.waitFor("story");
  await lab.stroke([[0.5, 0.15], [0.5, 0.85]]);
  assert.equal(await lab.settledPrediction(), "1");
  await until(() => lab.evaluate(() => document.querySelector(".story-panel")?.dataset.ready), (r) => r === "true", { what: "the story told", timeout: 120_000 });
  await lab.clickAt('[role="tab"][data-step="patches"]');
  assert.equal(await lab.evaluate(() => document.querySelector("[data-patches]")?.dataset.patches), "49", "the lab model's 7×7 patches");
  await lab.clickAt('[role="tab"][data-step="tokens"]');
  const token = await lab.evaluate(() => document.querySelector('[data-testid="story-token"]')?.dataset.values ?? "");
  assert.equal(token.split(",").filter((v) => Number.isFinite(Number(v)) && v !== "").length, 64, "a token of 64 values");
  // The arrow keys, from the chosen tab.
  await lab.evaluate(() => {
    const tab = document.querySelector('[role="tab"][aria-selected="true"]');
    tab.focus();
    tab.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
  });
  assert.equal(await lab.attribute("story", "data-step"), "positions");
}

/**
 * The stale tab, in any engine, with two labs `a` and `b` open on one profile (two tabs): A
 * trains and stops; B, reloaded, continues the run from the table, trains further and stops;
 * A resumes and goes on from B's progress, says so, and what it keeps next is past B's.
 */
export async function staleTabResumes(a, b) {
  const state = (lab) => lab.text("run-state");
  const step = (lab) => lab.number("training-step");
  const stored = (lab) => lab.evaluate(async () => {
    const db = await new Promise((resolve, reject) => {
      const request = indexedDB.open("vitlab-runs");
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    const records = await new Promise((resolve, reject) => {
      const request = db.transaction("records").objectStore("records").getAll();
      request.onsuccess = () => resolve(request.result.map((json) => JSON.parse(json)));
      request.onerror = () => reject(request.error);
    });
    db.close();
    return Object.fromEntries(records.map((r) => [String(r.id), r.step]));
  });
  await a.place("train");
  await a.click("train-button");
  await until(() => step(a), (s) => s >= 3, { what: "A training", timeout: 300_000 });
  await a.click("stop-button");
  await until(() => state(a), (s) => s === "stopped", { what: "A stopped" });
  const run = await a.evaluate(() => sessionStorage.getItem("vitlab-run"));
  await b.reload();
  await b.waitFor("model-ready", 120_000);
  await b.place("runs");
  await b.clickAt(`[data-testid="run-row"][data-run="${run}"] [data-testid="continue-run"]`);
  await b.waitForCss('main[data-place="train"]');
  const stoppedAt = (await stored(a))[run];
  await until(() => step(b), (s) => s >= stoppedAt + 20, { what: "B past A", timeout: 300_000 });
  await b.click("stop-button");
  await until(() => state(b), (s) => s === "stopped", { what: "B stopped" });
  const byB = (await stored(b))[run];
  await a.click("pause-button");
  await until(() => a.textOf(".notices"), (t) => /was continued in another tab meanwhile: it goes on from there/.test(t ?? ""), { what: "A told where the run went on" });
  await until(() => step(a), (s) => s > byB, { what: "A past B's step", timeout: 300_000 });
  await a.click("stop-button");
  await until(() => state(a), (s) => s === "stopped", { what: "A stopped again" });
  const last = (await stored(a))[run];
  assert.ok(last > byB, `kept at ${last} after B's ${byB}`);
}
