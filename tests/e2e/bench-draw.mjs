// Benchmark (not a test): page load to model-ready, drawing-to-prediction latency, and what
// reaches the GPU (dispatches, submits, readbacks, pipelines) at start-up and per
// classification, on each backend. Run after `trunk build --release`:
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
const server = await serve(DIST);
const browser = await launch();
for (const backend of options.backends.split(",")) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await countGpu(page);
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
  for (let round = 0; round < Number(options.rounds); round++) {
    await lab.clear();
    await lab.stroke(ZERO);
    await lab.settledPrediction();
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
  }));
  await context.close();
}
await browser.close();
server.close();
