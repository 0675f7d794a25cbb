// The page's main thread during a first load, from Chromium's own trace (not a test file, a
// figure to read beside Lighthouse's): the release build served as static hosts serve it, the
// page's CPU slowed 4× as Lighthouse's mobile mode does, loaded until the model is ready and
// the page has been quiet a while. Prints every main-thread task of 50 ms or more with what
// filled it, and the blocking time of the whole load (each task's time past 50 ms, after the
// first contentful paint). Lighthouse's default mode simulates a phone from an unslowed load and
// only counts up to its "interactive" point; this counts every task, wherever a worker's fetch
// puts it.
//   (cd tests/e2e && node long-tasks.mjs [--dist DIR] [--runs 3])
import { parseArgs } from "node:util";
import { DIST, launch, serve } from "./support.mjs";

const { values: options } = parseArgs({
  options: { dist: { type: "string", default: DIST }, runs: { type: "string", default: "1" } },
});
const SLOWDOWN = 4;
const LONG_MS = 50;
/** How long the page is watched once its model is ready: the parts below come in when quiet. */
const AFTER_READY_MS = 6_000;

const server = await serve(options.dist, { staticHost: true });
const browser = await launch();
const totals = [];
try {
  for (let run = 1; run <= Number(options.runs); run++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: SLOWDOWN });
    const events = [];
    cdp.on("Tracing.dataCollected", (e) => events.push(...e.value));
    const complete = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
    await cdp.send("Tracing.start", {
      categories: "devtools.timeline,disabled-by-default-devtools.timeline,v8,v8.wasm,loading",
      transferMode: "ReportEvents",
    });
    await page.goto(server.url);
    await page.locator('[data-testid="model-ready"]').waitFor({ timeout: 120_000 });
    await page.waitForTimeout(AFTER_READY_MS);
    await cdp.send("Tracing.end");
    await complete;
    await context.close();

    const names = new Map(events.filter((e) => e.name === "thread_name").map((e) => [`${e.pid}:${e.tid}`, e.args.name]));
    const paint = events.find((e) => e.name === "firstContentfulPaint");
    const main = paint ? `${paint.pid}:${paint.tid}` : [...names].find(([, name]) => name === "CrRendererMain")?.[0];
    const tasks = events.filter((e) => e.name === "RunTask" && `${e.pid}:${e.tid}` === main && e.dur >= LONG_MS * 1000);
    const start = Math.min(...events.filter((e) => e.ts > 0 && `${e.pid}:${e.tid}` === main).map((e) => e.ts));
    let blocking = 0;
    for (const task of tasks) {
      const inside = events.filter((e) => e.pid === task.pid && e.tid === task.tid && e.dur && e !== task && e.ts >= task.ts && e.ts < task.ts + task.dur);
      const by = new Map();
      for (const e of inside) by.set(e.name, (by.get(e.name) ?? 0) + e.dur);
      const what = [...by].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([n, d]) => `${n} ${Math.round(d / 1000)}`).join(", ");
      const after = !paint || task.ts >= paint.ts;
      if (after) blocking += task.dur / 1000 - LONG_MS;
      console.log(`run ${run}: ${Math.round((task.ts - start) / 1000)} ms, ${Math.round(task.dur / 1000)} ms${after ? "" : " (before the first paint)"}: ${what}`);
    }
    totals.push(Math.round(blocking));
    console.log(JSON.stringify({ run, slowdown: SLOWDOWN, long_tasks: tasks.length, blocking_ms: Math.round(blocking) }));
  }
} finally {
  await browser.close();
  server.close();
}
const sorted = [...totals].sort((a, b) => a - b);
console.log(JSON.stringify({ runs: totals.length, median_blocking_ms: sorted[Math.floor((sorted.length - 1) / 2)] }));
