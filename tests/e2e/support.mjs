// Shared by the e2e tests and the benchmark: a static server for dist/, Chromium with
// WebGPU, and a page object for the lab.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { gzipSync } from "node:zlib";

const TYPES = {
  ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm",
  ".css": "text/css", ".json": "application/json", ".svg": "image/svg+xml",
  ".ico": "image/x-icon", ".png": "image/png", ".webmanifest": "application/manifest+json",
};
/** What static hosts (GitHub Pages, Netlify, Cloudflare) compress: text, wasm and SVG. */
const COMPRESSED = new Set(["text/html", "text/javascript", "application/wasm", "text/css", "application/json", "application/manifest+json", "image/svg+xml"]);

/**
 * Serves `root` on a free loopback port under `base` (a static host's sub-path: anything
 * outside it is a 404); resolves to { url, close, cut }. `cut()` takes the network away: the
 * server stops listening and drops every open connection. With `staticHost`, files go out as
 * GitHub Pages sends them: what static hosts compress gzipped to a browser that accepts it,
 * and kept fresh in the browser's cache for ten minutes (`max-age=600`, with a validator).
 * With `headScript`, every HTML page runs that script first (a test's recorder, where the
 * driver has no way to run one before the page's own).
 */
export async function serve(root, { base = "/", staticHost = false, headScript = null } = {}) {
  const zipped = new Map();
  // What went out, in order: each answer's path (and address with its query), status and body
  // bytes as sent (gzip where gzipped; none for a 304).
  const sent = [];
  const server = createServer(async (request, response) => {
    const pathname = decodeURIComponent(new URL(request.url, "http://x").pathname);
    if (!pathname.startsWith(base)) return response.writeHead(404).end();
    let file = join(root, normalize(`/${pathname.slice(base.length)}`));
    try {
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      let body = await readFile(file);
      const type = TYPES[extname(file)] ?? "application/octet-stream";
      if (headScript && type === "text/html") {
        body = Buffer.from(body.toString("utf8").replace("<head>", `<head><script>${headScript}</script>`));
      }
      const headers = { "content-type": type };
      if (staticHost) {
        const { mtime, size } = await stat(file);
        headers["cache-control"] = "max-age=600";
        headers["last-modified"] = mtime.toUTCString();
        headers.etag = `"${mtime.getTime().toString(16)}-${size.toString(16)}"`;
        if (request.headers["if-none-match"] === headers.etag) {
          sent.push({ path: pathname, url: request.url, status: 304, bytes: 0 });
          return response.writeHead(304, headers).end();
        }
      }
      if (staticHost && COMPRESSED.has(type) && /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")) {
        if (!zipped.has(file)) zipped.set(file, gzipSync(body, { level: 9 }));
        body = zipped.get(file);
        headers["content-encoding"] = "gzip";
        headers.vary = "accept-encoding";
      }
      sent.push({ path: pathname, url: request.url, status: 200, bytes: body.length });
      response.writeHead(200, { ...headers, "content-length": body.length });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const cut = () => {
    server.close();
    server.closeAllConnections();
  };
  return { url: `http://127.0.0.1:${server.address().port}${base}`, close: () => server.close(), cut, sent };
}

/**
 * Counts what reaches the GPU, in whichever scope runs it: compute dispatches, queue submits,
 * buffer readbacks (`mapAsync`) and compute pipelines created. Evaluated before any script of
 * the page (an init script) and of every worker (prepended to the worker's loader).
 */
export const GPU_COUNTER = `(() => {
  if (globalThis.__gpuCounts) return;
  const counts = { dispatches: 0, submits: 0, readbacks: 0, pipelines: 0 };
  globalThis.__gpuCounts = counts;
  const count = (type, name, key) => {
    const proto = globalThis[type]?.prototype;
    if (!proto || typeof proto[name] !== "function") return;
    const original = proto[name];
    proto[name] = function (...args) { counts[key]++; return original.apply(this, args); };
  };
  count("GPUComputePassEncoder", "dispatchWorkgroups", "dispatches");
  count("GPUComputePassEncoder", "dispatchWorkgroupsIndirect", "dispatches");
  count("GPUQueue", "submit", "submits");
  count("GPUBuffer", "mapAsync", "readbacks");
  count("GPUDevice", "createComputePipeline", "pipelines");
  count("GPUDevice", "createComputePipelineAsync", "pipelines");
})();`;

/**
 * Faults a test can cause in a worker's GPU: every device the worker gets is kept in
 * `globalThis.__gpuDevices` (so a test can destroy it: a lost device); with
 * `globalThis.__rejectShaders` set first every shader handed to the GPU is invalid WGSL (a
 * shader the GPU rejects); with `globalThis.__lateErrorsMs` set, an error no scope caught
 * reaches the device's handler that many milliseconds late (as on a busy machine, where the
 * browser's error task comes after everything else queued).
 */
export const GPU_FAULTS = `(() => {
  globalThis.__gpuDevices = [];
  const requestDevice = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = async function (...args) {
    const device = await requestDevice.apply(this, args);
    globalThis.__gpuDevices.push(device);
    return device;
  };
  const createShaderModule = GPUDevice.prototype.createShaderModule;
  GPUDevice.prototype.createShaderModule = function (descriptor) {
    if (!globalThis.__rejectShaders) return createShaderModule.call(this, descriptor);
    return createShaderModule.call(this, { ...descriptor, code: "@compute fn broken( {" });
  };
  const handler = Object.getOwnPropertyDescriptor(GPUDevice.prototype, "onuncapturederror");
  Object.defineProperty(GPUDevice.prototype, "onuncapturederror", {
    ...handler,
    set(told) {
      const late = globalThis.__lateErrorsMs;
      handler.set.call(this, told && late ? (event) => setTimeout(() => told(event), late) : told);
    },
  });
})();`;

/**
 * Runs `scripts` first in every worker the pages of `context` start, by prepending them to the
 * worker's loader (fetched through the context, so the workers' own requests are seen too).
 * Call it once per context.
 */
export async function prependToWorkers(context, ...scripts) {
  await context.route(/_loader\.js(\?.*)?$/, async (route) => {
    const response = await route.fetch();
    const body = `${scripts.join("\n")}\n${await response.text()}`;
    await route.fulfill({ response, body, headers: { ...response.headers(), "content-length": String(Buffer.byteLength(body)) } });
  });
}

/** Installs [`GPU_COUNTER`] in `page` and in the workers it starts. */
export async function countGpu(page) {
  await page.addInitScript(GPU_COUNTER);
  await prependToWorkers(page.context(), GPU_COUNTER);
}

/** The worker running the page's model on the GPU, if one runs. */
export function gpuWorker(page) {
  return page.workers().find((worker) => new URL(worker.url()).searchParams.get("role") === "gpu");
}

/**
 * GPU counts so far, per scope (`page` and each worker by its script name) and in `total` (all
 * but the explaining worker's).
 * A worker that has ended no longer answers: its counts are gone with it.
 */
export async function gpuCounts(page) {
  const zero = { dispatches: 0, submits: 0, readbacks: 0, pipelines: 0 };
  const read = async (scope) => {
    try {
      return (await scope.evaluate(() => globalThis.__gpuCounts && { ...globalThis.__gpuCounts })) ?? { ...zero };
    } catch {
      return { ...zero };
    }
  };
  const scopes = { page: await read(page) };
  for (const worker of page.workers()) {
    const name = new URL(worker.url()).pathname.split("/").pop() + new URL(worker.url()).search;
    scopes[name] = await read(worker);
  }
  // The explaining worker's work follows a drawing once it settles; it is not the drawing's.
  const total = { ...zero };
  for (const [name, counts] of Object.entries(scopes)) {
    if (name.endsWith("?role=explain")) continue;
    for (const key of Object.keys(zero)) total[key] += counts[key];
  }
  return { ...scopes, total };
}

/** Waits until the GPU counts stand still for `quiet` ms (or `timeout` passes); returns them. */
export async function settleGpu(page, { quiet = 2000, timeout = 300_000 } = {}) {
  const deadline = Date.now() + timeout;
  let last = await gpuCounts(page);
  let since = Date.now();
  while (Date.now() < deadline) {
    await page.waitForTimeout(250);
    const now = await gpuCounts(page);
    if (JSON.stringify(now.total) !== JSON.stringify(last.total)) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quiet) {
      return now;
    }
  }
  return last;
}

/** `after - before` for each count of [`gpuCounts`]' `total`. */
export function gpuDelta(before, after) {
  return Object.fromEntries(Object.keys(after.total).map((key) => [key, after.total[key] - (before.total[key] ?? 0)]));
}

/**
 * Chromium with WebGPU. Its pages and contexts run without service workers unless a test asks
 * for them (`serviceWorkers: "allow"`): Playwright's routes, which many tests use to cause
 * faults, do not see what a service worker answers. site.test.mjs tests the service worker.
 */
export async function launch() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--enable-unsafe-webgpu", "--no-sandbox", "--disable-dev-shm-usage"],
  });
  const newContext = browser.newContext.bind(browser);
  const newPage = browser.newPage.bind(browser);
  browser.newContext = (options = {}) => newContext({ serviceWorkers: "block", ...options });
  browser.newPage = (options = {}) => newPage({ serviceWorkers: "block", ...options });
  return browser;
}

