// Benchmark (not a test): the same three figures in each browser engine, on the CPU backend
// (the one every engine has): page load to model-ready (median of `--loads`), drawing latency
// p50/p95 as the page's own line reports it over `--drawings` drawings, and training images/s
// (the median of the rate's second half over `--seconds` of the seed preset, the worker and
// its helper). Run after `trunk build --release`:
//   (cd tests/e2e && npm ci && node bench-engines.mjs [--engines chromium,firefox,webkit]
//    [--loads 3] [--drawings 20] [--seconds 60])
// One JSON line per engine.
import { parseArgs } from "node:util";
import { DIST, ONE, ZERO, launch, serve, until } from "./support.mjs";
import { PageLab } from "./engine-lab.mjs";
import { FirefoxLab, launchFirefox } from "./firefox-support.mjs";
import { RECORDER, WebKitLab, launchWebKit } from "./webkit-support.mjs";

const { values: options } = parseArgs({
  options: {
    engines: { type: "string", default: "chromium,firefox,webkit" },
    loads: { type: "string", default: "3" },
    drawings: { type: "string", default: "20" },
    seconds: { type: "string", default: "60" },
  },
});

/** Chromium's page (playwright, whose `evaluate` takes one argument) as a [`PageLab`], so that
 * every engine is measured alike. */
class ChromiumLab extends PageLab {
  async evaluate(fn, ...args) {
    return this.page.evaluate(([source, args]) => (0, eval)(`(${source})`)(...args), [fn.toString(), args]);
  }
}

/** Per engine: its browser, and a fresh lab (not yet at a page) in it. */
const ENGINES = {
  chromium: { launch, lab: async (browser) => new ChromiumLab(await browser.newPage()) },
  firefox: { launch: launchFirefox, lab: async (browser) => new FirefoxLab(await browser.newPage()) },
  webkit: { launch: launchWebKit, lab: async (browser) => new WebKitLab(browser) },
};

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The recorder in every page keeps the engines' pages alike (WebKit's tests need it).
const server = await serve(DIST, { headScript: RECORDER });
for (const name of options.engines.split(",")) {
  const engine = ENGINES[name];
  const browser = await engine.launch();
  try {
    const loads = [];
    for (let i = 0; i < Number(options.loads); i++) {
      const lab = await engine.lab(browser);
      const started = Date.now();
      await lab.goto(`${server.url}?backend=cpu`);
      await lab.waitFor("model-ready", 300_000);
      loads.push(Date.now() - started);
      await lab.close();
    }

    const lab = await engine.lab(browser);
    await lab.goto(`${server.url}?backend=cpu`);
    await lab.waitFor("model-ready", 300_000);
    for (let i = 0; i < Number(options.drawings); i++) {
      await lab.stroke(i % 2 ? ZERO : ONE);
      await lab.settledPrediction();
      await lab.clear();
    }
    const line = await lab.text("latency");
    const [p50, p95] = [...line.matchAll(/p(?:50|95) ([\d.]+) ms/g)].map((m) => Number(m[1]));
    await lab.close();

    const trainer = await engine.lab(browser);
    await trainer.goto(`${server.url}?backend=cpu&preset=seed#train`);
    await trainer.waitFor("model-ready", 300_000);
    await trainer.click("train-button");
    await until(() => trainer.number("training-step"), (s) => s >= 1, { what: "the first step", timeout: 300_000 });
    const rates = [];
    const deadline = Date.now() + Number(options.seconds) * 1000;
    while (Date.now() < deadline) {
      await sleep(1000);
      rates.push(await trainer.number("images-per-second"));
    }
    await trainer.click("stop-button");
    await trainer.close();
    const settled = rates.slice(Math.floor(rates.length / 2)).filter(Number.isFinite);
    console.log(JSON.stringify({
      engine: name,
      load_to_ready_ms: median(loads),
      loads_ms: loads,
      drawing_p50_ms: p50,
      drawing_p95_ms: p95,
      latency_line: line,
      images_per_second: settled.length ? median(settled) : null,
    }));
  } finally {
    await browser.close();
  }
}
server.close();
