// Benchmark (not a test): the browser half of tools/product-bench/run.sh, which builds the
// page it serves: the worker's SIMD128 product at each of the seed's shapes, three rounds.
import { launch, serve } from "./support.mjs";

const server = await serve(process.argv[2]);
const browser = await launch();
const page = await browser.newPage();
await page.goto(`${server.url}index.html`);
await page.waitForFunction(() => window.bench);
const shapes = await page.evaluate(() => window.bench.shape_count());
// V8 runs a function first as compiled quickly and later optimised: the last rounds show the latter.
for (let round = 1; round <= 5; round++) {
  for (let index = 0; index < shapes; index++) {
    const [rate, [layout, m, k, n]] = await page.evaluate(
      (i) => [window.bench.simd128_rate(i), Array.from(window.bench.shape_of(i))],
      index,
    );
    console.log(JSON.stringify({ side: "chromium", round, layout, m, k, n, simd128_gmacs: Number(rate.toFixed(1)) }));
  }
}
await browser.close();
server.close();
