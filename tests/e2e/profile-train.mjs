// Profile (not a test): where the training worker spends its time on the CPU backend. Presses
// Train with a preset, records V8's sampling profiler in every thread through Chromium's
// tracing for `--seconds`, and prints each worker thread's self time per function (the training
// worker and, on a machine with two cores or more, its helper, which computes half of each step).
//
// A release build strips the wasm's function names, so every frame would read
// `wasm-function[N]`; for names, link the worker without stripping and put it in a copy of
// the build (nothing else is rebuilt):
//   cargo rustc --profile web --target wasm32-unknown-unknown --bin worker_fma \
//     --features gpu -- -C strip=none
//   cp -r dist /tmp/named && wasm-bindgen --target no-modules --no-typescript \
//     --out-dir /tmp/named --out-name worker_fma target/wasm32-unknown-unknown/web/worker_fma.wasm
// (Chromium has relaxed SIMD, so the page starts `worker_fma`, the worker with fused
// multiply-adds; the plain `worker` is WebKit's.)
//   (cd tests/e2e && VITLAB_DIST=/tmp/named node profile-train.mjs [--preset seed] [--seconds 30]
//      [--cpu-workers N])
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DIST, LabPage, launch, numberIn, serve, until } from "./support.mjs";

const { values: options } = parseArgs({
  options: {
    preset: { type: "string", default: "seed" },
    seconds: { type: "string", default: "30" },
    top: { type: "string", default: "40" },
    // The page's own count (one per core) unless given: `1` profiles one worker alone.
    "cpu-workers": { type: "string" },
  },
});
const server = await serve(DIST);
const browser = await launch();
const page = await browser.newPage();
const lab = new LabPage(page);
const asked = options["cpu-workers"] ? `&cpu-workers=${options["cpu-workers"]}` : "";
await lab.open(`${server.url}?backend=cpu${asked}#train`);
await page.waitForTimeout(5000);
await page.locator('[data-testid="training-panel"] select').first().selectOption(options.preset);
await lab.byTestId("train-button").click();
await until(() => numberIn(lab, "training-step"), (s) => s >= 5, { timeout: 600_000, what: "step 5" });
await browser.startTracing(page, { categories: ["disabled-by-default-v8.cpu_profiler", "__metadata"] });
const firstStep = await numberIn(lab, "training-step");
await page.waitForTimeout(Number(options.seconds) * 1000);
const lastStep = await numberIn(lab, "training-step");
const rate = await numberIn(lab, "images-per-second");
const trace = JSON.parse((await browser.stopTracing()).toString());
await browser.close();
server.close();

const events = trace.traceEvents ?? trace;
const threadNames = new Map(
  events.filter((e) => e.name === "thread_name").map((e) => [`${e.pid}:${e.tid}`, e.args.name]),
);
// A profile's chunks carry its call-tree nodes and its samples (node ids, time deltas in µs).
const profiles = new Map();
for (const event of events) {
  if (event.name !== "Profile" && event.name !== "ProfileChunk") continue;
  const key = `${event.pid}:${event.id}`;
  const profile = profiles.get(key) ?? { thread: `${event.pid}:${event.tid}`, nodes: new Map(), samples: [], deltas: [] };
  const data = event.args?.data ?? {};
  for (const node of data.cpuProfile?.nodes ?? []) profile.nodes.set(node.id, node);
  profile.samples.push(...(data.cpuProfile?.samples ?? []));
  profile.deltas.push(...(data.timeDeltas ?? []));
  profiles.set(key, profile);
}
const workers = [...profiles.values()].filter((p) => /worker/i.test(threadNames.get(p.thread) ?? ""));
if (!workers.length) throw new Error(`no worker thread among ${[...new Set(threadNames.values())].join(", ")}`);

/** The wasm's function names by index (its `name` section; V8 reports only the index). */
function functionNames(wasm) {
  const names = new Map();
  const leb = (at) => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = wasm[at.i++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (byte < 0x80) return value;
    }
  };
  const at = { i: 8 };
  while (at.i < wasm.length) {
    const id = wasm[at.i++];
    const size = leb(at);
    const end = at.i + size;
    if (id === 0) {
      const nameLength = leb(at);
      const name = wasm.subarray(at.i, at.i + nameLength).toString();
      at.i += nameLength;
      while (name === "name" && at.i < end) {
        const sub = wasm[at.i++];
        const subEnd = leb(at) + at.i;
        if (sub === 1) {
          for (let count = leb(at); count > 0; count--) {
            const index = leb(at);
            const length = leb(at);
            names.set(index, wasm.subarray(at.i, at.i + length).toString());
            at.i += length;
          }
        }
        at.i = subEnd;
      }
    }
    at.i = end;
  }
  return names;
}
const wasmNames = functionNames(await readFile(join(DIST, "worker_fma_bg.wasm")));

/** A Rust symbol without its hash (the linker writes the name section demangled). */
const readable = (name) => name.replace(/::h[0-9a-f]{16}$/, "");

console.log(
  JSON.stringify({
    preset: options.preset,
    seconds: Number(options.seconds),
    steps: lastStep - firstStep,
    images_per_second: rate,
  }),
);
for (const worker of workers) {
  const self = new Map();
  let total = 0;
  worker.samples.forEach((id, i) => {
    const frame = worker.nodes.get(id)?.callFrame;
    const indexed = /^wasm-function\[(\d+)\]$/.exec(frame?.functionName ?? "");
    const raw = indexed ? (wasmNames.get(Number(indexed[1])) ?? indexed[0]) : frame?.functionName;
    const name = frame ? readable(raw || `(${frame.url || "anonymous"})`) : "(unknown)";
    const micros = worker.deltas[i + 1] ?? 0;
    self.set(name, (self.get(name) ?? 0) + micros);
    total += micros;
  });
  console.log(`\n${threadNames.get(worker.thread)} ${worker.thread}: ${Math.round(total / 1000)} ms sampled`);
  for (const [name, micros] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(options.top))) {
    console.log(`${((100 * micros) / total).toFixed(1).padStart(5)} %  ${name}`);
  }
}
