#!/usr/bin/env bash
# Installs what is missing, then runs every check: format, native tests (with the PyTorch
# parity test), the release page build, the browser tests in headless Chromium, and the
# end-to-end tests of the built page.
# Set VITLAB_LINT=1 to add clippy for both targets (two more dependency checks).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

started=$(date +%s)
step() { printf '\n\033[1m== %s\033[0m (%ss)\n' "$*" $(( $(date +%s) - started )); }

step "cargo fmt --check"
cargo fmt --all -- --check

if [[ "${VITLAB_LINT:-0}" == 1 ]]; then
  step "clippy (native, wasm32)"
  cargo clippy --release --all-targets -- -D warnings
  cargo clippy --release --target wasm32-unknown-unknown --lib --bins --tests -- -D warnings
fi

step "native tests"
cargo test --release

step "trunk build --release (offline)"
trunk build --release
size() { echo "$(du -cb "$@" | tail -1 | cut -f1) bytes raw, $(cat "$@" | gzip -9 | wc -c) bytes gzip"; }
echo "page (wasm + js + css): $(size dist/vitlab-*.wasm dist/vitlab-*.js dist/*.css)"
echo "training worker, fetched on Train (wasm + js): $(size dist/trainer*.wasm dist/trainer*.js)"

step "browser tests (headless Chromium, WebGPU on SwiftShader and the CPU backend)"
export CHROMEDRIVER="${CHROMEDRIVER:-$(command -v chromedriver)}"
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-180}"
cargo test --release --target wasm32-unknown-unknown --test web

step "end-to-end tests (playwright-core driving Debian's Chromium on the release build)"
(cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error && npm test)

step "all checks passed"
