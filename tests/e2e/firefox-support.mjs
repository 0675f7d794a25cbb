// The Firefox side of the e2e tests: Debian's Firefox ESR driven by puppeteer-core over
// WebDriver BiDi (playwright-core drives only its own patched Firefox), and a page object with
// the few calls of support.mjs's `LabPage` the Firefox test needs, written for puppeteer.
import puppeteer from "puppeteer-core";
import { servedApp } from "./support.mjs";

/** Headless Firefox: `FIREFOX`, or Debian's firefox-esr. */
export async function launchFirefox() {
  return puppeteer.launch({
    browser: "firefox",
    protocol: "webDriverBiDi",
    executablePath: process.env.FIREFOX ?? "/usr/bin/firefox-esr",
    headless: true,
  });
}

/** As support.mjs's `servedApp`, with Firefox: read `server` and `browser` inside the tests. */
export function servedAppInFirefox() {
  return servedApp(launchFirefox);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const selector = (id) => `[data-testid="${id}"]`;

/**
 * The lab through its data-testid hooks, in puppeteer. It records the page's uncaught errors
 * (`pageerror`, the page's and its workers') and console errors from the moment it is made.
 */
export class FirefoxLab {
  constructor(page) {
    this.page = page;
    this.errors = [];
    this.warnings = [];
    this.workers = [];
    page.on("pageerror", (error) => this.errors.push(`pageerror: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") this.errors.push(`console.error: ${message.text()}`);
      if (message.type() === "warn") this.warnings.push(message.text());
    });
    page.on("workercreated", (worker) => this.workers.push(worker.url()));
  }
  static async open(browser, url, { timeout = 300_000 } = {}) {
    const lab = new FirefoxLab(await browser.newPage());
    await lab.page.goto(url);
    await lab.waitFor("model-ready", timeout);
    return lab;
  }
  async waitFor(id, timeout = 60_000) {
    return this.page.waitForSelector(selector(id), { timeout });
  }
  /** How many elements carry the testid (0 when none: `count()` in playwright). */
  async count(id) {
    return (await this.page.$$(selector(id))).length;
  }
  /** The element's text, or null when there is none. */
  async text(id) {
    return this.page.$eval(selector(id), (e) => e.textContent).catch(() => null);
  }
  async attribute(id, name) {
    return this.page.$eval(selector(id), (e, name) => e.getAttribute(name), name).catch(() => null);
  }
  /** The element's text as a number (NaN for "–"), as support.mjs's `numberIn`. */
  async number(id) {
    return Number.parseFloat((await this.text(id) ?? "").replace("%", ""));
  }
  /** Clicks the element once it is there (the parts below the first screen come a little after
   * the model), as playwright's locators wait. */
  async click(id) {
    await this.waitFor(id);
    await this.page.click(selector(id));
  }
  async backend() {
    return this.text("backend");
  }
  /** Draws a polyline given in pad fractions (0..1) with the mouse, as `LabPage.stroke`. */
  async stroke(points) {
    const pad = await this.waitFor("draw-canvas");
    await pad.scrollIntoView();
    const box = await pad.boundingBox();
    const at = ([x, y]) => [box.x + x * box.width, box.y + y * box.height];
    const [first, ...rest] = points.map(at);
    await this.page.mouse.move(...first);
    await this.page.mouse.down();
    for (const point of rest) await this.page.mouse.move(...point, { steps: 4 });
    await this.page.mouse.up();
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
    return Promise.all([...Array(10).keys()].map(async (d) => Number(await this.attribute(`probability-${d}`, "data-value"))));
  }
  async close() {
    await this.page.close();
  }
}

/**
 * What this browser offers the page, asked in the page and in a worker it starts (Firefox's
 * BiDi cannot evaluate in a worker's realm, so the worker reports by message), including
 * whether that worker can start a worker of its own, as the training worker starts its helper.
 */
export async function browserFeatures(page) {
  return page.evaluate(async () => {
    const probe = () => ({
      webgpu: typeof navigator.gpu !== "undefined" && navigator.gpu !== null,
      caches: typeof caches !== "undefined",
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
    return {
      page: {
        ...probe(),
        cacheStorage,
        pointerEvents: typeof PointerEvent === "function",
        setPointerCapture: typeof Element.prototype.setPointerCapture === "function",
        longTasks: PerformanceObserver.supportedEntryTypes.includes("longtask"),
        crossOriginIsolated,
      },
      worker: inWorker,
    };
  });
}
