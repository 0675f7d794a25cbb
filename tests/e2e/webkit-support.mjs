// The WebKit side of the e2e tests: Debian's WebKitGTK (its MiniBrowser, the engine of Safari
// and of every iPhone browser) driven through WebKitWebDriver, a W3C WebDriver server, by
// selenium-webdriver; MiniBrowser has no headless mode, so the driver runs under xvfb-run.
// WebDriver classic has no page events: a recorder the test server puts first in every page
// keeps the page's errors, the workers it starts and the files it offers, for the tests to read.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { Builder, Origin } from "selenium-webdriver";
import { servedApp } from "./support.mjs";
import { EngineLab, selector } from "./engine-lab.mjs";

/** Debian's MiniBrowser (package libwebkit2gtk-4.1-0), or `MINIBROWSER`. */
const MINIBROWSER = process.env.MINIBROWSER ?? "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";

/**
 * Run first in every page of the app (support.mjs's `serve` puts it in the HTML): records
 * uncaught errors, unhandled rejections, console errors, errors the page's workers throw up to
 * it, the workers started (their script's URL) and the files offered through a download link
 * (their name and bytes, read from the blob or data URL before the page revokes it; the link
 * itself is not followed, as MiniBrowser under automation would ask where to save).
 */
export const RECORDER = `(() => {
  const record = { errors: [], workers: [], downloads: [] };
  globalThis.__vitlab = record;
  addEventListener("error", (event) => record.errors.push("error: " + event.message));
  addEventListener("unhandledrejection", (event) => record.errors.push("unhandledrejection: " + event.reason));
  const consoleError = console.error;
  console.error = (...args) => { record.errors.push("console.error: " + args.join(" ")); consoleError.apply(console, args); };
  const PageWorker = Worker;
  globalThis.Worker = class extends PageWorker {
    constructor(url, options) {
      super(url, options);
      record.workers.push(String(url));
      this.addEventListener("error", (event) => record.errors.push("worker error: " + (event.message || "(no message)")));
    }
  };
  const blobs = new Map();
  const createObjectURL = URL.createObjectURL;
  URL.createObjectURL = (object) => { const url = createObjectURL(object); blobs.set(url, object); return url; };
  const click = HTMLAnchorElement.prototype.click;
  HTMLAnchorElement.prototype.click = function () {
    if (!this.hasAttribute("download")) return click.call(this);
    const entry = { name: this.download, bytes: null };
    record.downloads.push(entry);
    const blob = blobs.get(this.href);
    const read = blob ? blob.arrayBuffer() : fetch(this.href).then((response) => response.arrayBuffer());
    read.then((buffer) => { entry.bytes = Array.from(new Uint8Array(buffer)); });
  };
})();`;

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * WebKitWebDriver under Xvfb, and one MiniBrowser session on it: the `driver`, and `close()`
 * that ends both. `features` are MiniBrowser's `--features` (e.g. "+WebGPU").
 */
export async function launchWebKit({ features = null, width = 1280, height = 900 } = {}) {
  const port = await freePort();
  const server = spawn("xvfb-run", ["-a", "-s", `-screen 0 ${width + 200}x${height + 200}x24`, "WebKitWebDriver", `--port=${port}`], {
    stdio: ["ignore", "ignore", "inherit"],
    detached: true,
    // Xvfb has no GPU, only Mesa's software OpenGL (llvmpipe): WebKit's web process, painting
    // with Skia on it, crashed on a corrupted heap in 3 of the first 20 runs of this file,
    // while it compiled shaders (a fresh Mesa shader cache brought the crash back), never in
    // the page's code. Skia on the CPU is WebKit's own way for a machine with no usable GPU.
    env: { ...process.env, WEBKIT_SKIA_ENABLE_CPU_RENDERING: "1" },
  });
  const stop = () => {
    try {
      process.kill(-server.pid);
    } catch {
      // Already ended.
    }
  };
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/status`)).ok) break;
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) throw new Error("WebKitWebDriver did not start within 30 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const args = ["--automation", ...(features ? [`--features=${features}`] : [])];
    const driver = await new Builder()
      .usingServer(`http://127.0.0.1:${port}`)
      .withCapabilities({ browserName: "MiniBrowser", "webkitgtk:browserOptions": { binary: MINIBROWSER, args } })
      .build();
    await driver.manage().setTimeouts({ script: 600_000, pageLoad: 300_000 });
    await driver.manage().window().setRect({ width, height });
    return {
      driver,
      version: async () => (await driver.getCapabilities()).get("browserVersion"),
      close: async () => {
        await driver.quit().catch(() => {});
        stop();
      },
    };
  } catch (error) {
    stop();
    throw error;
  }
}

