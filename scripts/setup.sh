#!/usr/bin/env bash
# Installs what vitlab needs and is missing; a second run skips what is there.
#   scripts/setup.sh          toolchain for building and serving the page
#   scripts/setup.sh --test   plus Chromium and its driver, Firefox ESR, and WebKitGTK's driver
#                             with Xvfb, for the browser tests
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
want_test=false
[[ "${1:-}" == "--test" ]] && want_test=true

say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  ((${#missing[@]})) || return 0
  say "apt-get install ${missing[*]}"
  local sudo=""
  [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

command -v rustup >/dev/null || {
  echo "Rust must be installed with rustup (https://rustup.rs): the wasm32 target and Rust 1.95 come from it" >&2
  exit 1
}
# Cargo links with the system C compiler, and trunk's dependencies compile C.
command -v cc >/dev/null || apt_install build-essential

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt

# npm brings binaryen below (and playwright-core for the tests, which needs Node.js 20 or newer):
# installed first, as apt takes one install at a time.
command -v npm >/dev/null || apt_install nodejs npm

# The two tools compile side by side, and beside apt's downloads and unpacking for the tests.
# With Debian's packages already there this gains little (a fresh CARGO_HOME on this 2-core
# machine: 521 s one after the other, 511 s side by side: cargo already keeps both cores
# busy); apt's downloads, where it must install the browsers, wait on the network meanwhile.
jobs=()
if $want_test; then
  (
    apt_install chromium chromium-driver
    # firefox.test.mjs drives Debian's Firefox ESR through puppeteer-core (WebDriver BiDi).
    apt_install firefox-esr
    # webkit.test.mjs drives WebKitGTK's MiniBrowser through its WebKitWebDriver; MiniBrowser
    # has no headless mode, so it runs on Xvfb (xvfb-run needs xauth, which apt only
    # recommends).
    apt_install webkit2gtk-driver xvfb xauth
  ) &
  jobs+=($!)
fi

if [[ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]]; then
  say "cargo install trunk@$TRUNK_VERSION"
  # Without the fat LTO and single code unit trunk's own release profile asks for: trunk only
  # runs cargo and wasm-bindgen, and the LTO link alone held one core for minutes. Unoptimised
  # (opt-level 0): both tools side by side took 702 s into an empty target on this 2-core
  # machine, 388 s so, and a release build of the page with it took no longer (58-69 s warm,
  # all three trunks within the run-to-run spread). Without its default features (a TLS stack,
  # and asking crates.io for a newer trunk): Trunk.toml keeps it offline and `trunk serve`
  # serves plain HTTP on 127.0.0.1, so neither is ever used.
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_OPT_LEVEL=0 \
    cargo install --quiet --locked --no-default-features "trunk@$TRUNK_VERSION" &
  jobs+=($!)
fi

# wasm-bindgen's CLI must be exactly the library version in Cargo.lock.
bindgen_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
if [[ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $bindgen_version" ]]; then
  say "cargo install wasm-bindgen-cli@$bindgen_version"
  # Not --locked: one of its locked dependencies is missing from the registry. Without its
  # default TLS stack: the test runner speaks plain HTTP to chromedriver on this machine. At
  # opt-level 1, which binds the 14 MB worker as fast as 3 does (2.30 s, 2.41 s) and compiles
  # in 357 s where 3 took 401 (beside trunk, above).
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 \
    cargo install --quiet --force --no-default-features "wasm-bindgen-cli@$bindgen_version" &
  jobs+=($!)
fi

# wasm-opt for the release build (index.html, scripts/stamp.sh): binaryen 132 from npm, beside
# the cargo tools (Debian's binaryen 108 breaks the page and cannot read relaxed SIMD).
BINARYEN_VERSION=132
if [[ "$(wasm-opt --version 2>/dev/null)" != "wasm-opt version $BINARYEN_VERSION "* ]]; then
  (
    binaryen="${CARGO_HOME:-$HOME/.cargo}/binaryen-$BINARYEN_VERSION"
    say "npm install binaryen@$BINARYEN_VERSION"
    npm install --prefix "$binaryen" --no-audit --no-fund --loglevel=error "binaryen@$BINARYEN_VERSION"
    mkdir -p "${CARGO_HOME:-$HOME/.cargo}/bin"
    ln -sf "$binaryen/node_modules/.bin/wasm-opt" "${CARGO_HOME:-$HOME/.cargo}/bin/wasm-opt"
  ) &
  jobs+=($!)
fi

# Each job's failure fails the setup (`wait PID` gives the job's status).
for job in "${jobs[@]}"; do wait "$job"; done

# Every crate Cargo.lock names, for every target: Trunk runs cargo offline (Trunk.toml), and
# serve.sh's first build (the page alone) would leave the workers' crates unfetched.
cargo fetch --locked --quiet

if $want_test; then
  # (puppeteer-core 25 declares Node.js 22.12 or newer; it runs the Firefox test on Debian 13's
  # Node.js 20, with a warning from npm.)
  node_major=$(node --version 2>/dev/null | sed 's/^v\([0-9]*\).*/\1/')
  if ((${node_major:-0} < 20)); then
    echo "Node.js ${node_major:-(none)} is too old for the end-to-end tests: they need 20 or newer" \
      "(Debian 13 has it; on Debian 12 use NodeSource's nodejs)" >&2
    exit 1
  fi
fi
say "ready"
