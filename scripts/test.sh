#!/usr/bin/env bash
# Installs what is missing, then runs every check: format, native tests (with the PyTorch
# parity test), the release page build, the browser tests in headless Chromium, and the
# end-to-end tests of the built page (in Chromium, in Firefox: firefox.test.mjs, and in WebKit:
# webkit.test.mjs), and Lighthouse's scores of the first load.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's name and start; the table of their times is printed at the end, or where a
# step fails.
started=$(date +%s)
names=("setup (scripts/setup.sh --test)")
starts=("$started")
step() {
  names+=("$*")
  starts+=("$(date +%s)")
  printf '\n\033[1m== %s\033[0m (%ss)\n' "$*" $(( $(date +%s) - started ))
}
times() {
  local status=$? now i next
  now=$(date +%s)
  printf '\n%-72s %8s\n' "step" "seconds"
  for i in "${!names[@]}"; do
    next=${starts[$((i + 1))]:-$now}
    printf '%-72.72s %8s\n' "${names[$i]}" $(( next - starts[i] ))
  done
  printf '%-72s %8s\n' "in all$([ "$status" -eq 0 ] || echo ", failed (exit $status)")" $(( now - started ))
}
trap times EXIT

scripts/setup.sh --test
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

step "cargo fmt --check"
cargo fmt --all -- --check

# Cargo.toml's [lints] table sets the levels; any warning fails the run.
step "clippy (native with the GPU, wasm32)"
# Natively, `gpu` adds to the default features, so one pass covers the code of both (a second,
# without it, checked Burn's crates again for the three stubs `vit` has without a GPU, which the
# native tests' build compiles); it also checks what ships but the tests never build natively:
# `vit --device gpu` and the GPU tests in tests/native (burn-wgpu on Vulkan).
cargo clippy --release --all-targets --features gpu -- -D warnings
# The worker and the browser tests (training, WebGPU), and the page's own build (neither).
cargo clippy --release --target wasm32-unknown-unknown --features gpu --lib --bins --tests -- -D warnings
cargo clippy --release --target wasm32-unknown-unknown --no-default-features --lib --bin vitlab -- -D warnings

step "native tests"
cargo test --release

step "trunk build --release (offline)"
trunk build --release
size() { echo "$(du -cb "$@" | tail -1 | cut -f1) bytes raw, $(cat "$@" | gzip -9 | wc -c) bytes gzip"; }
echo "page (wasm + js + css): $(size dist/vitlab-*.wasm dist/vitlab-*.js dist/*.css)"
echo "drawing worker's script (it runs the page's own wasm): $(size dist/drawer.js)"
echo "worker, fetched on Train or for WebGPU (wasm + js): $(size dist/worker*.wasm dist/worker*.js)"
echo "explaining worker, fetched on the first explanation (wasm + js): $(size dist/explainer*.wasm dist/explainer*.js)"
# The worker is the largest download (Train fetches it): held at 3 MB gzip.
worker_gzip=$(cat dist/worker*.wasm dist/worker*.js | gzip -9 | wc -c)
if [ "$worker_gzip" -gt 3000000 ]; then
  echo "the worker is $worker_gzip bytes gzip, over the 3,000,000 it may take" >&2
  exit 1
fi

step "Lighthouse 12 (the release build served as static hosts serve it): fails on CLS > 0.1 or a median mobile TBT > 600 ms"
# Here, on a machine the builds have just left quiet: run after the end-to-end tests, the same
# build measured 795 ms median mobile TBT where it measures 445-530 alone. Five mobile runs:
# the median of three still swung by 250 ms.
(cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error \
  && node lighthouse.mjs --gate --modes mobile --runs 5 && node lighthouse.mjs --gate --modes desktop --runs 1)

step "browser tests (headless Chromium, WebGPU on SwiftShader and the CPU backend)"
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver)}"
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-180}"
# The profile and features of Trunk's worker build, so the tests run what ships and Burn is
# compiled once for both.
cargo test --profile web --target wasm32-unknown-unknown --features gpu --test web

step "end-to-end tests (playwright-core driving Debian's Chromium, puppeteer-core its Firefox ESR, selenium-webdriver its WebKitGTK, on the release build)"
# `npm test` runs every *.test.mjs, firefox.test.mjs and webkit.test.mjs with them, one file at
# a time: that keeps the 2-core machine's CPU 51 % busy (1,543 s). Two at a time took 1,008 s
# (83 % busy), but in two runs a different test timed out each time under the load (a tab's
# Train never left "idle" in 120 s): not yet safe for CI. CHROMIUM, FIREFOX and MINIBROWSER
# override the browsers' paths.
(cd tests/e2e && npm test)

printf '\n\033[1mall checks passed\033[0m\n'
