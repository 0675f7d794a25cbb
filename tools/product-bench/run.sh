#!/usr/bin/env bash
# Benchmark (not a test): the worker's SIMD128 product against gemm at the seed's shapes,
# natively and in headless Chromium, where it runs twice: as the `worker` binary builds it (a
# multiply and an add) and as `worker_fma` does (relaxed SIMD's fused `f32x4.relaxed_madd`).
# One JSON line per shape and round. Run on a quiet machine, after scripts/test.sh has installed
# the tools (wasm-bindgen-cli, the e2e modules).
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --offline
./target/release/product-bench
# Built twice: without and with `fused-madd` (which calls `use_tile`, as `worker_fma` does).
for variant in simd128 relaxed; do
  features=()
  [[ $variant == relaxed ]] && features=(--features fused-madd)
  RUSTFLAGS="-C target-feature=+simd128" cargo build --release --offline --lib \
    --target wasm32-unknown-unknown "${features[@]}"
  wasm-bindgen --target web --no-typescript --out-dir "pkg/$variant" \
    target/wasm32-unknown-unknown/release/product_bench.wasm
done
cat > pkg/index.html <<'HTML'
<!doctype html><script type="module">
window.benches = {};
for (const variant of ["simd128", "relaxed"]) {
  const bench = await import(`./${variant}/product_bench.js`);
  await bench.default();
  window.benches[variant] = bench;
}
</script>
HTML
(cd ../../tests/e2e && node bench-products.mjs "$PWD/../../tools/product-bench/pkg")
