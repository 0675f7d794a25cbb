#!/usr/bin/env bash
# Benchmark (not a test): the worker's SIMD128 product against gemm at the seed's shapes,
# natively and in headless Chromium, where it runs twice: as the worker builds it (a multiply and
# an add) and built with relaxed SIMD (a fused multiply-add, `f32x4.relaxed_madd`, which no
# browser build of the app enables yet). One JSON line per shape and round. Run on a quiet
# machine, after scripts/test.sh has installed the tools (wasm-bindgen-cli, the e2e modules).
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --offline
./target/release/product-bench
# Built the same way twice but for the target features, each in a target directory of its own.
for variant in simd128 relaxed; do
  features=+simd128
  [[ $variant == relaxed ]] && features=+simd128,+relaxed-simd
  RUSTFLAGS="-C target-feature=$features" cargo build --release --offline --lib \
    --target wasm32-unknown-unknown --target-dir "target/$variant"
  wasm-bindgen --target web --no-typescript --out-dir "pkg/$variant" \
    "target/$variant/wasm32-unknown-unknown/release/product_bench.wasm"
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
