// Benchmark (not a test): training in the page, per backend. Presses Train with a preset and
// reports images/s once the rate settles, time from the press to each test evaluation (and to
// a target accuracy if reached), the main thread's long tasks meanwhile, and what reaches the
// GPU (in the page and its workers): from the press to step 2, and per step once running. Run
// after
// `trunk build --release`:
//   (cd tests/e2e && npm ci && node bench-train.mjs [--preset seed|lab] [--seconds 90]
//        [--backends cpu,webgpu] [--cpu-workers 1,2,3,4] [--target 0.98] [--batch-size N])
// `--cpu-workers 1,2,3,4` measures the CPU once per count, one after the other: in N workers
// (`?cpu-workers=N`: the training worker and N − 1 helpers); `auto` leaves it to the page (one
// per core). Each line says the workers the panel showed.
import { parseArgs } from "node:util";
import { DIST, LabPage, countGpu, gpuCounts, gpuDelta, launch, numberIn, serve, settleGpu, until, watchLongTasks } from "./support.mjs";

const { values: options } = parseArgs({
  options: {
    preset: { type: "string", default: "seed" },
    seconds: { type: "string", default: "90" },
    backends: { type: "string", default: "cpu,webgpu" },
    target: { type: "string", default: "0.98" },
    // A smaller batch takes more steps in the same time on a slow (software) GPU, so the
    // per-step GPU counts average over more steps; they do not depend on the batch size.
    "batch-size": { type: "string" },
    "cpu-workers": { type: "string", default: "auto" },
  },
});
const server = await serve(DIST);
const browser = await launch();
const runs = options.backends.split(",").flatMap((backend) =>
  backend === "cpu" ? options["cpu-workers"].split(",").map((workers) => ({ backend, workers })) : [{ backend, workers: "" }],
);
for (const { backend, workers } of runs) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await watchLongTasks(page);
  await countGpu(page);
  const lab = new LabPage(page);
  const asked = workers && workers !== "auto" ? `&cpu-workers=${workers}` : "";
  await lab.open(`${server.url}?backend=${backend}${asked}#train`);
  // Let the page finish its own start-up work (the attention-distance batch) first.
  await page.waitForTimeout(5000);
  const idle = await settleGpu(page);
  await page.locator('[data-testid="training-panel"] select').first().selectOption(options.preset);
  if (options["batch-size"]) {
    const batch = page.locator('[data-testid="training-panel"] label', { hasText: "Batch" }).locator("input");
    await batch.fill(options["batch-size"]);
    await batch.dispatchEvent("change");
  }
  const pressed = Date.now();
  const t0 = await page.evaluate(() => performance.now());
  await lab.byTestId("train-button").click();
  const step = () => numberIn(lab, "training-step");
  const secondStep = await until(step, (s) => s >= 2, { timeout: 600_000, every: 50, what: "step 2" });
  const toSecondStep = gpuDelta(idle, await gpuCounts(page));
  const fromStep = await until(step, (s) => s >= 5, { timeout: 600_000, what: "step 5" });
  const fromCounts = await gpuCounts(page);
  const firstStep = Date.now() - pressed;
  const rates = [];
  const evaluations = [];
  let reached = null;
  const deadline = Date.now() + Number(options.seconds) * 1000;
  while (Date.now() < deadline) {
    await page.waitForTimeout(1000);
    rates.push(await numberIn(lab, "images-per-second"));
    const accuracy = (await numberIn(lab, "test-accuracy")) / 100;
    if (accuracy > 0 && evaluations.at(-1)?.accuracy !== accuracy) {
      evaluations.push({ seconds: (Date.now() - pressed) / 1000, step: await numberIn(lab, "training-step"), accuracy });
      if (reached === null && accuracy >= Number(options.target)) reached = (Date.now() - pressed) / 1000;
    }
  }
  const toStep = await step();
  const workersShown = await lab.cpuWorkers();
  const running = gpuDelta(fromCounts, await gpuCounts(page));
  const perStep = Object.fromEntries(Object.entries(running).map(([k, v]) => [k, +(v / Math.max(1, toStep - fromStep)).toFixed(1)]));
  const settled = rates.slice(Math.floor(rates.length / 2)).filter(Number.isFinite);
  const median = settled.sort((a, b) => a - b)[Math.floor(settled.length / 2)];
  const longTasks = await page.evaluate((t) => window.__longTasks.filter((x) => x.start + x.duration > t), t0);
  console.log(JSON.stringify({
    backend,
    device: await lab.byTestId("run-state").textContent(),
    cpu_workers: backend === "cpu" ? workersShown : undefined,
    preset: options.preset,
    batch_size: options["batch-size"] ?? "preset",
    images_per_second: median,
    first_step_after_ms: firstStep,
    steps: await numberIn(lab, "training-step"),
    gpu_press_to_step: { step: secondStep, ...toSecondStep },
    gpu_per_step: { steps: toStep - fromStep, ...perStep },
    evaluations,
    [`seconds_to_${options.target}`]: reached,
    long_tasks: longTasks.length,
    longest_task_ms: Math.round(Math.max(0, ...longTasks.map((t) => t.duration))),
    long_task_detail: longTasks.map((t) => [Math.round(t.start - t0), Math.round(t.duration)]),
  }));
  await context.close();
}
await browser.close();
server.close();
