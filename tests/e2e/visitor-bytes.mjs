// What a visitor downloads, place by place, from the release build served as static hosts serve
// it (gzip, with validators), counted by the server as it sends (not a test file:
// scripts/test.sh runs it, and so can anyone):
//   (cd tests/e2e && node visitor-bytes.mjs [--query ?backend=cpu] [--gate] [--dist DIR])
// The visitor arrives (and the page, once quiet, times WebGPU against the CPU where it can),
// draws a one, reads the story, trains a few steps and stops, then opens the experiments and
// waits for the explanation. Prints, for each of those, every file the
// server sent (gzip bytes), then the wasm and JS of the whole visit and each file sent twice.
// With --gate it exits 1 when the visit's wasm and JS pass 4,500,000 bytes, the first load
// (every file) passes 2,300,000, or a file is sent twice.
import { parseArgs } from "node:util";
import { DIST, LabPage, ONE, launch, numberIn, serve, until } from "./support.mjs";

const { values: options } = parseArgs({
  options: {
    query: { type: "string", default: "" },
    dist: { type: "string", default: DIST },
    gate: { type: "boolean", default: false },
  },
});
const MAX_CODE_BYTES = 4_500_000;
const MAX_FIRST_LOAD_BYTES = 2_300_000;

const server = await serve(options.dist, { staticHost: true });
const browser = await launch();
const stages = [];
let counted = 0;
/** Closes the stage `name`: what the server sent since the last one. */
function stage(name) {
  stages.push({ name, files: server.sent.slice(counted) });
  counted = server.sent.length;
}
/** The worker that trains and explains: its loader, its script and its wasm, either build. */
const TRIAL_PATH = /^\/worker(_fma)?(_loader\.js|\.js|_bg\.wasm)$/;

/**
 * What the page said of its WebGPU trial once it is over (its timings, or why it ran none), or
 * null where it runs none: a backend asked for in the address, or a browser without WebGPU.
 */
async function gpuTrial(lab) {
  if (/[?&]backend=/.test(options.query) || !(await lab.page.evaluate(() => "gpu" in navigator))) return null;
  const said = await until(
    () => lab.page.evaluate(() => ["backend-timings", "backend-note"].map((id) => document.querySelector(`[data-testid="${id}"]`)?.textContent ?? null)),
    ([timings, note]) => (timings !== null && !timings.endsWith("…")) || (timings === null && note?.startsWith("On the CPU")),
    { what: "the WebGPU trial over", timeout: 300_000 },
  );
  return said[0] ?? said[1];
}

/** Waits until the server has sent nothing for `quiet` ms. */
async function quiet(ms = 3000) {
  let seen = -1;
  while (seen !== server.sent.length) {
    seen = server.sent.length;
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

try {
  const lab = new LabPage(await browser.newPage());
  await lab.open(`${server.url}${options.query}`);
  await lab.settledPrediction();
  const trial = await gpuTrial(lab);
  await quiet();
  // The page, once interactive and quiet, times WebGPU against the CPU in the worker that
  // trains and explains, where the browser has WebGPU and no backend was asked for: that worker
  // is the trial's, not the first load's, and comes 3 s or so after the model, as the server
  // may or may not have been quiet for 3 s: its files are told apart by name, not by time.
  const arrival = server.sent.slice(counted);
  const trialFiles = trial ? arrival.filter((file) => TRIAL_PATH.test(file.path)) : [];
  stages.push({ name: "arrive (the first load)", files: arrival.filter((file) => !trialFiles.includes(file)) });
  stages.push({ name: `time WebGPU against the CPU, once the page is quiet (${trial ?? "no trial: no WebGPU, or a backend asked for"})`, files: trialFiles });
  counted = server.sent.length;

  await lab.stroke(ONE);
  await lab.settledPrediction();
  await quiet();
  stage("draw a one");

  await lab.page.locator(".story-panel").scrollIntoViewIfNeeded();
  await until(() => lab.page.locator(".story-panel").getAttribute("data-ready"), (r) => r === "true", { what: "the story told" });
  await quiet();
  stage("read the story");

  await lab.place("train");
  await lab.byTestId("train-button").click();
  await until(() => numberIn(lab, "training-step"), (s) => s >= 2, { what: "step 2", timeout: 300_000 });
  await lab.byTestId("stop-button").click();
  await until(() => lab.byTestId("run-state").textContent(), (s) => s === "stopped", { what: "stopped" });
  await quiet();
  stage("train two steps, stop");

  await lab.place("experiments");
  await until(() => lab.byTestId("explanations").getAttribute("data-state"), (s) => s === "ready", { what: "an explanation", timeout: 300_000 });
  await quiet();
  stage("open the experiments");
} finally {
  await browser.close();
  server.close();
}

const isCode = (path) => /\.(wasm|js)$/.test(path);
const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;
const sum = (files) => files.reduce((total, file) => total + file.bytes, 0);
let code = 0;
for (const { name, files } of stages) {
  const sent = files.filter((file) => file.status === 200);
  code += sum(sent.filter((file) => isCode(file.path)));
  console.log(`\n${name}: ${kB(sum(sent))} (wasm and JS ${kB(sum(sent.filter((file) => isCode(file.path))))})`);
  const byPath = new Map();
  for (const file of sent) byPath.set(file.path, (byPath.get(file.path) ?? 0) + file.bytes);
  const largest = [...byPath].sort((a, b) => b[1] - a[1]);
  for (const [path, bytes] of largest.filter(([, bytes]) => bytes >= 10_000)) console.log(`  ${kB(bytes).padStart(10)}  ${path}`);
  const small = largest.filter(([, bytes]) => bytes < 10_000);
  if (small.length) console.log(`  ${kB(sum(small.map(([, bytes]) => ({ bytes })))).padStart(10)}  ${small.length} files under 10 kB`);
}
const firstLoad = sum(stages[0].files);
const times = new Map();
// By address: a worker's loader is started once per role (`?role=gpu`, `?role=train`), 70 bytes.
for (const file of server.sent.filter((file) => file.status === 200)) times.set(file.url, (times.get(file.url) ?? 0) + 1);
const twice = [...times].filter(([, count]) => count > 1).map(([path, count]) => `${path} (${count} times)`);
console.log(`\nthe visit's wasm and JS: ${code} bytes gzip (at most ${MAX_CODE_BYTES}); the first load: ${firstLoad} bytes (at most ${MAX_FIRST_LOAD_BYTES})`);
console.log(`sent more than once: ${twice.length ? twice.join(", ") : "none"}`);
if (options.gate && (code > MAX_CODE_BYTES || firstLoad > MAX_FIRST_LOAD_BYTES || twice.length)) {
  console.error("over what a visit may fetch");
  process.exitCode = 1;
}
