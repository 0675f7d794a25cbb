// Benchmark (not a test): page load to model-ready, drawing-to-prediction latency, and what
// reaches the GPU (dispatches, submits, readbacks, pipelines) at start-up and per
// classification, on each backend. Two latencies: the page's own line (each drawing, from its
// input; builds before the model moved to a worker counted from when the page got round to the
// input, which hid the time the page was blocked), and, measured from outside the app and so
// comparable across builds, the stroke's last input event to the prediction being current
// again (`stroke_end`). Run after `trunk build --release`:
//   (cd tests/e2e && npm ci && node bench-draw.mjs [--backends cpu,webgpu,auto] [--rounds 3]
//    [--weights pretrained/cnn-teacher.safetensors])
// One JSON line per backend.
import { parseArgs } from "node:util";
import { DIST, LabPage, ZERO, countGpu, gpuCounts, gpuDelta, launch, serve, settleGpu } from "./support.mjs";

const { values: options } = parseArgs({
  options: {
    backends: { type: "string", default: "cpu,webgpu" },
    rounds: { type: "string", default: "3" },
    quiet: { type: "string", default: "20000" },
    // Another shipped model than the page's default (the CNN, say).
    weights: { type: "string" },
  },
});
const weights = options.weights ? `weights=${encodeURIComponent(options.weights)}` : "";
/** Pointer input on the pad and the moments the prediction card stops being busy. */
const STROKE_WATCH = `(() => {
  window.__inputs = [];
  window.__idle = [];
  addEventListener("pointerdown", (e) => window.__inputs.push(e.timeStamp), true);
  addEventListener("pointermove", (e) => { if (e.buttons) window.__inputs.push(e.timeStamp); }, true);
  new MutationObserver((changes) => {
    for (const change of changes) {
      if (change.target.getAttribute("data-busy") === "false") window.__idle.push(performance.now());
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-busy"] });
})();`;

const percentile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? +sorted[Math.round((sorted.length - 1) * q)].toFixed(1) : null;
};

const server = await serve(DIST);
const browser = await launch();
for (const backend of options.backends.split(",")) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await countGpu(page);
  await page.addInitScript(STROKE_WATCH);
  const lab = new LabPage(page);
  const started = Date.now();
  const query = [backend === "auto" ? "" : `backend=${backend}`, weights].filter(Boolean).join("&");
  await lab.open(query ? `${server.url}?${query}` : server.url);
  const ready = Date.now() - started;
  const atReady = await gpuCounts(page);
  // The page's own start-up work (the attention-distance batch, a backend trial) ends first:
  // the GPU waits seconds on SwiftShader between a slice's dispatches and its readback, so the
  // counts must stand still for longer than that.
  const settled = await settleGpu(page, { quiet: Number(options.quiet) });
  const runsBefore = await lab.classifications();
  const strokeEnds = [];
  for (let round = 0; round < Number(options.rounds); round++) {
    await lab.clear();
    await page.evaluate(() => { window.__inputs = []; window.__idle = []; });
    await lab.stroke(ZERO);
    await lab.settledPrediction();
    const latency = await page.evaluate(() => {
      const last = Math.max(...window.__inputs);
      const idle = window.__idle.find((t) => t > last);
      return idle === undefined ? null : idle - last;
    });
    if (latency !== null) strokeEnds.push(latency);
  }
  const drawn = await gpuCounts(page);
  const runs = (await lab.classifications()) - runsBefore;
  const delta = gpuDelta(settled, drawn);
  const perClassification = Object.fromEntries(Object.entries(delta).map(([k, v]) => [k, +(v / runs).toFixed(2)]));
  const latency = await lab.byTestId("latency").textContent();
  const [p50, p95] = [...latency.matchAll(/p(?:50|95) ([\d.]+) ms/g)].map((m) => Number(m[1]));
  const timings = (await lab.byTestId("backend-timings").count()) ? await lab.byTestId("backend-timings").textContent() : null;
  console.log(JSON.stringify({
    asked: backend,
    weights: options.weights ?? "default",
    backend: await lab.backend(),
    backend_timings: timings,
    load_to_model_ready_ms: ready,
    gpu_at_model_ready: atReady.total,
    gpu_start_up: settled.total,
    classifications: runs,
    gpu_per_classification: perClassification,
    latency_p50_ms: p50,
    latency_p95_ms: p95,
    stroke_end_ms: strokeEnds.map((v) => +v.toFixed(1)),
    stroke_end_p50_ms: percentile(strokeEnds, 0.5),
  }));
  await context.close();
}
await browser.close();
server.close();
