// Shared by the e2e tests and the benchmark: a static server for dist/, Chromium with
// WebGPU, and a page object for the lab.
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize } from "node:path";
import { chromium } from "playwright-core";

const TYPES = {
  ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm",
  ".css": "text/css", ".json": "application/json",
};

/** Serves `root` on a free loopback port; resolves to { url, close }. */
export async function serve(root) {
  const server = createServer(async (request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url, "http://x").pathname));
    let file = join(root, path);
    try {
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      const body = await readFile(file);
      response.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "content-length": body.length });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() };
}

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--enable-unsafe-webgpu", "--no-sandbox", "--disable-dev-shm-usage"],
  });
}

/** The draw-and-classify page, through its data-testid hooks. */
export class LabPage {
  constructor(page) {
    this.page = page;
  }
  byTestId(id) {
    return this.page.locator(`[data-testid="${id}"]`);
  }
  async open(url, { timeout = 300_000 } = {}) {
    await this.page.goto(url);
    await this.byTestId("model-ready").waitFor({ timeout });
  }
  async backend() {
    return this.byTestId("backend").textContent();
  }
  /** Draws a polyline given in pad fractions (0..1). */
  async stroke(points) {
    const pad = this.byTestId("draw-canvas");
    await pad.scrollIntoViewIfNeeded();
    const box = await pad.boundingBox();
    const at = ([x, y]) => [box.x + x * box.width, box.y + y * box.height];
    const [first, ...rest] = points.map(at);
    await this.page.mouse.move(...first);
    await this.page.mouse.down();
    for (const point of rest) await this.page.mouse.move(...point, { steps: 4 });
    await this.page.mouse.up();
  }
  async clear() {
    await this.byTestId("clear-button").click();
  }
  /** Waits until no classification is running or queued and a prediction is shown. */
  async settledPrediction(timeout = 120_000) {
    const deadline = Date.now() + timeout;
    let last = null;
    while (Date.now() < deadline) {
      const busy = await this.byTestId("prediction-card").getAttribute("data-busy");
      const text = await this.byTestId("prediction").textContent();
      // Idle twice in a row, 300 ms apart: the newest drawing has been classified.
      if (busy === "false" && text !== "–" && text === last) return text;
      last = busy === "false" ? text : null;
      await this.page.waitForTimeout(300);
    }
    throw new Error(`no settled prediction within ${timeout} ms (last: ${last})`);
  }
  async probabilities() {
    return Promise.all([...Array(10).keys()].map(async (d) =>
      Number(await this.byTestId(`probability-${d}`).getAttribute("data-value"))));
  }
}

/** A "1" and a "0", in pad fractions. */
export const ONE = [[0.5, 0.15], [0.5, 0.85]];
export const ZERO = [...Array(25).keys()].map((i) => {
  const t = (i / 24) * 2 * Math.PI;
  return [0.5 + 0.22 * Math.sin(t), 0.5 - 0.33 * Math.cos(t)];
});

/** Text of a data-testid element as a number (NaN when it is "–"). */
export async function numberIn(lab, id) {
  return Number.parseFloat((await lab.byTestId(id).textContent()).replace("%", ""));
}

/** Polls `read` until `ok(value)` holds; returns the value. */
export async function until(read, ok, { timeout = 120_000, every = 250, what = "condition" } = {}) {
  const deadline = Date.now() + timeout;
  let value;
  while (Date.now() < deadline) {
    value = await read();
    if (ok(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, every));
  }
  throw new Error(`${what} not reached within ${timeout} ms (last: ${JSON.stringify(value)})`);
}

/** Records main-thread tasks longer than 50 ms (the Long Tasks API) from page start. */
export async function watchLongTasks(page) {
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__longTasks.push({ start: entry.startTime, duration: entry.duration });
    }).observe({ type: "longtask", buffered: true });
  });
}
