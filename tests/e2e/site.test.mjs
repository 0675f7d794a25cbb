// End-to-end: the built site as a static host serves it, under a sub-path, and offline after
// one visit (its service worker, www/sw.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { DIST, LabPage, ONE, launch, numberIn, serve, until } from "./support.mjs";

const BASE = "/some/path/";

/** A lab in a context of its own with the service worker allowed, served under BASE. */
async function openUnderBase(browser, server, query = "?backend=cpu") {
  const context = await browser.newContext({ serviceWorkers: "allow" });
  const page = await context.newPage();
  const outside = [];
  page.on("response", (response) => {
    const path = new URL(response.url()).pathname;
    if (!path.startsWith(BASE)) outside.push(path);
  });
  const lab = new LabPage(page);
  await lab.open(`${server.url}${query}`);
  return { context, page, lab, outside };
}

/** Trains from Train, in the training place, until step `steps`, then stops; returns the step
 * it stopped at. */
async function trainAndStop(lab, steps) {
  await lab.place("train");
  await lab.byTestId("train-button").click();
  await until(() => numberIn(lab, "training-step"), (s) => s >= steps, { what: `step ${steps}`, timeout: 300_000 });
  await lab.byTestId("stop-button").click();
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "stopped", { what: "stopped" });
  return numberIn(lab, "training-step");
}

test(`served under ${BASE}: every file is found beside the page, and it draws and trains`, async () => {
  const server = await serve(DIST, { base: BASE });
  const browser = await launch();
  try {
    const { page, lab, outside } = await openUnderBase(browser, server);
    await lab.stroke(ONE);
    assert.equal(await lab.settledPrediction(), "1");
    await trainAndStop(lab, 5);
    // The workers and the data came from under the path too.
    // Chromium has relaxed SIMD: the worker with fused multiply-adds, never the plain one.
    const workers = page.workers().map((w) => new URL(w.url()).pathname);
    assert.ok(workers.includes(`${BASE}worker_fma_loader.js`), `the worker beside the page: ${workers}`);
    assert.ok(!workers.includes(`${BASE}worker_loader.js`), `only the fused worker: ${workers}`);
    assert.ok(Number(await lab.byTestId("data-progress").getAttribute("data-value")) > 0, "data under the path");
    assert.deepEqual(outside, [], "nothing asked for outside the path");
  } finally {
    await browser.close();
    server.close();
  }
});

test("after one visit the page is installable, and with the network gone it reloads, reads digits, shows its app's manifest and icons, and trains", async () => {
  const server = await serve(DIST, { base: BASE });
  const browser = await launch();
  try {
    const { page, lab } = await openUnderBase(browser, server);
    const offline = lab.byTestId("offline");
    await until(() => offline.getAttribute("data-state"), (s) => s === "ready", { what: "kept for offline use", timeout: 300_000 });
    assert.match(await offline.textContent(), /Works offline/);
    // Installable: Chromium finds nothing missing (a manifest with a name, icons, a start URL
    // and standalone display, a service worker that answers offline), and the app is this
    // folder, whatever path it is served under.
    const cdp = await page.context().newCDPSession(page);
    const { installabilityErrors } = await cdp.send("Page.getInstallabilityErrors");
    // A test's browser context is a private window, where Chromium installs nothing: that is
    // the one reason it may give.
    const missing = installabilityErrors.map((e) => e.errorId).filter((id) => id !== "in-incognito");
    assert.deepEqual(missing, [], "installable");
    const declared = await cdp.send("Page.getAppManifest");
    assert.deepEqual(declared.errors, [], "the manifest parses");
    assert.equal(new URL(declared.url).pathname, `${BASE}manifest.webmanifest`);
    // A first run fetches the data; the training worker keeps the chunks.
    await trainAndStop(lab, 3);
    await until(async () => Number(await lab.byTestId("data-progress").getAttribute("data-value")), (v) => v === 1, { what: "every chunk fetched", timeout: 300_000 });

    server.cut();
    // Nothing answers any more.
    await assert.rejects(fetch(server.url), "the server is gone");
    await page.reload();
    await lab.byTestId("model-ready").waitFor({ timeout: 120_000 });
    await lab.place("draw");
    await lab.stroke(ONE);
    assert.equal(await lab.settledPrediction(), "1");
    // The installed app offline: its manifest, its icons (PNGs of the sizes it names), its
    // start URL and scope, the folder the page is in.
    const installed = await page.evaluate(async () => {
      const manifest = await (await fetch("manifest.webmanifest")).json();
      const icons = [];
      for (const icon of manifest.icons) {
        const bytes = new DataView(await (await fetch(icon.src)).arrayBuffer());
        const png = bytes.byteLength > 24 && bytes.getUint32(0) === 0x89504e47;
        icons.push({ ...icon, found: png ? `${bytes.getUint32(16)}x${bytes.getUint32(20)}` : bytes.byteLength > 0 ? "any" : "none" });
      }
      const at = (url) => new URL(url, new URL("manifest.webmanifest", location.href)).pathname;
      return { manifest, icons, start: at(manifest.start_url), scope: at(manifest.scope) };
    });
    assert.equal(installed.manifest.display, "standalone");
    assert.equal(installed.start, BASE);
    assert.equal(installed.scope, BASE);
    for (const icon of installed.icons) assert.equal(icon.found, icon.sizes, `icon ${icon.src} offline`);
    for (const size of ["192x192", "512x512"]) {
      assert.ok(installed.icons.some((i) => i.sizes === size && i.purpose === "any"), `a ${size} icon`);
    }
    assert.ok(installed.icons.some((i) => i.purpose === "maskable"), "a maskable icon");

    // A new run trains on the chunks kept, its worker and data from the service worker. (After
    // the reload no run is under way and no worker is up: nothing to reset.)
    await lab.place("train");
    await until(() => lab.byTestId("run-state").textContent(), (s) => s === "idle", { what: "idle" });
    const stopped = await trainAndStop(lab, 5);
    assert.ok(stopped >= 5, `trained offline to step ${stopped}`);
    assert.equal(await lab.byTestId("training-error").count(), 0);
  } finally {
    await browser.close();
  }
});