/** The labs' pages still open, whose words a wait that times out adds to its message. */
const openLabs = new Set();

/** What each open lab's page says of its run: its state, error and notices, a line each. */
async function whatTheLabsSay() {
  const said = [];
  for (const page of openLabs) {
    if (page.isClosed()) {
      openLabs.delete(page);
      continue;
    }
    const words = await Promise.race([new Promise((resolve) => setTimeout(resolve, 5_000, null)), page
      .evaluate(() => ["run-state", "training-error", "runs-error"]
        .map((id) => document.querySelector(`[data-testid="${id}"]`)?.textContent)
        .concat(document.querySelector(".notices")?.textContent)
        .filter(Boolean)
        .join(" | "))
      .catch(() => null)]);
    if (words) said.push(`${page.url()}: ${words}`);
  }
  return said.length ? `; the labs say:\n${said.join("\n")}` : "";
}

/** The draw-and-classify page, through its data-testid hooks. */
export class LabPage {
  constructor(page) {
    this.page = page;
    openLabs.add(page);
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
  /** The CPU workers the training panel says train the run: 1 where it says none. */
  async cpuWorkers() {
    const said = this.byTestId("cpu-workers");
    return (await said.count()) ? Number((await said.textContent()).match(/(\d+) workers/)[1]) : 1;
  }
  /** Opens a place through the navigation bar, as a person would, and waits until it is shown. */
  async place(name) {
    // A build from before the places (VITLAB_DIST at an older commit, to show a new test
    // failing there) has every card on its one page: nothing to open.
    if (!(await this.byTestId("places").count())) return;
    await this.byTestId(`nav-${name}`).click();
    await this.page.locator(`main[data-place="${name}"]`).waitFor();
  }
  /** Opens the head switches (a <details>) if they are closed. */
  async openHeadSwitches() {
    const switches = this.byTestId("head-switches");
    if ((await switches.getAttribute("open")) === null) await switches.locator("summary").click();
    await this.page.locator('[data-testid="head-switches"][open]').waitFor();
  }
  /** The pad scrolled into view, and a point in pad fractions (0..1) to viewport pixels. */
  async padToViewport() {
    const pad = this.byTestId("draw-canvas");
    await pad.scrollIntoViewIfNeeded();
    const box = await pad.boundingBox();
    return ([x, y]) => [box.x + x * box.width, box.y + y * box.height];
  }
  /** The button pressed at the first point (viewport pixels), moved through the others in
   * `steps` mouse events each, and released. */
  async drag([first, ...rest], steps) {
    await this.page.mouse.move(...first);
    await this.page.mouse.down();
    for (const point of rest) await this.page.mouse.move(...point, { steps });
    await this.page.mouse.up();
  }
  /** Draws a polyline given in pad fractions (0..1), four steps between points. */
  async stroke(points) {
    await this.drag(points.map(await this.padToViewport()), 4);
  }
  /** Draws each polyline of `lines` in turn, straight from point to point, the pad's box read
   * once: a person's handwriting row by row (handwriting-digits.mjs), in 38 s for twenty digits
   * where a `stroke` each, four steps between points, took 82 s (anti-aliasing moves 3 % of the
   * pixels by 18/255 at most; the fine-tuning reads the same). */
  async drawLines(lines) {
    const at = await this.padToViewport();
    for (const line of lines) await this.drag(line.map(at), 1);
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
  /** Classifications of drawings so far (the latency line's `data-runs`). */
  async classifications() {
    const latency = this.byTestId("latency");
    const runs = await latency.getAttribute("data-runs");
    if (runs !== null) return Number(runs);
    // Builds before `data-runs`: the line's own count, which stops at 200.
    return Number((await latency.textContent()).match(/\((\d+) runs\)/)?.[1] ?? 0);
  }
  /** Clicks the button `id` and returns the file the page offers: its name and bytes. */
  async saved(id) {
    const button = this.byTestId(id);
    await button.scrollIntoViewIfNeeded();
    const [download] = await Promise.all([this.page.waitForEvent("download"), button.click()]);
    return { name: download.suggestedFilename(), bytes: await readFile(await download.path()) };
  }
  /** A saved CSV's rows, each split at its commas. */
  async savedCsv(id) {
    const { bytes } = await this.saved(id);
    return bytes.toString("utf8").trim().split("\n").map((row) => row.split(","));
  }
  /**
   * A saved PNG as the browser decodes it: its size, and how many of its pixels are within
   * 12 levels of each CSS colour in `colours` (e.g. "rgb(59, 82, 139)").
   */
  async savedPicture(id, colours = []) {
    const { name, bytes } = await this.saved(id);
    const decoded = await this.page.evaluate(async ([base64, colours]) => {
      const image = new Image();
      image.src = `data:image/png;base64,${base64}`;
      await image.decode();
      const canvas = document.createElement("canvas");
      [canvas.width, canvas.height] = [image.width, image.height];
      const context = canvas.getContext("2d");
      context.drawImage(image, 0, 0);
      const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
      const wanted = colours.map((c) => c.match(/\d+/g).slice(0, 3).map(Number));
      const counts = wanted.map(() => 0);
      const distinct = new Set();
      for (let i = 0; i < pixels.length; i += 4) {
        distinct.add((pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2]);
        wanted.forEach(([r, g, b], k) => {
          if (Math.abs(pixels[i] - r) <= 12 && Math.abs(pixels[i + 1] - g) <= 12 && Math.abs(pixels[i + 2] - b) <= 12) counts[k] += 1;
        });
      }
      return { width: image.width, height: image.height, counts, distinct: distinct.size };
    }, [bytes.toString("base64"), colours]);
    return { name, png: bytes.subarray(1, 4).toString("latin1") === "PNG", ...decoded };
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
  throw new Error(`${what} not reached within ${timeout} ms (last: ${JSON.stringify(value)})${await whatTheLabsSay()}`);
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

/** How many times the race cases (runs.test.mjs, handwriting.test.mjs's two tabs) go round.
 * Each case forces its window open (a held-back save, two clicks at once) rather than hoping to
 * land in it, so one round proves the behaviour and the second that it holds again after a
 * Reset, in a tab that has been through it (a third added ~130 s of the cold suite's test time,
 * runs.test.mjs's cases 116 -> 224 s and the two tabs' 57 -> 81 s, and nothing the second does
 * not show); `VITLAB_E2E_LOOPS=10` soaks them. */
export const LOOPS = Math.max(1, Number(process.env.VITLAB_E2E_LOOPS ?? 2) || 2);
/** The release build the tests run against: `VITLAB_DIST`, or the repository's `dist/`. */
export const DIST = process.env.VITLAB_DIST ?? fileURLToPath(new URL("../../dist", import.meta.url));

/**
 * For a test file: the release build served (with `serve`'s options `serving`) and a browser
 * launched (by `launchBrowser`, Chromium unless given) before its tests, both closed after
 * them. Read `server` and `browser` from it inside the tests.
 */
export function servedApp(launchBrowser = launch, serving = {}) {
  const app = {};
  before(async () => {
    app.server = await serve(DIST, serving);
    app.browser = await launchBrowser();
  });
  after(async () => {
    await app.browser?.close();
    app.server?.close();
  });
  return app;
}

/**
 * The page's run database (IndexedDB `vitlab-runs`), read in `page`: each store's entries by
 * run id. Checkpoints come as their run's state (step, plan) read from the safetensors header,
 * weights and other bytes as their length. Nothing is opened where the page made no database
 * (opening would make an empty one the page could not upgrade).
 */
export async function runDatabase(page) {
  return page.evaluate(async () => {
    if (!(await indexedDB.databases()).some((d) => d.name === "vitlab-runs")) return null;
    const db = await new Promise((resolve, reject) => {
      const request = indexedDB.open("vitlab-runs");
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    const read = (name) => new Promise((resolve, reject) => {
      const store = db.transaction(name).objectStore(name);
      const keys = store.getAllKeys();
      const values = store.getAll();
      values.onsuccess = () => resolve(keys.result.map((key, i) => [key, values.result[i]]));
      values.onerror = () => reject(values.error);
    });
    const state = (bytes) => {
      const length = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
      const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
      return JSON.parse(header.__metadata__["vitlab.session"]);
    };
    const found = { records: {}, checkpoints: {}, weights: {}, deleted: [], bytes: { records: 0, checkpoints: 0, weights: 0 } };
    for (const [id, json] of await read("records")) {
      found.records[id] = JSON.parse(json);
      found.bytes.records += json.length;
    }
    for (const [id, bytes] of await read("checkpoints")) {
      const { step, plan } = state(bytes);
      found.checkpoints[id] = { step, seed: plan.seed };
      // A fine-tuning's checkpoint holds the person's digits: each as its pixels joined.
      if (plan.mix) {
        const digits = [];
        for (let at = 0; at + 784 <= plan.mix.pixels.length; at += 784) digits.push(plan.mix.pixels.slice(at, at + 784).join(","));
        found.checkpoints[id].digits = digits;
      }
      found.bytes.checkpoints += bytes.length;
    }
    for (const [id, bytes] of await read("weights")) {
      found.weights[id] = bytes.length;
      found.bytes.weights += bytes.length;
    }
    found.deleted = (await read("deleted")).map(([id]) => id).filter((id) => typeof id === "number");
    db.close();
    return found;
  });
}

/** Each run's checkpoint in the page's database, by id: its step and seed. */
export async function checkpoints(page) {
  return (await runDatabase(page))?.checkpoints ?? {};
}

/**
 * Rewrites run `run`'s checkpoint in the page's database with `plan`'s fields merged into the
 * plan in its header (as hostile storage might); whether it was there (and at `step`, when
 * given).
 */
export async function editCheckpoint(page, run, plan, step) {
  return page.evaluate(async ({ run, plan, step }) => {
    const db = await new Promise((resolve, reject) => {
      const request = indexedDB.open("vitlab-runs");
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    const store = () => db.transaction("checkpoints", "readwrite").objectStore("checkpoints");
    const bytes = await new Promise((resolve) => {
      const request = store().get(Number(run));
      request.onsuccess = () => resolve(request.result);
    });
    if (!bytes) return false;
    const length = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
    const state = JSON.parse(header.__metadata__["vitlab.session"]);
    if (step !== undefined && step !== null && state.step !== step) return false;
    Object.assign(state.plan, plan);
    header.__metadata__["vitlab.session"] = JSON.stringify(state);
    let json = JSON.stringify(header);
    json += " ".repeat((8 - (json.length % 8)) % 8);
    const head = new TextEncoder().encode(json);
    const out = new Uint8Array(8 + head.length + bytes.length - 8 - length);
    new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
    out.set(head, 8);
    out.set(bytes.subarray(8 + length), 8 + head.length);
    await new Promise((resolve, reject) => {
      const request = store().put(out, Number(run));
      request.onsuccess = resolve;
      request.onerror = () => reject(request.error);
    });
    db.close();
    return true;
  }, { run, plan, step });
}

/** `vit`, as `cargo test --release` (scripts/test.sh, before these tests) builds it. */
export const VIT = join(process.env.CARGO_TARGET_DIR ?? join(fileURLToPath(new URL("../..", import.meta.url)), "target"), "release", "vit");

/** `bytes` (a safetensors file) with `edit` applied to the run state in its header. */
function withState(bytes, edit) {
  const length = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + length).toString());
  const state = JSON.parse(header.__metadata__["vitlab.session"]);
  edit(state);
  header.__metadata__["vitlab.session"] = JSON.stringify(state);
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (json.length % 8)) % 8);
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([size, Buffer.from(json), bytes.subarray(8 + length)]);
}

/**
 * A checkpoint and its weights from `vit train`: 10 steps of a one-block model, its plan
 * widened to `epochs` epochs of 10 steps so that it has steps left to continue.
 */
export async function oldRun(seed, epochs = 2) {
  const dir = await mkdtemp(join(tmpdir(), "vitlab-old-"));
  const out = join(dir, "run.safetensors");
  execFileSync(VIT, [
    "train", "--preset", "seed", "--depth", "1", "--dim", "32", "--heads", "4", "--mlp-dim", "64", "--batch-size", "32",
    "--epochs", "1", "--limit", "320", "--seed", String(seed), "--threads", "1", "--data", fileURLToPath(new URL("../../www/mnist", import.meta.url)), "--out", out,
  ], { stdio: ["ignore", "ignore", "inherit"] });
  const checkpoint = withState(await readFile(`${out}.ckpt`), (state) => { state.plan.epochs = epochs; });
  return { checkpoint: [...checkpoint], weights: [...(await readFile(out))] };
}

/**
 * Seeds the stores the pages before the database wrote (the runs table's Cache Storage and
 * the one saved run before it), as they wrote them, in `page` (at a file of the app's origin:
 * the old keys are relative to it, as they were to the app). Playwright's and puppeteer's
 * pages alike.
 */
export async function seedOldStores(page, runs, legacy) {
  await page.evaluate(async ({ runs, legacy }) => {
    const header = (bytes) => {
      const length = Number(new DataView(bytes.buffer).getBigUint64(0, true));
      return JSON.parse(JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length))).__metadata__["vitlab.session"]);
    };
    const table = await caches.open("vitlab-runs-v1");
    for (const run of runs) {
      const checkpoint = new Uint8Array(run.checkpoint);
      const state = header(checkpoint);
      const record = {
        id: run.id, plan: state.plan, backend: "Cpu", step: state.step, total_steps: state.plan.epochs * 10, best_test: null, last_test: null,
        history: { steps: [], evals: [] }, has_weights: true, has_checkpoint: true,
      };
      await table.put(`runs/${run.id}.json`, new Response(JSON.stringify(record)));
      await table.put(`runs/${run.id}.ckpt`, new Response(checkpoint));
      await table.put(`runs/${run.id}.safetensors`, new Response(new Uint8Array(run.weights)));
    }
    await table.put("runs/index.json", new Response(JSON.stringify(runs.map((run) => run.id))));
    if (legacy) {
      const old = await caches.open("vitlab-training-v1");
      await old.put("saved-run/state.json", new Response(JSON.stringify({ slot: 1 })));
      await old.put("saved-run/model-b.bin", new Response(new Uint8Array(legacy.checkpoint)));
    }
  }, { runs, legacy });
}


/**
 * Draws `strokes` on the pad of `lab` (a Playwright `LabPage`, or Firefox's or WebKit's page
 * object) and checks the settled reading: `digit`, with probabilities that sum to 1.
 */
export async function expectReading(lab, strokes, digit) {
  for (const stroke of strokes) await lab.stroke(stroke);
  assert.equal(await lab.settledPrediction(), digit, `a drawn ${digit}`);
  const total = (await lab.probabilities()).reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(total - 1) < 1e-3, `probabilities sum to ${total}`);
}
