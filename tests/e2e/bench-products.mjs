// Benchmark (not a test): the browser half of tools/product-bench/run.sh, which builds the
// page it serves: the worker's product at each of the seed's shapes, as `worker` builds it
// (SIMD128) and as `worker_fma` does (relaxed SIMD's fused multiply-add), in turn, five rounds.
import { launch, serve } from "./support.mjs";

const server = await serve(process.argv[2]);
const browser = await launch();
const page = await browser.newPage();
await page.goto(`${server.url}index.html`);
await page.waitForFunction(() => window.benches?.relaxed);
const shapes = await page.evaluate(() => window.benches.simd128.shape_count());
// V8 runs a function first as compiled quickly and later optimised: the last rounds show the latter.
for (let round = 1; round <= 5; round++) {
  for (let index = 0; index < shapes; index++) {
    const [simd128, relaxed, [layout, m, k, n]] = await page.evaluate(
      (i) => [
        window.benches.simd128.product_rate(i),
        window.benches.relaxed.product_rate(i),
        Array.from(window.benches.simd128.shape_of(i)),
      ],
      index,
    );
    const gmacs = (rate) => Number(rate.toFixed(1));
    console.log(
      JSON.stringify({ side: "chromium", round, layout, m, k, n, simd128_gmacs: gmacs(simd128), relaxed_madd_gmacs: gmacs(relaxed) }),
    );
  }
}
await browser.close();
server.close();
