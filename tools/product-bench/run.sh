#!/usr/bin/env bash
# Benchmark (not a test): the worker's SIMD128 product against gemm at the seed's shapes,
# natively and in headless Chromium; one JSON line per shape and round. Run on a quiet machine,
# after scripts/test.sh has installed the tools (wasm-bindgen-cli, the e2e node modules).
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --offline
./target/release/product-bench
RUSTFLAGS="-C target-feature=+simd128" cargo build --release --offline --lib \
  --target wasm32-unknown-unknown
wasm-bindgen --target web --no-typescript --out-dir pkg \
  target/wasm32-unknown-unknown/release/product_bench.wasm
cat > pkg/index.html <<'HTML'
<!doctype html><script type="module">
import init, * as bench from "./product_bench.js";
await init();
window.bench = bench;
</script>
HTML
(cd ../../tests/e2e && node bench-products.mjs "$PWD/../../tools/product-bench/pkg")