/** As support.mjs's `servedApp`, in WebKit, with [`RECORDER`] in every page. */
export function servedAppInWebKit() {
  return servedApp(launchWebKit, { headScript: RECORDER });
}

/**
 * The lab in WebKit ([`EngineLab`]'s primitives on WebDriver classic). Every lab of a file
 * shares its one browser window: opening one navigates it, closing it leaves the page. Its
 * places and head switches open as [`EngineLab`]'s `place` and `openHeadSwitches` open them,
 * through WebDriver's clicks.
 */
export class WebKitLab extends EngineLab {
  constructor(browser) {
    super();
    this.driver = browser.driver;
  }
  static async open(browser, url, { timeout = 300_000 } = {}) {
    const lab = new WebKitLab(browser);
    await lab.goto(url);
    await lab.waitFor("model-ready", timeout);
    return lab;
  }
  async evaluate(fn, ...args) {
    return this.driver.executeScript(`return (${fn}).apply(null, arguments)`, ...args);
  }
  async clickAt(css) {
    const element = await this.driver.findElement({ css });
    await this.driver.executeScript("arguments[0].scrollIntoView({ block: 'center' })", element);
    await element.click();
  }
  async drag([first, ...rest]) {
    const at = ([x, y]) => ({ x, y, origin: Origin.VIEWPORT, duration: 15 });
    let actions = this.driver.actions().move(at(first)).press();
    for (const point of rest) actions = actions.move(at(point));
    await actions.release().perform();
  }
  async goto(url) {
    await this.driver.get(url);
  }
  async reload() {
    await this.driver.navigate().refresh();
  }
  async close() {
    await this.driver.get("about:blank");
  }
  /** What [`RECORDER`] has kept in this page: `errors`, `workers`, `downloads`. */
  async recorded() {
    return this.evaluate(() => globalThis.__vitlab ?? { errors: ["no recorder in this page"], workers: [], downloads: [] });
  }
  /** The roles of the workers the page started (`?role=`), in order. */
  async workerRoles() {
    return (await this.recorded()).workers.map((url) => new URL(url, "http://page/").searchParams.get("role"));
  }
  /** The file names of the scripts the page started workers from. */
  async workerScripts() {
    return (await this.recorded()).workers.map((url) => new URL(url, "http://page/").pathname.split("/").pop());
  }
  /** Clicks `id` and returns the file the page offers: its name and bytes. */
  async saved(id, timeout = 60_000) {
    const before = (await this.recorded()).downloads.length;
    await this.click(id);
    const deadline = Date.now() + timeout;
    while (Date.now() < deadline) {
      const downloads = (await this.recorded()).downloads;
      const offered = downloads[before];
      if (offered?.bytes) return { name: offered.name, bytes: Buffer.from(offered.bytes) };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`no file offered for ${selector(id)} within ${timeout} ms`);
  }
}

/**
 * A [`WebKitLab`] in a window of its own of the one session (a second tab on the same
 * profile): every primitive switches to its window first.
 */
export class WebKitWindowLab extends WebKitLab {
  constructor(browser, handle) {
    super(browser);
    this.handle = handle;
  }
  /** A new window (`tab`), at `url`, once the model is ready there. */
  static async openWindow(browser, url, { timeout = 300_000 } = {}) {
    await browser.driver.switchTo().newWindow("tab");
    const lab = new WebKitWindowLab(browser, await browser.driver.getWindowHandle());
    await lab.goto(url);
    await lab.waitFor("model-ready", timeout);
    return lab;
  }
  /** The window the session is in now, as a lab. */
  static async current(browser) {
    return new WebKitWindowLab(browser, await browser.driver.getWindowHandle());
  }
  async here() {
    await this.driver.switchTo().window(this.handle);
  }
  async evaluate(fn, ...args) {
    await this.here();
    return super.evaluate(fn, ...args);
  }
  async clickAt(css) {
    await this.here();
    return super.clickAt(css);
  }
  async drag(points) {
    await this.here();
    return super.drag(points);
  }
  async goto(url) {
    await this.here();
    return super.goto(url);
  }
  async reload() {
    await this.here();
    return super.reload();
  }
  /** Closes this window and goes back to `to`'s. */
  async closeWindow(to) {
    await this.here();
    await this.driver.close();
    await to.here();
  }
}
